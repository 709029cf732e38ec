SELECT substr(created_at, 1, 10) AS day, product, COUNT(*) AS purchases,
    SUM(amount) AS spent FROM transactions
WHERE account_id = ?1 AND created_at >= ?2 AND status != 'failed'
GROUP BY day, product ORDER BY day, product
