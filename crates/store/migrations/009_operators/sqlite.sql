-- The log is append-only: on SQLite by these triggers.
CREATE TRIGGER operator_log_append_only_update BEFORE UPDATE ON operator_log
    BEGIN SELECT RAISE(ABORT, 'operator_log is append-only'); END;
CREATE TRIGGER operator_log_append_only_delete BEFORE DELETE ON operator_log
    BEGIN SELECT RAISE(ABORT, 'operator_log is append-only'); END;
