-- Money in by bank transfer (issue 19).
--
-- The ledger gains the `fee` kind (the operator's fee on a funding, its own
-- entry after the payment's credit) and `funding_id` (both entries of a
-- funding name its event). SQLite cannot change a CHECK in place: the table
-- is rebuilt with every row, index and trigger as they were.
CREATE TABLE ledger_rebuilt (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    amount           INTEGER NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('credit', 'debit', 'refund', 'fee')),
    balance_after    INTEGER NOT NULL CHECK (balance_after >= 0),
    transaction_code TEXT,
    credit_reference TEXT,
    created_at       TEXT NOT NULL,
    credit_source    TEXT,
    funding_id       TEXT
);
INSERT INTO ledger_rebuilt (id, account_id, amount, kind, balance_after, transaction_code,
    credit_reference, created_at, credit_source)
SELECT id, account_id, amount, kind, balance_after, transaction_code, credit_reference,
    created_at, credit_source
FROM ledger;
DROP TABLE ledger;
ALTER TABLE ledger_rebuilt RENAME TO ledger;
CREATE INDEX ledger_account ON ledger (account_id, id);
CREATE UNIQUE INDEX ledger_one_credit_per_source_reference
    ON ledger (account_id, COALESCE(credit_source, 'operator'), credit_reference)
    WHERE credit_reference IS NOT NULL;
CREATE UNIQUE INDEX ledger_one_refund_per_transaction ON ledger (transaction_code)
    WHERE kind = 'refund';
CREATE INDEX ledger_transaction ON ledger (transaction_code, kind)
    WHERE transaction_code IS NOT NULL;
-- One payment entry and at most one fee entry per funding.
CREATE UNIQUE INDEX ledger_one_entry_per_funding ON ledger (funding_id, kind)
    WHERE funding_id IS NOT NULL;
CREATE TRIGGER ledger_append_only_update BEFORE UPDATE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER ledger_append_only_delete BEFORE DELETE ON ledger
    BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;

-- A customer at a gateway (Monnify accountReference, Paystack customer_code),
-- one per account and gateway; its bank accounts below (Paystack may assign
-- them later).
CREATE TABLE funding_customers (
    gateway      TEXT NOT NULL,
    customer_ref TEXT NOT NULL,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    created_at   TEXT NOT NULL,
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
    created_at     TEXT NOT NULL,
    PRIMARY KEY (gateway, account_number)
);
CREATE INDEX funding_accounts_owner ON funding_accounts (account_id);

-- Every payment received, credited or not: credited once per gateway
-- reference (the unique pair, written with the ledger entries).
CREATE TABLE funding_events (
    id                TEXT PRIMARY KEY,
    gateway           TEXT NOT NULL,
    gateway_reference TEXT NOT NULL,
    status            TEXT NOT NULL
        CHECK (status IN ('credited', 'unmatched', 'rejected', 'pending_verification')),
    account_id        TEXT REFERENCES accounts (id),
    amount            INTEGER NOT NULL CHECK (amount >= 0),
    fee               INTEGER NOT NULL DEFAULT 0 CHECK (fee >= 0 AND fee <= amount),
    currency          TEXT,
    customer_ref      TEXT,
    account_number    TEXT,
    payer             TEXT,
    note              TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    credited_at       TEXT,
    UNIQUE (gateway, gateway_reference)
);
CREATE INDEX funding_events_account ON funding_events (account_id, created_at);
CREATE INDEX funding_events_status ON funding_events (status, created_at);

-- Background jobs that run on one node at a time (the funding reconciler).
CREATE TABLE job_leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    lease_until INTEGER NOT NULL
);
