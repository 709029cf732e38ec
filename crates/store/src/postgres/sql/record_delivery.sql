-- One statement: the attempt and the event's new state commit together.
WITH logged AS (
    INSERT INTO webhook_attempts (event_id, url, http_status, error, latency_ms,
      response_excerpt, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
)
UPDATE events SET status = $8, next_attempt_at = $9, lease_until = 0,
  attempts = attempts + 1 WHERE id = $1
RETURNING id
