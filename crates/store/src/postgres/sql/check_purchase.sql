SELECT a.balance, EXISTS (SELECT 1 FROM transactions t
    WHERE t.account_id = a.id AND t.reference = $2)
FROM accounts a WHERE a.id = $1
