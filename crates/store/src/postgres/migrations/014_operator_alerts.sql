-- Operators' alerts (issue 30): every alert of an operator's role is on
-- until the operator turns it off on "My account"; a row is one turned off.
CREATE TABLE operator_alert_opt_outs (
    operator_id BIGINT NOT NULL REFERENCES operators (id),
    kind        TEXT NOT NULL,
    PRIMARY KEY (operator_id, kind)
);
-- The console's Notifications page lists the outbox newest first.
CREATE INDEX notices_created ON notices (created_at);
