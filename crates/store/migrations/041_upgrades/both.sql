-- Issue 49: self-service upgrades. The owner offers a price tier for a
-- one-time fee, optionally only from a KYC level or a spend over the last
-- 30 days; a customer buys one from the wallet.
CREATE TABLE tier_offers (
    tier              TEXT PRIMARY KEY REFERENCES price_tiers (name),
    fee               BIGINT NOT NULL CHECK (fee > 0),
    min_kyc_level     BIGINT CHECK (min_kyc_level BETWEEN 0 AND 2),
    min_monthly_spend BIGINT CHECK (min_monthly_spend > 0),
    updated_at        TEXT NOT NULL
);

-- Each upgrade bought: the tier change, written in the same transaction as
-- its fee's ledger entry (a `debit` whose source is `upgrade` and whose
-- credit_reference is this reference). Once per (account, reference): a
-- double tap or a retry buys once. `refunded_at`: the owner gave the fee
-- back on a downgrade (its ledger credit, source `operator`, reference
-- `upgrade-refund:<id>`).
CREATE TABLE tier_upgrades (
    id          BIGSERIAL PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    reference   TEXT NOT NULL,
    tier        TEXT NOT NULL REFERENCES price_tiers (name),
    tier_before TEXT NOT NULL,
    fee         BIGINT NOT NULL CHECK (fee > 0),
    created_at  TEXT NOT NULL,
    refunded_at TEXT,
    UNIQUE (account_id, reference)
);
CREATE INDEX tier_upgrades_created ON tier_upgrades (created_at);
