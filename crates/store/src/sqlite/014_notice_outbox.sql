-- The outbox's sending side (issue 30): addresses a provider refused for
-- good (never retried), and each customer's choices of notices.
CREATE TABLE notice_suppressions (
    channel     TEXT NOT NULL,
    recipient   TEXT NOT NULL,
    reason      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (channel, recipient)
);
-- One row per customer who changed a default (no row: every optional notice
-- by email, none by SMS, no low-balance notice). A NULL choice is the default.
CREATE TABLE notice_preferences (
    account_id          TEXT PRIMARY KEY REFERENCES accounts (id),
    phone               TEXT,
    low_balance_below   INTEGER,
    funding_email       INTEGER,
    funding_sms         INTEGER,
    refund_email        INTEGER,
    refund_sms          INTEGER,
    receipt_email       INTEGER,
    receipt_sms         INTEGER,
    low_balance_email   INTEGER,
    low_balance_sms     INTEGER,
    security_email      INTEGER,
    security_sms        INTEGER,
    updated_at          TEXT NOT NULL
);
CREATE INDEX notices_created ON notices (created_at);
