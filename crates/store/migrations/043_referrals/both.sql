-- Issue 49, the referrals half (docs/referrals.md). Every customer's
-- referral code (made when first asked for: short, unambiguous, unique).
CREATE TABLE referral_codes (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id),
    code       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

-- Who referred whom: written once, with the referee's sign-up, for good.
-- `matched`: why it earns nothing (the referee's email, phone, reserved
-- account or BVN/NIN is the referrer's), found at sign-up or at a later
-- commission; `voided_at`/`void_reason`: the owner voided it (logged).
-- The finalize reads it by its primary key: one indexed read per purchase.
CREATE TABLE referrals (
    referee_id  TEXT PRIMARY KEY REFERENCES accounts (id),
    referrer_id TEXT NOT NULL,
    code        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    matched     TEXT,
    voided_at   TEXT,
    void_reason TEXT
);
CREATE INDEX referrals_referrer ON referrals (referrer_id, created_at);

-- The owner's commission per product, in hundredths of a percent of what the
-- referee is charged (150: 1.5 %); `days`: only for so many days after the
-- referee's sign-up (NULL: for good). No row: no commission (off by default).
CREATE TABLE referral_rates (
    product      TEXT PRIMARY KEY,
    basis_points BIGINT NOT NULL CHECK (basis_points > 0 AND basis_points <= 10000),
    days         BIGINT CHECK (days > 0),
    updated_at   TEXT NOT NULL
);

-- The programme's other settings, one row: the one-time bonus on a
-- referee's first funding (NULL: none) and the least a referrer moves from
-- the bonus balance to the wallet.
CREATE TABLE referral_settings (
    id                  BIGINT PRIMARY KEY CHECK (id = 1),
    first_funding_bonus BIGINT CHECK (first_funding_bonus > 0),
    min_withdrawal      BIGINT NOT NULL DEFAULT 0 CHECK (min_withdrawal >= 0),
    updated_at          TEXT NOT NULL
);

-- Each commission earned: once per purchase (its code, unique), written in
-- the transaction that makes the purchase successful; `reversed_at`: taken
-- back in the transaction that reversed it.
CREATE TABLE referral_commissions (
    transaction_code TEXT PRIMARY KEY,
    referrer_id      TEXT NOT NULL,
    referee_id       TEXT NOT NULL,
    product          TEXT NOT NULL,
    charged          BIGINT NOT NULL CHECK (charged > 0),
    amount           BIGINT NOT NULL CHECK (amount > 0),
    earned_at        TEXT NOT NULL,
    reversed_at      TEXT
);
CREATE INDEX referral_commissions_referrer ON referral_commissions (referrer_id, earned_at);

-- The bonus balance: a separate balance, never spendable directly, and its
-- own entries (balance_after on each, as the wallet's ledger). It may be
-- negative: a commission taken back after it was moved to the wallet is
-- owed, never taken from the wallet.
CREATE TABLE bonus_balances (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id),
    balance    BIGINT NOT NULL
);
-- kind: `commission` (+, by its purchase's code), `reversal` (−, by the
-- code), `first_funding` (+, by the referee's funding event), `withdrawal`
-- (−, by the customer's reference; its wallet credit has source `referral`
-- and the same reference).
CREATE TABLE bonus_entries (
    id               BIGSERIAL PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    -- comparisons, not an IN list (SQLite's purchase path, 024_checks_as_comparisons)
    kind             TEXT NOT NULL CHECK (kind = 'commission' OR kind = 'reversal'
                                          OR kind = 'first_funding' OR kind = 'withdrawal'),
    amount           BIGINT NOT NULL CHECK (amount <> 0),
    balance_after    BIGINT NOT NULL,
    transaction_code TEXT,
    referee_id       TEXT,
    reference        TEXT,
    created_at       TEXT NOT NULL
);
CREATE INDEX bonus_entries_account ON bonus_entries (account_id, id);
CREATE UNIQUE INDEX bonus_entries_once_per_code ON bonus_entries (kind, transaction_code);
CREATE UNIQUE INDEX bonus_entries_once_per_reference ON bonus_entries (account_id, kind, reference);
