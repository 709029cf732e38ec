-- A final status, its refund (if failed; ledger kind $11) and its outbox
-- event, as one statement. Only a transaction in status $10 changes (the row
-- lock makes a concurrent finalize on another node wait, then find it final).
-- $12 is the supplier's cost of a successful one (NULL: unknown or failed);
-- $13 when to requery it for a reversal (NULL: not watched).
-- Answers (the transaction exists, rows changed).
WITH current AS (
    SELECT code FROM transactions WHERE code = $1 AND status = $10 AND $2 <> $10 FOR UPDATE
), changed AS (
    UPDATE transactions t SET status = $2, message = $3, result = $4, completed_at = $5,
      attempts = t.attempts + 1, lease_until = 0, cost = $12,
      watch_at = $13
    FROM current WHERE t.code = current.code
    RETURNING t.account_id, t.key_id, t.amount, t.product
), refunded AS (
    UPDATE accounts a SET balance = a.balance + changed.amount FROM changed
    WHERE $2 = 'failed' AND a.id = changed.account_id
    RETURNING a.id, a.balance, changed.amount
), refund AS (
    INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, created_at)
    SELECT id, amount, $11, balance, $1, $7 FROM refunded
), event AS (
    INSERT INTO events (id, transaction_code, account_id, key_id, event, payload, status,
      attempts, created_at, next_attempt_at)
    SELECT $6, $1, account_id, key_id, CASE product {events} END, $8, 'pending', 0, $5, $9
    FROM changed {resend}
)
SELECT EXISTS (SELECT 1 FROM transactions WHERE code = $1), (SELECT COUNT(*) FROM changed)
