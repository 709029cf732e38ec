SELECT {columns} FROM events WHERE ($1::TEXT IS NULL OR account_id = $1)
  AND (NOT $2 OR status = 'failed') AND ($4::TEXT IS NULL OR key_id = $4)
ORDER BY created_at DESC LIMIT $3
