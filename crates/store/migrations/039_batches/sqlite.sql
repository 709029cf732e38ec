-- A batch's completion is a webhook event of the outbox too
-- (`batch.completed`), whose `transaction_code` is the batch's id: an event
-- names a transaction or a batch, so the column is no longer a foreign key.
-- A constraint cannot be dropped, so the stored definition is edited in
-- place as in 024 (every stored row stays valid); RESET reloads this
-- connection's schema, the table made and dropped moves the schema's version.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql,
    'transaction_code TEXT NOT NULL UNIQUE REFERENCES transactions (code)',
    'transaction_code TEXT NOT NULL UNIQUE')
    WHERE type = 'table' AND name = 'events';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_version_moved_039 (x INTEGER);
DROP TABLE schema_version_moved_039;
