-- The shop (issue 31). Each account's transaction PIN (argon2id), its run of
-- wrong tries and the lock they set (ms since the epoch, 0 = none), and the
-- API key its browser purchases are placed under (so they are API purchases
-- in every table: ledger, events, audit).
CREATE TABLE transaction_pins (
    account_id    TEXT PRIMARY KEY REFERENCES accounts (id),
    pin_hash      TEXT NOT NULL,
    failures      BIGINT NOT NULL DEFAULT 0,
    locked_until  BIGINT NOT NULL DEFAULT 0,
    shop_key_id   TEXT NOT NULL REFERENCES api_keys (id),
    updated_at    TEXT COLLATE "C" NOT NULL
);

-- Saved recipients (a phone, meter, smartcard or betting id), one per
-- account, product and recipient.
CREATE TABLE beneficiaries (
    id          TEXT COLLATE "C" PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    product     TEXT NOT NULL,
    recipient   TEXT NOT NULL,
    nickname    TEXT NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    UNIQUE (account_id, product, recipient)
);
