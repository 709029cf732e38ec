-- The successful transactions whose reversal watch is due, leased in one
-- statement: rows another node holds (locked or leased) are skipped.
WITH due AS (
    SELECT code FROM transactions
    WHERE watch_at IS NOT NULL AND watch_at <= $2 AND status = 'successful'
      AND lease_until <= $2
    ORDER BY watch_at LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE transactions t SET lease_until = $1 FROM due WHERE t.code = due.code
RETURNING {columns}
