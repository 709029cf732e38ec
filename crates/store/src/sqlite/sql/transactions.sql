SELECT {columns} FROM transactions WHERE (?1 IS NULL OR account_id = ?1)
  AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR product = ?3)
  AND (?4 IS NULL OR created_at >= ?4) AND (?5 IS NULL OR created_at < ?5)
  AND (?6 IS NULL OR instr(reference, ?6) > 0 OR instr(code, ?6) > 0)
  AND (?9 IS NULL OR provider = ?9) AND (?10 IS NULL OR supplier = ?10)
  AND (?11 IS NULL OR instr(recipient, ?11) > 0) AND (?12 = 0 OR held_for IS NULL)
ORDER BY created_at DESC, code DESC LIMIT ?7 OFFSET ?8
