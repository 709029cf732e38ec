-- The outbox's sending side (issue 30): addresses a provider refused for
-- good (never retried), and each customer's choices of notices.
CREATE TABLE notice_suppressions (
    channel     TEXT NOT NULL,
    recipient   TEXT NOT NULL,
    reason      TEXT NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (channel, recipient)
);
-- One row per customer who changed a default (no row: every optional notice
-- by email, none by SMS, no low-balance notice). A NULL choice is the default.
CREATE TABLE notice_preferences (
    account_id          TEXT PRIMARY KEY REFERENCES accounts (id),
    phone               TEXT,
    low_balance_below   BIGINT,
    funding_email       BOOLEAN,
    funding_sms         BOOLEAN,
    refund_email        BOOLEAN,
    refund_sms          BOOLEAN,
    receipt_email       BOOLEAN,
    receipt_sms         BOOLEAN,
    low_balance_email   BOOLEAN,
    low_balance_sms     BOOLEAN,
    security_email      BOOLEAN,
    security_sms        BOOLEAN,
    updated_at          TEXT COLLATE "C" NOT NULL
);
CREATE INDEX notices_created ON notices (created_at);
