-- Due events of keys not in $4, leased; rows another node holds are skipped.
WITH due AS (
    SELECT id FROM events
    WHERE status = 'pending' AND next_attempt_at <= $2 AND lease_until <= $2
      AND NOT (key_id = ANY($4))
    ORDER BY next_attempt_at LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE events e SET lease_until = $1 FROM due WHERE e.id = due.id
RETURNING {columns}
