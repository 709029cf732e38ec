-- Data protection (issue 32, NDPA). An account an operator closed (its
-- wallet empty, nothing in flight, suspended for good) and, once its
-- personal data is erased, when. No row: open.
CREATE TABLE account_closures (
    account_id  TEXT PRIMARY KEY REFERENCES accounts (id),
    closed_at   TEXT NOT NULL,
    erased_at   TEXT
);
