-- Each supplier's health (issue 47), one row per supplier every node shares:
-- its definite failures and timeouts in a row, the back-off they started
-- (`backoff_until_ms`, NULL while healthy), the probe in flight after it, how
-- many times it went down (`episodes`: the owner's alerts are one per
-- episode) and its last errors (JSON, messages for people). The rules are
-- `billpay_domain::supplier_health`'s.
CREATE TABLE supplier_health (
    supplier          TEXT PRIMARY KEY,
    failures          BIGINT NOT NULL DEFAULT 0,
    backoffs          BIGINT NOT NULL DEFAULT 0,
    backoff_until_ms  BIGINT,
    probe_until_ms    BIGINT,
    episodes          BIGINT NOT NULL DEFAULT 0,
    down_at_ms        BIGINT,
    back_at_ms        BIGINT,
    last_errors       TEXT NOT NULL DEFAULT '[]',
    updated_at_ms     BIGINT NOT NULL DEFAULT 0
);
-- What a delivery last really cost at each supplier, per product, provider
-- and plan (`plan_key` '' for a product without plans, with the face value it
-- was for): the cheapest route's "last known cost", written only when it
-- changes.
CREATE TABLE supplier_costs (
    supplier    TEXT NOT NULL,
    product     TEXT NOT NULL,
    provider    TEXT NOT NULL,
    plan_key    TEXT NOT NULL,
    cost        BIGINT NOT NULL,
    face_value  BIGINT NOT NULL,
    at_ms       BIGINT NOT NULL,
    PRIMARY KEY (supplier, product, provider, plan_key)
);
