-- The one throttle (hardening issue: "throttles are per process"): every
-- bound on tries — checks of a person's secrets, the open forms per client
-- address and per email, a customer's identity checks per Lagos day — is a
-- counter here, so every node of one database counts in the same row.
-- `who` is the counted key (SHA-256 of an email or address, or an account
-- id: never a secret in clear); the window ends at `until_ms` (Unix ms);
-- rows whose window has ended are pruned hourly (`PruneUsage`).
CREATE TABLE throttles (
    scope     TEXT NOT NULL,
    who       TEXT NOT NULL,
    tries     BIGINT NOT NULL,
    until_ms  BIGINT NOT NULL,
    PRIMARY KEY (scope, who)
) WITHOUT ROWID;
CREATE INDEX throttles_until ON throttles (until_ms);
