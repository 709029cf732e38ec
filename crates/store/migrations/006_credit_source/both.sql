-- Credit references are unique per source (an operator, later a payment
-- gateway), so a bank transfer's reference can never collide with an
-- operator's. Credits from before this column have no source: they were all
-- an operator's, and read (and stay unique) as such. The ledger is
-- append-only, so old rows are never rewritten.
ALTER TABLE ledger ADD COLUMN credit_source TEXT;
DROP INDEX ledger_one_credit_per_reference;
CREATE UNIQUE INDEX ledger_one_credit_per_source_reference
    ON ledger (account_id, COALESCE(credit_source, 'operator'), credit_reference)
    WHERE credit_reference IS NOT NULL;
