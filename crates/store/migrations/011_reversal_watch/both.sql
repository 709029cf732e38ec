-- A successful purchase its supplier may still reverse is requeried again at
-- `watch_at` (ms since the epoch; NULL: not watched). Set by the successful
-- finalize (same statement), moved on by each watch requery, cleared at the
-- end of the supplier's watch or by a reversal; claimed with `lease_until`.
ALTER TABLE transactions ADD COLUMN watch_at BIGINT;
CREATE INDEX transactions_watch ON transactions (watch_at) WHERE watch_at IS NOT NULL;
