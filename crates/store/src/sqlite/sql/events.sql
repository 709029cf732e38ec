SELECT {columns} FROM events WHERE (?1 IS NULL OR account_id = ?1)
  AND (?2 = 0 OR status = 'failed') AND (?4 IS NULL OR key_id = ?4)
ORDER BY created_at DESC LIMIT ?3
