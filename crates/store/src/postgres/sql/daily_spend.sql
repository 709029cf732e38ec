-- days are Lagos days (UTC+1 all year: clock::LAGOS)
SELECT to_char((created_at::timestamptz AT TIME ZONE 'UTC') + INTERVAL '1 hour', 'YYYY-MM-DD') AS day,
    product, COUNT(*) AS purchases, SUM(amount)::BIGINT AS spent
FROM transactions
WHERE account_id = $1 AND created_at >= $2 AND status <> 'failed'
GROUP BY day, product ORDER BY day, product
