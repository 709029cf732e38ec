-- billpay SQLite schema, version 1. Money is INTEGER kobo; times are unix ms
-- (scheduling) or RFC 3339 text (display).

CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT,
    status        TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
    balance       INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at    TEXT NOT NULL
);

CREATE TABLE api_keys (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts (id),
    name                  TEXT,
    key_hash              TEXT NOT NULL UNIQUE,
    display_prefix        TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('active', 'suspended', 'revoked')),
    rate_per_second       INTEGER,
    rate_burst            INTEGER,
    webhook_url           TEXT,
    webhook_secret_sealed TEXT,
    webhook_retries       INTEGER NOT NULL DEFAULT 0,
    created_at            TEXT NOT NULL,
    last_used_at          TEXT
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- Append-only: every balance change is one row; balance = SUM(amount).
CREATE TABLE ledger (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    amount           INTEGER NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('credit', 'debit', 'refund')),
    balance_after    INTEGER NOT NULL CHECK (balance_after >= 0),
    transaction_code TEXT,
    credit_reference TEXT,
    created_at       TEXT NOT NULL
);
CREATE INDEX ledger_account ON ledger (account_id, id);
CREATE UNIQUE INDEX ledger_one_credit_per_reference ON ledger (account_id, credit_reference)
    WHERE credit_reference IS NOT NULL;
CREATE UNIQUE INDEX ledger_one_refund_per_transaction ON ledger (transaction_code)
    WHERE kind = 'refund';
CREATE TRIGGER ledger_append_only_update BEFORE UPDATE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER ledger_append_only_delete BEFORE DELETE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;

CREATE TABLE transactions (
    code            TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    key_id          TEXT NOT NULL REFERENCES api_keys (id),
    reference       TEXT NOT NULL,
    product         TEXT NOT NULL,
    provider        TEXT NOT NULL,
    plan_id         TEXT,
    label           TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    amount          INTEGER NOT NULL CHECK (amount > 0),
    details         TEXT NOT NULL,
    batch_id        TEXT UNIQUE,
    status          TEXT NOT NULL CHECK (status IN ('processing', 'successful', 'failed')),
    message         TEXT NOT NULL,
    balance_before  INTEGER NOT NULL,
    balance_after   INTEGER NOT NULL,
    result          TEXT NOT NULL DEFAULT '{}',
    attempts        INTEGER NOT NULL DEFAULT 0,
    submitted       INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    completed_at    TEXT,
    UNIQUE (account_id, reference)
);
CREATE INDEX transactions_due ON transactions (next_attempt_at) WHERE status = 'processing';
CREATE INDEX transactions_account ON transactions (account_id, created_at);

-- Outbox: one event per final status, written with the status change.
CREATE TABLE events (
    id               TEXT PRIMARY KEY,
    transaction_code TEXT NOT NULL UNIQUE REFERENCES transactions (code),
    account_id       TEXT NOT NULL,
    key_id           TEXT NOT NULL,
    event            TEXT NOT NULL,
    payload          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    lease_until      INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL
);
CREATE INDEX events_due ON events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX events_account ON events (account_id, created_at);

CREATE TABLE webhook_attempts (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id         TEXT NOT NULL REFERENCES events (id),
    url              TEXT,
    http_status      INTEGER,
    error            TEXT,
    latency_ms       INTEGER NOT NULL,
    response_excerpt TEXT NOT NULL,
    created_at       TEXT NOT NULL
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);

-- The catalogue as one validated document; version bumps on every change so
-- running servers reload it within a second.
CREATE TABLE catalogue (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    version  INTEGER NOT NULL,
    document TEXT NOT NULL
);
