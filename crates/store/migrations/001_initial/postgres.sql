-- billpay PostgreSQL schema, version 1: the same tables, columns and rules as
-- the SQLite schema (001_initial/sqlite.sql + 002_sessions/sqlite.sql), so both
-- backends answer byte for byte alike. Money is BIGINT kobo; times are unix ms
-- (scheduling) or fixed-width RFC 3339 text (display), compared with the "C"
-- collation so text order is time order whatever the database's locale.

CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    email         TEXT NOT NULL,
    password_hash TEXT,
    status        TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
    balance       BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at    TEXT COLLATE "C" NOT NULL
);
-- SQLite's `email ... UNIQUE COLLATE NOCASE`.
CREATE UNIQUE INDEX accounts_email ON accounts (lower(email));

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
    webhook_retries       BOOLEAN NOT NULL DEFAULT FALSE,
    created_at            TEXT COLLATE "C" NOT NULL,
    last_used_at          TEXT COLLATE "C"
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- Append-only: every balance change is one row; balance = SUM(amount).
CREATE TABLE ledger (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    amount           BIGINT NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('credit', 'debit', 'refund')),
    balance_after    BIGINT NOT NULL CHECK (balance_after >= 0),
    transaction_code TEXT,
    credit_reference TEXT,
    created_at       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX ledger_account ON ledger (account_id, id);
CREATE UNIQUE INDEX ledger_one_credit_per_reference ON ledger (account_id, credit_reference)
    WHERE credit_reference IS NOT NULL;
CREATE UNIQUE INDEX ledger_one_refund_per_transaction ON ledger (transaction_code)
    WHERE kind = 'refund';

CREATE FUNCTION billpay_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger is append-only';
END
$$;
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION billpay_ledger_append_only();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
    FOR EACH STATEMENT EXECUTE FUNCTION billpay_ledger_append_only();

CREATE TABLE transactions (
    code            TEXT COLLATE "C" PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    key_id          TEXT NOT NULL REFERENCES api_keys (id),
    reference       TEXT NOT NULL,
    product         TEXT COLLATE "C" NOT NULL,
    provider        TEXT NOT NULL,
    plan_id         TEXT,
    label           TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    amount          BIGINT NOT NULL CHECK (amount > 0),
    details         TEXT NOT NULL,
    batch_id        TEXT UNIQUE,
    status          TEXT NOT NULL CHECK (status IN ('processing', 'successful', 'failed')),
    message         TEXT NOT NULL,
    balance_before  BIGINT NOT NULL,
    balance_after   BIGINT NOT NULL,
    result          TEXT NOT NULL DEFAULT '{}',
    attempts        INTEGER NOT NULL DEFAULT 0,
    submitted       BOOLEAN NOT NULL DEFAULT FALSE,
    next_attempt_at BIGINT NOT NULL,
    lease_until     BIGINT NOT NULL DEFAULT 0,
    created_at      TEXT COLLATE "C" NOT NULL,
    completed_at    TEXT COLLATE "C",
    UNIQUE (account_id, reference)
);
CREATE INDEX transactions_due ON transactions (next_attempt_at) WHERE status = 'processing';
CREATE INDEX transactions_account ON transactions (account_id, created_at);

-- Outbox: one event per final status, written with the status change.
CREATE TABLE events (
    id               TEXT COLLATE "C" PRIMARY KEY,
    transaction_code TEXT NOT NULL UNIQUE REFERENCES transactions (code),
    account_id       TEXT NOT NULL,
    key_id           TEXT NOT NULL,
    event            TEXT NOT NULL,
    payload          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    lease_until      BIGINT NOT NULL DEFAULT 0,
    created_at       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX events_due ON events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX events_account ON events (account_id, created_at);

CREATE TABLE webhook_attempts (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id         TEXT NOT NULL REFERENCES events (id),
    url              TEXT,
    http_status      INTEGER,
    error            TEXT,
    latency_ms       BIGINT NOT NULL,
    response_excerpt TEXT NOT NULL,
    created_at       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);

-- The catalogue as one validated document; version bumps on every change so
-- running servers reload it within a second.
CREATE TABLE catalogue (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    version  BIGINT NOT NULL,
    document TEXT NOT NULL
);

-- Dashboard sessions: the cookie holds a random token, only its SHA-256 is stored.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    expires_at BIGINT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- A live purchase in one round trip (so a group-commit batch pipelines many):
-- lock the wallet, refuse a used reference, guarded debit, transaction row
-- `processing`, ledger entry. Refusals are answers, not errors, so one refused
-- purchase never aborts the batch it shares a transaction with.
CREATE FUNCTION billpay_place_purchase(
    p_code TEXT, p_account TEXT, p_key TEXT, p_reference TEXT, p_product TEXT,
    p_provider TEXT, p_plan TEXT, p_label TEXT, p_recipient TEXT, p_amount BIGINT,
    p_details TEXT, p_batch TEXT, p_now_ms BIGINT, p_now TEXT,
    OUT outcome TEXT, OUT before_kobo BIGINT, OUT after_kobo BIGINT)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT a.balance INTO before_kobo FROM accounts a WHERE a.id = p_account FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'no_account';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = p_account AND t.reference = p_reference) THEN
        outcome := 'duplicate';
        RETURN;
    END IF;
    UPDATE accounts a SET balance = a.balance - p_amount
        WHERE a.id = p_account AND a.balance - p_amount >= 0
        RETURNING a.balance INTO after_kobo;
    IF NOT FOUND THEN
        outcome := 'insufficient';
        RETURN;
    END IF;
    INSERT INTO transactions (code, account_id, key_id, reference, product, provider, plan_id,
            label, recipient, amount, details, batch_id, status, message, balance_before,
            balance_after, next_attempt_at, created_at)
        VALUES (p_code, p_account, p_key, p_reference, p_product, p_provider, p_plan,
            p_label, p_recipient, p_amount, p_details, p_batch, 'processing',
            'Transaction is processing', before_kobo, after_kobo, p_now_ms, p_now)
        ON CONFLICT (account_id, reference) DO NOTHING;
    IF NOT FOUND THEN
        -- Taken by a purchase that committed meanwhile: undo our debit (never
        -- visible outside this transaction) and refuse.
        UPDATE accounts a SET balance = a.balance + p_amount WHERE a.id = p_account;
        outcome := 'duplicate';
        RETURN;
    END IF;
    INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, created_at)
        VALUES (p_account, -p_amount, 'debit', after_kobo, p_code, p_now);
    outcome := 'ok';
END
$$;
