SELECT {columns} FROM transactions WHERE ($1::TEXT IS NULL OR account_id = $1)
  AND ($2::TEXT IS NULL OR status = $2) AND ($3::TEXT IS NULL OR product = $3)
  AND ($4::TEXT IS NULL OR created_at >= $4) AND ($5::TEXT IS NULL OR created_at < $5)
  AND ($6::TEXT IS NULL OR strpos(reference, $6) > 0 OR strpos(code, $6) > 0)
  AND ($9::TEXT IS NULL OR provider = $9) AND ($10::TEXT IS NULL OR supplier = $10)
  AND ($11::TEXT IS NULL OR strpos(recipient, $11) > 0) AND (NOT $12 OR held_for IS NULL)
ORDER BY created_at DESC, code DESC LIMIT $7 OFFSET $8
