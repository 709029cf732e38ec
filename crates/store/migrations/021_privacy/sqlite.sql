-- The operator log stays append-only, with one exception: an erase may
-- replace a line's before/after/reason text that names the person with
-- '[erased]'. Who did what, when, to which subject never changes.
DROP TRIGGER operator_log_append_only_update;
CREATE TRIGGER operator_log_append_only_update BEFORE UPDATE ON operator_log
    WHEN NOT (NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.actor = OLD.actor
              AND NEW.operator_id IS OLD.operator_id
              AND NEW.operator_email IS OLD.operator_email
              AND NEW.action = OLD.action AND NEW.subject = OLD.subject
              AND (NEW.before_state IS OLD.before_state OR NEW.before_state = '[erased]')
              AND (NEW.after_state IS OLD.after_state OR NEW.after_state = '[erased]')
              AND (NEW.reason IS OLD.reason OR NEW.reason = '[erased]'))
    BEGIN SELECT RAISE(ABORT, 'operator_log is append-only'); END;
