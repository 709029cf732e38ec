-- Operators (the console's and the CLI's people), not customers: their own
-- table, sessions and an append-only log of what they did.
CREATE TABLE operators (
    id                 BIGSERIAL PRIMARY KEY,
    email              TEXT NOT NULL,
    role               TEXT NOT NULL CHECK (role IN ('owner', 'support')),
    status             TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
    password_hash      TEXT NOT NULL,
    totp_secret_sealed TEXT,
    created_at         TEXT NOT NULL
);
CREATE UNIQUE INDEX operators_email ON operators (lower(email));

CREATE TABLE operator_sessions (
    token_hash   TEXT PRIMARY KEY,
    operator_id  BIGINT NOT NULL REFERENCES operators (id),
    expires_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX operator_sessions_expiry ON operator_sessions (expires_at);

CREATE TABLE operator_log (
    id             BIGSERIAL PRIMARY KEY,
    at             TEXT NOT NULL,
    actor          TEXT NOT NULL,
    operator_id    BIGINT,
    operator_email TEXT,
    action         TEXT NOT NULL,
    subject        TEXT NOT NULL,
    before_state   TEXT,
    after_state    TEXT,
    reason         TEXT
);
CREATE INDEX operator_log_subject ON operator_log (subject, id);
