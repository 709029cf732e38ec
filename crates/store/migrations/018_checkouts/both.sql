-- Pay now through a gateway's hosted checkout (issue 31): one row per
-- initialized checkout, by our reference (the gateway's reference too). The
-- money is credited through the funding events (unique per gateway and
-- reference); this row says whose it is and what was agreed: the amount the
-- customer pays and the operator's fee on it, fixed when it was initialized.
CREATE TABLE checkouts (
    reference   TEXT COLLATE "C" PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    gateway     TEXT NOT NULL,
    amount      BIGINT NOT NULL CHECK (amount > 0),
    fee         BIGINT NOT NULL CHECK (fee >= 0 AND fee < amount),
    status      TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'credited', 'failed')),
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX checkouts_open ON checkouts (gateway, created_at) WHERE status = 'open';
CREATE INDEX checkouts_account ON checkouts (account_id, created_at);

-- The identity number a gateway was given to reserve accounts (Monnify
-- requires a BVN or a NIN): never the number, only its last 4 digits and
-- whether the gateway accepted it.
CREATE TABLE reservation_identities (
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    gateway     TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('bvn', 'nin')),
    last4       TEXT NOT NULL CHECK (length(last4) = 4),
    state       TEXT NOT NULL CHECK (state IN ('accepted', 'refused')),
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (account_id, gateway)
);
