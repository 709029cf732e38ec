-- Issue 50: schedules, a purchase bought again every day, week or month.
-- Each run is an ordinary purchase with the reference `{reference}-{n}`, so
-- a run is placed once whichever node, or restart, sees it due. A schedule's
-- reference is unique per account, and kept once it is stopped. CHECKs of
-- three or more values are comparisons (SQLite plans them without a B-tree).
CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    -- the key its runs are placed under (their webhooks go to it)
    key_id TEXT NOT NULL,
    reference TEXT NOT NULL,
    product TEXT NOT NULL,
    provider TEXT NOT NULL,
    -- the checked request's item (billpay_domain::Item) as JSON
    item TEXT NOT NULL,
    label TEXT NOT NULL,
    recipient TEXT NOT NULL,
    -- the price of one run when it was made (kobo); each run is priced anew
    amount BIGINT NOT NULL,
    every TEXT NOT NULL CHECK (every = 'day' OR every = 'week' OR every = 'month'),
    -- RFC 3339 UTC; runs fall due from it in Lagos time (store::cadence)
    starts_at TEXT NOT NULL,
    -- a run that cannot be paid is tried again later the same Lagos day
    retry_today BOOLEAN NOT NULL DEFAULT FALSE,
    -- cable: the smartcard's name when the schedule was made; each run
    -- verifies it again and a different name stops the schedule
    verified_name TEXT,
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status = 'active' OR status = 'paused' OR status = 'stopped'),
    status_reason TEXT,
    -- the last run settled (0: none yet); the next is runs + 1
    runs BIGINT NOT NULL DEFAULT 0,
    -- when a node next tries it (a run's due time, or a retry later that day)
    next_run_at TEXT NOT NULL,
    lease_until BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX schedules_reference ON schedules (account_id, reference);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE status = 'active';

-- Each run's outcome: placed (its purchase), retrying, skipped (why), or
-- stopped (the smartcard's name changed).
CREATE TABLE schedule_runs (
    schedule_id TEXT NOT NULL REFERENCES schedules(id),
    n BIGINT NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    due_at TEXT NOT NULL,
    at TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome = 'placed' OR outcome = 'retrying'
        OR outcome = 'skipped' OR outcome = 'stopped'),
    transaction_code TEXT,
    reason TEXT,
    -- earlier runs not made because no node ran then (a node catches up on one)
    missed BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (schedule_id, n)
);
CREATE INDEX schedule_runs_account ON schedule_runs (account_id);
