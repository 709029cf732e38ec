-- Only a failed check counts toward the PIN lock (issue 45, finding 5). A try
-- used to be counted before its check and only a right check ended the run,
-- so five right PINs in flight at once set the lock. Now a try takes a turn
-- (`checking`, the checks under way) before its check, and only a wrong
-- check adds to `failures`: failures + checks under way never pass five, so
-- raced wrong PINs still lock after five, and right PINs wait a moment for a
-- turn instead of being refused. `checking_since` is when the last turn was
-- taken: turns older than a minute belong to a process that died mid-check
-- and are forgotten.
ALTER TABLE transaction_pins ADD COLUMN checking BIGINT NOT NULL DEFAULT 0;
ALTER TABLE transaction_pins ADD COLUMN checking_since BIGINT NOT NULL DEFAULT 0;
