-- A customer at a gateway (Monnify accountReference, Paystack customer_code),
-- one per account and gateway; its bank accounts below (Paystack may assign
-- them later).
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

-- Every payment received, credited or not: credited once per gateway
-- reference (the unique pair, written with the ledger entries).
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

-- Background jobs that run on one node at a time (the funding reconciler).
CREATE TABLE job_leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    lease_until BIGINT NOT NULL
);
