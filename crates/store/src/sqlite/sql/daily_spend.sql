-- days are Lagos days (UTC+1 all year: clock::LAGOS)
SELECT date(created_at, '+1 hour') AS day, product, COUNT(*) AS purchases,
    SUM(amount) AS spent FROM transactions
WHERE account_id = ?1 AND created_at >= ?2 AND status != 'failed'
GROUP BY day, product ORDER BY day, product
