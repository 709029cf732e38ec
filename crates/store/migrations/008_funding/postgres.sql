-- Money in by bank transfer (issue 19): the ledger gains the `fee` kind and
-- `funding_id` (both.sql: the gateways' tables).
ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check
    CHECK (kind IN ('credit', 'debit', 'refund', 'fee'));
ALTER TABLE ledger ADD COLUMN funding_id TEXT;
-- One payment entry and at most one fee entry per funding.
CREATE UNIQUE INDEX ledger_one_entry_per_funding ON ledger (funding_id, kind)
    WHERE funding_id IS NOT NULL;
