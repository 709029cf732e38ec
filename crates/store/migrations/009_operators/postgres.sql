-- The log is append-only: on PostgreSQL by this function's triggers.
CREATE FUNCTION billpay_operator_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'operator_log is append-only';
END
$$;
CREATE TRIGGER operator_log_append_only BEFORE UPDATE OR DELETE ON operator_log
    FOR EACH ROW EXECUTE FUNCTION billpay_operator_log_append_only();
CREATE TRIGGER operator_log_no_truncate BEFORE TRUNCATE ON operator_log
    FOR EACH STATEMENT EXECUTE FUNCTION billpay_operator_log_append_only();
