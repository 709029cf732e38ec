-- A final status, its refund (if failed; ledger kind $11) with its usage
-- given back (docs/limits.md), its sales rollup row, and its outbox event (skipped at once, with
-- its attempt, for a key without a webhook URL), as one statement. Only a
-- transaction in status $10 changes (the row lock makes a concurrent
-- finalize on another node wait, then find it final).
-- $12 is the supplier's cost of a successful one (NULL: unknown or failed);
-- $13 when to requery it for a reversal (NULL: not watched).
-- The customer's notice, if its product and status have one (as
-- `areas/notices.rs` `purchase_notice` says; receipts for {receipts}): by
-- email ($14) unless turned off, by SMS ($15) if turned on and the phone proven,
-- only for a verified address; $16 its data; bounded per hour as `notices::add`
-- bounds every notice ($17 the clock hour, $18 the kind's bound).
-- Answers (the transaction exists, rows changed, notices dropped by email, by SMS).
WITH current AS (
    SELECT code, cost FROM transactions WHERE code = $1 AND status = $10 FOR UPDATE
), changed AS (
    UPDATE transactions t SET status = $2, message = $3, result = $4, completed_at = $5,
      attempts = t.attempts + 1, lease_until = 0, cost = $12,
      watch_at = $13
    FROM current WHERE t.code = current.code
    RETURNING t.account_id, t.key_id, t.amount, t.product, t.recipient, t.created_at,
      t.provider, t.supplier, t.tier, t.face_value, t.cost,
      -- the Lagos day it was placed in (UTC+1 all year: clock::LAGOS)
      to_char((t.created_at::timestamptz AT TIME ZONE 'UTC') + INTERVAL '1 hour', 'YYYY-MM-DD')
        AS day
), refunded AS (
    UPDATE accounts a SET balance = a.balance + changed.amount FROM changed
    WHERE $2 = 'failed' AND a.id = changed.account_id
    RETURNING a.id, a.balance, changed.amount, changed.recipient, changed.day
), refund AS (
    INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, created_at)
    SELECT id, amount, $11, balance, $1, $7 FROM refunded
), day_given_back AS (
    -- The refund's usage given back (never below zero), joined to `refunded`
    -- so the wallet's row is locked first, as a purchase locks them; the
    -- hourly counts are kept (they count attempts).
    UPDATE limit_usage u SET value = GREATEST(u.value - r.amount, 0),
      count = GREATEST(u.count - 1, 0)
    FROM refunded r WHERE u.account_id = r.id AND u.day = r.day
), recipient_given_back AS (
    UPDATE recipient_usage u SET value = GREATEST(u.value - r.amount, 0)
    FROM refunded r WHERE u.account_id = r.id AND u.recipient = r.recipient AND u.day = r.day
), rolled_up AS (
    -- The sales rollup, as `areas/sales_rollup.rs` writes it (an interim
    -- copy until PostgreSQL runs the Rust finalize): the purchase counted in
    -- its final status; a reversal ($10 successful) taken out of its
    -- successful row first, with the cost it had.
    INSERT INTO sales_rollup (hour, product, provider, supplier, tier, status, purchases,
      face_value, charged, cost, charged_with_cost, cost_unknown)
    SELECT SUBSTR(c.created_at, 1, 13), c.product, c.provider, COALESCE(c.supplier, ''),
      COALESCE(c.tier, ''), s.status, s.sign, s.sign * COALESCE(c.face_value, c.amount),
      s.sign * c.amount, s.sign * COALESCE(s.cost, 0),
      CASE WHEN s.cost IS NULL THEN 0 ELSE s.sign * c.amount END,
      CASE WHEN s.cost IS NULL THEN s.sign ELSE 0 END
    FROM changed c CROSS JOIN current o
    CROSS JOIN LATERAL (VALUES ($2::text, 1, c.cost), ($10::text, -1, o.cost))
      AS s (status, sign, cost)
    WHERE s.sign = 1 OR $10 = 'successful'
    ON CONFLICT (hour, product, provider, supplier, tier, status) DO UPDATE SET
      purchases = sales_rollup.purchases + excluded.purchases,
      face_value = sales_rollup.face_value + excluded.face_value,
      charged = sales_rollup.charged + excluded.charged,
      cost = sales_rollup.cost + excluded.cost,
      charged_with_cost = sales_rollup.charged_with_cost + excluded.charged_with_cost,
      cost_unknown = sales_rollup.cost_unknown + excluded.cost_unknown
), event AS (
    INSERT INTO events (id, transaction_code, account_id, key_id, event, payload, status,
      attempts, created_at, next_attempt_at)
    SELECT $6, $1, c.account_id, c.key_id, CASE c.product {events} END, $8, {first_state}, $5, $9
    FROM changed c LEFT JOIN api_keys k ON k.id = c.key_id {resend}
    RETURNING id, status
), skipped AS (
    -- A key without a webhook URL: the event's one attempt says why.
    INSERT INTO webhook_attempts (event_id, url, http_status, error, latency_ms,
      response_excerpt, created_at)
    SELECT id, NULL, NULL, {no_webhook_url}, 0, '', $7 FROM event WHERE status = 'skipped'
), notice_kind AS (
    SELECT account_id,
      CASE WHEN $2 = 'failed' THEN 'purchase_refunded' ELSE 'purchase_receipt' END AS kind
    FROM changed WHERE $2 = 'failed' OR product IN ({receipts})
), wanted AS (
    -- only to a verified address (`notices::VERIFIED`) and a proven phone
    SELECT n.id, k.kind, n.channel, n.recipient, a.id AS account_id,
      'account:' || a.id || ':' || n.channel || ':' || k.kind AS account_scope,
      n.channel || ':' || encode(sha256(convert_to(lower(n.recipient), 'UTF8')), 'hex')
        || ':' || k.kind AS destination_scope
    FROM notice_kind k
    JOIN accounts a ON a.id = k.account_id
    LEFT JOIN notice_preferences p ON p.account_id = a.id
    CROSS JOIN LATERAL (VALUES
      ($14::text, 'email', a.email, CASE WHEN $2 = 'failed' THEN COALESCE(p.refund_email, TRUE)
                                    ELSE COALESCE(p.receipt_email, TRUE) END),
      ($15::text, 'sms', CASE WHEN p.phone_proven_at IS NOT NULL THEN p.phone END,
                         CASE WHEN $2 = 'failed' THEN COALESCE(p.refund_sms, FALSE)
                                  ELSE COALESCE(p.receipt_sms, FALSE) END)
    ) AS n (id, channel, recipient, wanted)
    WHERE n.wanted AND n.recipient IS NOT NULL
      AND (a.signed_up = 'operator' OR a.email_verified_at IS NOT NULL)
), counted AS (
    -- the hourly bound ($18 in clock hour $17), as `notices::add` counts it;
    -- a place taken in one scope is not given back when the other is full
    INSERT INTO notice_counts (scope, hour, sent)
    SELECT s.scope, $17::bigint, 1 FROM wanted w
    CROSS JOIN LATERAL (VALUES (w.account_scope), (w.destination_scope)) AS s (scope)
    ON CONFLICT (scope, hour) DO UPDATE SET sent = notice_counts.sent + 1
    WHERE notice_counts.sent < $18::integer
    RETURNING scope
), notice AS (
    INSERT INTO notices (id, cause, kind, channel, recipient, account_id, data, status,
      last_error, next_attempt_at, created_at)
    SELECT w.id, 'purchase:' || $1 || ':' || w.kind, w.kind, w.channel, w.recipient,
      w.account_id, $16,
      CASE WHEN s.recipient IS NULL THEN 'queued' ELSE 'failed' END,
      CASE WHEN s.recipient IS NULL THEN NULL
           ELSE 'not sent: this address was refused before (' || s.reason || ')' END,
      $9, $7
    FROM wanted w
    LEFT JOIN notice_suppressions s ON s.channel = w.channel AND s.recipient = w.recipient
    WHERE (SELECT COUNT(*) FROM counted c
           WHERE c.scope IN (w.account_scope, w.destination_scope)) = 2
    ON CONFLICT (cause, channel) DO NOTHING
    RETURNING channel
)
SELECT EXISTS (SELECT 1 FROM transactions WHERE code = $1), (SELECT COUNT(*) FROM changed),
  -- notices dropped over the hourly bound, by email and by SMS
  (SELECT COUNT(*) FROM wanted WHERE channel = 'email')
    - (SELECT COUNT(*) FROM notice WHERE channel = 'email'),
  (SELECT COUNT(*) FROM wanted WHERE channel = 'sms')
    - (SELECT COUNT(*) FROM notice WHERE channel = 'sms')
