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
