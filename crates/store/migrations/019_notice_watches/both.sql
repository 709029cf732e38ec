-- Issue 30's last notices.
--
-- Low balance, edge-triggered: a customer's watch is armed until a notice is
-- sent, and armed again only once the balance is back at or above the mark.
-- Each notice starts an episode; its number is in the notice's cause
-- (`low_balance:<account>:<episode>`), so the outbox's UNIQUE (cause, channel)
-- keeps one notice per episode whatever runs the check.
ALTER TABLE notice_preferences ADD COLUMN low_balance_armed BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE notice_preferences ADD COLUMN low_balance_episode BIGINT NOT NULL DEFAULT 0;
CREATE INDEX notice_preferences_low_balance ON notice_preferences (account_id)
    WHERE low_balance_below IS NOT NULL;

-- An emailed reset link resets the password or the transaction PIN: the
-- same single-use, hashed, 30-minute link, for one purpose only.
ALTER TABLE password_resets ADD COLUMN purpose TEXT NOT NULL DEFAULT 'password'
    CHECK (purpose IN ('password', 'pin'));

-- How an operator gets the alerts they chose: by email (on until turned off)
-- and by SMS to their phone (`234XXXXXXXXXX`). No row: email only.
CREATE TABLE operator_alert_channels (
    operator_id  BIGINT PRIMARY KEY REFERENCES operators (id),
    phone        TEXT,
    by_email     BOOLEAN NOT NULL DEFAULT TRUE,
    by_sms       BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at   TEXT COLLATE "C" NOT NULL
);
