-- One statement, so one transaction: rows another node holds (locked or
-- leased) are skipped, never waited for.
WITH due AS (
    SELECT code FROM transactions
    WHERE status = 'processing' AND next_attempt_at <= $2 AND lease_until <= $2
    ORDER BY next_attempt_at LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE transactions t SET lease_until = $1 FROM due WHERE t.code = due.code
RETURNING {columns}
