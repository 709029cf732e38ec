-- Velocity rules and purchases held for review (issue 32; docs/limits.md).
-- Each level (and an account's own limits, NULL: the level's) gains three
-- numbers — purchases to one recipient per clock hour, purchases per clock
-- hour, the value a new account may spend in its first 24 hours — and what
-- tripping each does ('refuse' or 'hold'), with the same for a wallet over
-- its largest balance. Level 2 gets none (its resellers' purchases go on as
-- before); level 0 and 1 hold what trips a velocity rule, and every level
-- holds a purchase over level 0's limits while the wallet is over its
-- largest balance (the issue's "wait for review").
ALTER TABLE kyc_levels ADD COLUMN recipient_hourly_count BIGINT;
ALTER TABLE kyc_levels ADD COLUMN account_hourly_count BIGINT;
ALTER TABLE kyc_levels ADD COLUMN first_day_value BIGINT;
ALTER TABLE kyc_levels ADD COLUMN recipient_hourly_action TEXT NOT NULL DEFAULT 'hold'
    CHECK (recipient_hourly_action IN ('refuse', 'hold'));
ALTER TABLE kyc_levels ADD COLUMN account_hourly_action TEXT NOT NULL DEFAULT 'hold'
    CHECK (account_hourly_action IN ('refuse', 'hold'));
ALTER TABLE kyc_levels ADD COLUMN first_day_action TEXT NOT NULL DEFAULT 'hold'
    CHECK (first_day_action IN ('refuse', 'hold'));
ALTER TABLE kyc_levels ADD COLUMN over_balance_action TEXT NOT NULL DEFAULT 'hold'
    CHECK (over_balance_action IN ('refuse', 'hold'));
UPDATE kyc_levels SET recipient_hourly_count = 5, account_hourly_count = 10,
    first_day_value = 2000000 WHERE level = 0;
UPDATE kyc_levels SET recipient_hourly_count = 10, account_hourly_count = 30 WHERE level = 1;
ALTER TABLE account_limits ADD COLUMN recipient_hourly_count BIGINT;
ALTER TABLE account_limits ADD COLUMN account_hourly_count BIGINT;
ALTER TABLE account_limits ADD COLUMN first_day_value BIGINT;
ALTER TABLE account_limits ADD COLUMN recipient_hourly_action TEXT
    CHECK (recipient_hourly_action IN ('refuse', 'hold'));
ALTER TABLE account_limits ADD COLUMN account_hourly_action TEXT
    CHECK (account_hourly_action IN ('refuse', 'hold'));
ALTER TABLE account_limits ADD COLUMN first_day_action TEXT
    CHECK (first_day_action IN ('refuse', 'hold'));
ALTER TABLE account_limits ADD COLUMN over_balance_action TEXT
    CHECK (over_balance_action IN ('refuse', 'hold'));
-- Purchases per clock hour (UTC hours since 1970), to one recipient and in
-- all (recipient ''), kept only while an hourly rule applies.
CREATE TABLE hourly_usage (
    account_id TEXT NOT NULL,
    recipient  TEXT NOT NULL,
    hour       BIGINT NOT NULL,
    count      BIGINT NOT NULL,
    PRIMARY KEY (account_id, recipient, hour)
) WITHOUT ROWID;
-- The rule that held a purchase for review (NULL: not held, or released).
-- A held purchase also waits at a far next_attempt_at, so a node of the
-- previous release (whose claim does not read held_for) skips it too.
ALTER TABLE transactions ADD COLUMN held_for TEXT;
CREATE INDEX transactions_held ON transactions (created_at)
    WHERE held_for IS NOT NULL AND status = 'processing';
