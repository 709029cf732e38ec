-- Hardening findings 1 and 3: SMS goes only to a phone proven by a code sent
-- to it, and every notice is bounded per account and per destination per
-- clock hour (docs/notifications.md).
--
-- A phone given before this step is kept but no longer used for SMS until it
-- is proven (`phone_proven_at`): nothing proved it was the customer's.
ALTER TABLE notice_preferences ADD COLUMN phone_proven_at TEXT;

-- One live code per account proving `phone` (234XXXXXXXXXX); stored as
-- SHA-256, a bounded number of tries, 30 minutes. How often a code may be
-- sent (per number, per account) is the notice bound of `phone_verification`.
CREATE TABLE phone_codes (
    account_id  TEXT PRIMARY KEY,
    phone       TEXT NOT NULL,
    code_hash   TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    expires_at  BIGINT NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL
);

-- Notices queued in one clock hour (`hour` = ms since the epoch / 3 600 000)
-- per scope: `account:<id>:<channel>:<kind>` or `<channel>:<SHA-256 of the
-- recipient, hex>:<kind>` (no address or phone in clear). Counted
-- by one conditional upsert (`… DO UPDATE … WHERE sent < bound`), so nodes
-- sharing PostgreSQL cannot both take the last place. Pruned with the limits'
-- hourly usage (`prune_usage`).
CREATE TABLE notice_counts (
    scope  TEXT NOT NULL,
    hour   BIGINT NOT NULL,
    sent   INTEGER NOT NULL,
    PRIMARY KEY (scope, hour)
);
