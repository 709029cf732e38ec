SET LOCAL client_min_messages = warning;
CREATE TABLE IF NOT EXISTS billpay_migrations (
    version    INTEGER PRIMARY KEY,
    applied_at TEXT NOT NULL
);
-- Version 0: the versions are `crate::migrations`' steps, one numbering with
-- SQLite. A table without it (and with versions) was written before that
-- (docs/decisions.md): PostgreSQL then numbered its steps alone, its 1 being
-- steps 1 and 2 (its first had the sessions) and its n > 1 step n + 1. It is
-- renumbered once, here.
UPDATE billpay_migrations SET version = -(version + 1)
    WHERE version > 1 AND NOT EXISTS (SELECT 1 FROM billpay_migrations WHERE version = 0);
UPDATE billpay_migrations SET version = -version WHERE version < 0;
INSERT INTO billpay_migrations (version, applied_at)
    SELECT 2, applied_at FROM billpay_migrations
    WHERE version = 1 AND NOT EXISTS (SELECT 1 FROM billpay_migrations WHERE version IN (0, 2));
INSERT INTO billpay_migrations (version, applied_at)
    SELECT 0, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    WHERE NOT EXISTS (SELECT 1 FROM billpay_migrations WHERE version = 0);
