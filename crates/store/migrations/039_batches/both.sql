-- Issue 50: batches. A batch is many purchases sent at once under one
-- reference, unique per account (sent again, it is the same batch). Its
-- items are the purchase bodies as sent, placed in order in the background
-- through the one purchase operation by whichever node holds the batch's
-- lease: `lease_until` is both the lease while placing and, once every item
-- is placed, when the batch is next looked at for its completion.
CREATE TABLE batches (
    id           TEXT COLLATE "C" PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    key_id       TEXT NOT NULL REFERENCES api_keys (id),
    reference    TEXT NOT NULL,
    status       TEXT NOT NULL
        CHECK (status = 'placing' OR status = 'fulfilling' OR status = 'completed'),
    item_count   BIGINT NOT NULL,
    lease_until  BIGINT NOT NULL DEFAULT 0,
    created_at   TEXT COLLATE "C" NOT NULL,
    completed_at TEXT COLLATE "C"
);
CREATE UNIQUE INDEX batches_by_reference ON batches (account_id, reference);
CREATE INDEX batches_by_account ON batches (account_id, created_at);
CREATE INDEX batches_due ON batches (lease_until) WHERE status <> 'completed';

-- An item: its place in the batch, its own purchase reference (held by one
-- pending or placed item per account: a second batch naming it is refused
-- for that item), the body as sent, then either the purchase it placed or
-- why it was refused (`error` the contract's slug, `message` the sentence).
CREATE TABLE batch_items (
    batch_id         TEXT COLLATE "C" NOT NULL REFERENCES batches (id),
    position         BIGINT NOT NULL,
    account_id       TEXT NOT NULL,
    reference        TEXT NOT NULL,
    product          TEXT NOT NULL,
    body             TEXT NOT NULL,
    transaction_code TEXT REFERENCES transactions (code),
    error            TEXT,
    message          TEXT,
    PRIMARY KEY (batch_id, position)
);
CREATE UNIQUE INDEX batch_items_by_reference ON batch_items (account_id, reference)
    WHERE error IS NULL;
