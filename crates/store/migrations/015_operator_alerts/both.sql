-- Operators' alerts (issue 30): every alert of an operator's role is on
-- until the operator turns it off on "My account"; a row is one turned off.
CREATE TABLE operator_alert_opt_outs (
    operator_id BIGINT NOT NULL REFERENCES operators (id),
    kind        TEXT NOT NULL,
    PRIMARY KEY (operator_id, kind)
);
-- (The console's list of the outbox, newest first, uses `notices_created` of the outbox's migration.)
