-- `lease_until > 0`: a transaction rescheduled or finalized in the meantime
-- has released its lease; never take it back. SKIP LOCKED: a row a worker's
-- batch is writing right now is left for the next heartbeat; waiting for it
-- could deadlock with that batch (both lock several rows, in no common order).
WITH mine AS (
    SELECT code FROM transactions
    WHERE code = ANY($2) AND status IN ('processing', 'successful') AND lease_until > 0
    FOR UPDATE SKIP LOCKED
)
UPDATE transactions t SET lease_until = $1 FROM mine WHERE t.code = mine.code
