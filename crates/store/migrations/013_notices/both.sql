-- The notification outbox (issue 30): a notice is written in the same
-- transaction as its cause and sent later by the worker, like a webhook event.
-- One notice per cause and channel: a replayed cause adds nothing.
CREATE TABLE notices (
    id               TEXT COLLATE "C" PRIMARY KEY,
    cause            TEXT NOT NULL,
    kind             TEXT NOT NULL,
    channel          TEXT NOT NULL CHECK (channel IN ('email', 'sms')),
    recipient        TEXT NOT NULL,
    account_id       TEXT,
    operator_id      TEXT,
    data             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    lease_until      BIGINT NOT NULL DEFAULT 0,
    last_error       TEXT,
    provider         TEXT,
    provider_id      TEXT,
    created_at       TEXT COLLATE "C" NOT NULL,
    sent_at          TEXT,
    UNIQUE (cause, channel)
);
CREATE INDEX notices_due ON notices (next_attempt_at) WHERE status = 'queued';
CREATE INDEX notices_account ON notices (account_id, created_at);
