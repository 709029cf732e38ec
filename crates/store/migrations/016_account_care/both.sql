-- Sign-up and account care (issue 31): how an account came to be, its phone,
-- when its email was verified; the emailed codes that verify an address and
-- the single-use password-reset links. Codes and tokens are stored as SHA-256.
ALTER TABLE accounts ADD COLUMN phone TEXT;
ALTER TABLE accounts ADD COLUMN signed_up TEXT NOT NULL DEFAULT 'operator'
    CHECK (signed_up IN ('self', 'operator'));
ALTER TABLE accounts ADD COLUMN email_verified_at TEXT;
CREATE INDEX accounts_unverified ON accounts (created_at)
    WHERE signed_up = 'self' AND email_verified_at IS NULL;
CREATE INDEX accounts_signed_up ON accounts (signed_up, created_at);

-- One live code per account: for its own address, or for the new address it
-- asked to move to (`email`), which takes effect only when the code is right.
CREATE TABLE email_codes (
    account_id  TEXT PRIMARY KEY REFERENCES accounts (id),
    email       TEXT NOT NULL,
    code_hash   TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    expires_at  BIGINT NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL
);

CREATE TABLE password_resets (
    token_hash  TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    expires_at  BIGINT NOT NULL,
    used_at     TEXT,
    created_at  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX password_resets_account ON password_resets (account_id);
