UPDATE transactions SET status = ?1, message = ?2, result = ?3, completed_at = ?4,
  attempts = attempts + 1, lease_until = 0, cost = ?6, watch_at = ?7 WHERE code = ?5
