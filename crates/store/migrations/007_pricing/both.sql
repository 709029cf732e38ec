-- Price tiers (issue 20). A tier's rules each apply to a product, optionally
-- narrowed to a provider ('' when not) and a plan ('' when not); `value` is
-- basis points for a discount, kobo for a price or a fee. Accounts on no tier
-- pay list prices (the tier `default`, which is never stored). `pricing_version`
-- moves on every change so running servers reload within a second, as the
-- catalogue does.
CREATE TABLE price_tiers (
    name       TEXT PRIMARY KEY,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE price_rules (
    tier     TEXT NOT NULL REFERENCES price_tiers (name),
    product  TEXT NOT NULL,
    provider TEXT NOT NULL DEFAULT '',
    plan     TEXT NOT NULL DEFAULT '',
    kind     TEXT NOT NULL CHECK (kind IN ('discount_percent', 'price', 'fee')),
    value    BIGINT NOT NULL,
    PRIMARY KEY (tier, product, provider, plan)
);
CREATE TABLE account_tiers (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id),
    tier       TEXT NOT NULL REFERENCES price_tiers (name)
);
CREATE TABLE pricing_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO pricing_version (id, version) VALUES (1, 1);
-- What each purchase was: `amount` stays what was charged (the debit);
-- `face_value` what the recipient gets (NULL before tiers: the amount);
-- `cost` what the supplier charged us (NULL: unknown); `tier` the price tier
-- it was charged at (NULL: list prices).
ALTER TABLE transactions ADD COLUMN face_value BIGINT;
ALTER TABLE transactions ADD COLUMN cost BIGINT;
ALTER TABLE transactions ADD COLUMN tier TEXT;
