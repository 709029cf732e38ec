-- The delivery worker's claim leaves out keys that already have their share
-- of deliveries in flight: with the key in the index, skipping a slow
-- receiver's backlog reads no table rows.
DROP INDEX events_due;
CREATE INDEX events_due ON events (next_attempt_at, key_id) WHERE status = 'pending';
