-- Issue 48: only e-pin purchases have a batch id, yet the column's UNIQUE
-- constraint (001) indexed every purchase, NULL included. PostgreSQL writes an
-- index entry for each new row version that is not HOT, so each purchase paid
-- one on placement and on each of its three updates (claim, "sent",
-- finalization): about 4 of a purchase's ~30 index entries, for a lookup only
-- e-pins make. Unique and found as before (`batch_id = $1` implies the
-- predicate), it now indexes the batch ids alone.
-- SQLite keeps its UNIQUE column: it cannot drop that index without rebuilding
-- the table, and its updates write only the indexes whose columns change, so
-- it pays the entry once, at placement (docs/decisions.md).
CREATE UNIQUE INDEX transactions_batch_id ON transactions (batch_id) WHERE batch_id IS NOT NULL;
ALTER TABLE transactions DROP CONSTRAINT transactions_batch_id_key;
