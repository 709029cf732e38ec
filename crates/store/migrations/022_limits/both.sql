-- KYC levels, limits and the blocklist (issue 32; docs/limits.md).
-- An account's level is a column of its row, so the purchase reads it with
-- the balance. Accounts made before this release were all created by an
-- operator: they start at level 2 (approved by the operator), as new
-- operator-created accounts do by default.
ALTER TABLE accounts ADD COLUMN kyc_level INTEGER NOT NULL DEFAULT 0
    CHECK (kyc_level BETWEEN 0 AND 2);
UPDATE accounts SET kyc_level = 2;
-- How the current level was reached: never a full BVN or NIN, only its last 4 digits.
CREATE TABLE account_kyc (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id),
    method     TEXT NOT NULL,
    last4      TEXT CHECK (last4 IS NULL OR length(last4) = 4),
    reason     TEXT NOT NULL,
    set_by     TEXT NOT NULL,
    set_at     TEXT COLLATE "C" NOT NULL
);
-- Each level's limits (kobo, or a count); NULL: no limit.
CREATE TABLE kyc_levels (
    level               INTEGER PRIMARY KEY CHECK (level BETWEEN 0 AND 2),
    name                TEXT NOT NULL,
    max_purchase        BIGINT,
    daily_value         BIGINT,
    daily_count         BIGINT,
    monthly_value       BIGINT,
    monthly_count       BIGINT,
    max_balance         BIGINT,
    per_recipient_daily BIGINT
);
INSERT INTO kyc_levels VALUES
    (0, 'Email and phone verified', 1000000, 5000000, 20, 30000000, 300, 30000000, 2000000),
    (1, 'BVN or NIN verified', 5000000, 20000000, 100, 300000000, 2000, 50000000, 10000000),
    (2, 'Approved by an owner', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
-- An account's own limits; NULL: its level's.
CREATE TABLE account_limits (
    account_id          TEXT PRIMARY KEY REFERENCES accounts (id),
    max_purchase        BIGINT,
    daily_value         BIGINT,
    daily_count         BIGINT,
    monthly_value       BIGINT,
    monthly_count       BIGINT,
    max_balance         BIGINT,
    per_recipient_daily BIGINT
);
-- What each account spent per Lagos day, and per recipient, kept by the
-- purchase that debits (under the wallet's lock) and given back by its refund.
CREATE TABLE limit_usage (
    account_id TEXT NOT NULL,
    day        TEXT COLLATE "C" NOT NULL,
    value      BIGINT NOT NULL,
    count      BIGINT NOT NULL,
    PRIMARY KEY (account_id, day)
) WITHOUT ROWID;
CREATE TABLE recipient_usage (
    account_id TEXT NOT NULL,
    recipient  TEXT NOT NULL,
    day        TEXT COLLATE "C" NOT NULL,
    value      BIGINT NOT NULL,
    PRIMARY KEY (account_id, recipient, day)
) WITHOUT ROWID;
CREATE TABLE blocklist (
    kind     TEXT NOT NULL CHECK (kind IN ('recipient', 'account')),
    value    TEXT NOT NULL,
    reason   TEXT NOT NULL,
    added_by TEXT NOT NULL,
    added_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, value)
);
