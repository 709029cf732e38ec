-- The operator log stays append-only, with one exception: an erase may
-- replace a line's before/after/reason text that names the person with
-- '[erased]'. Who did what, when, to which subject never changes.
CREATE OR REPLACE FUNCTION billpay_operator_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND (NEW.id, NEW.at, NEW.actor, NEW.operator_id, NEW.operator_email, NEW.action, NEW.subject)
           IS NOT DISTINCT FROM
           (OLD.id, OLD.at, OLD.actor, OLD.operator_id, OLD.operator_email, OLD.action, OLD.subject)
       AND (NEW.before_state IS NOT DISTINCT FROM OLD.before_state OR NEW.before_state = '[erased]')
       AND (NEW.after_state IS NOT DISTINCT FROM OLD.after_state OR NEW.after_state = '[erased]')
       AND (NEW.reason IS NOT DISTINCT FROM OLD.reason OR NEW.reason = '[erased]')
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'operator_log is append-only';
END
$$;
