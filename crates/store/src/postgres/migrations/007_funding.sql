-- As sqlite/007_funding.sql: money in by bank transfer (issue 19).
ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check
    CHECK (kind IN ('credit', 'debit', 'refund', 'fee'));
ALTER TABLE ledger ADD COLUMN funding_id TEXT;
-- One payment entry and at most one fee entry per funding.
CREATE UNIQUE INDEX ledger_one_entry_per_funding ON ledger (funding_id, kind)
    WHERE funding_id IS NOT NULL;

CREATE TABLE funding_customers (
    gateway      TEXT NOT NULL,
    customer_ref TEXT NOT NULL,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    created_at   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (gateway, customer_ref),
    UNIQUE (account_id, gateway)
);
CREATE TABLE funding_accounts (
    gateway        TEXT NOT NULL,
    account_number TEXT NOT NULL,
    customer_ref   TEXT NOT NULL,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    bank_name      TEXT NOT NULL,
    account_name   TEXT NOT NULL,
    created_at     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (gateway, account_number)
);
CREATE INDEX funding_accounts_owner ON funding_accounts (account_id);

CREATE TABLE funding_events (
    id                TEXT COLLATE "C" PRIMARY KEY,
    gateway           TEXT NOT NULL,
    gateway_reference TEXT NOT NULL,
    status            TEXT NOT NULL
        CHECK (status IN ('credited', 'unmatched', 'rejected', 'pending_verification')),
    account_id        TEXT REFERENCES accounts (id),
    amount            BIGINT NOT NULL CHECK (amount >= 0),
    fee               BIGINT NOT NULL DEFAULT 0 CHECK (fee >= 0 AND fee <= amount),
    currency          TEXT,
    customer_ref      TEXT,
    account_number    TEXT,
    payer             TEXT,
    note              TEXT NOT NULL,
    created_at        TEXT COLLATE "C" NOT NULL,
    updated_at        TEXT COLLATE "C" NOT NULL,
    credited_at       TEXT COLLATE "C",
    UNIQUE (gateway, gateway_reference)
);
CREATE INDEX funding_events_account ON funding_events (account_id, created_at);
CREATE INDEX funding_events_status ON funding_events (status, created_at);

CREATE TABLE job_leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    lease_until BIGINT NOT NULL
);
