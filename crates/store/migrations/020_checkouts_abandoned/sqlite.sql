-- A checkout still unpaid a day after it was initialized (the gateway says
-- abandoned, or does not know the reference) is marked `abandoned`, so the
-- reconciler stops asking about it; a payment that still comes is credited
-- and the checkout becomes `credited`. SQLite cannot change a CHECK: the
-- table is rebuilt with the new status allowed (nothing references it).
CREATE TABLE checkouts_new (
    reference   TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    gateway     TEXT NOT NULL,
    amount      INTEGER NOT NULL CHECK (amount > 0),
    fee         INTEGER NOT NULL CHECK (fee >= 0 AND fee < amount),
    status      TEXT NOT NULL DEFAULT 'open'
                CHECK (status IN ('open', 'credited', 'failed', 'abandoned')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
INSERT INTO checkouts_new
    SELECT reference, account_id, gateway, amount, fee, status, created_at, updated_at
    FROM checkouts;
DROP TABLE checkouts;
ALTER TABLE checkouts_new RENAME TO checkouts;
CREATE INDEX checkouts_open ON checkouts (gateway, created_at) WHERE status = 'open';
CREATE INDEX checkouts_account ON checkouts (account_id, created_at);
