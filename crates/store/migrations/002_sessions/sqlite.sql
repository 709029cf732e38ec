-- Dashboard sessions: the cookie holds a random token, only its SHA-256 is stored.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    expires_at INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_at);
