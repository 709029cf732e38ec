-- A funding's ledger entry ($3: 'credit' for the payment, positive; 'fee',
-- negative), with the guarded wallet move of `areas::wallet::post_ledger`; no row when
-- the balance would go below zero.
WITH moved AS (
    UPDATE accounts SET balance = balance + $1 WHERE id = $2 AND balance + $1 >= 0
    RETURNING balance
)
INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, credit_reference,
    created_at, credit_source, funding_id)
SELECT $2, $1, $3, balance, NULL, $4, $5, $6, $7 FROM moved
RETURNING balance_after
