INSERT INTO transactions (code, account_id, key_id, reference, product, provider, plan_id, label,
  recipient, amount, details, batch_id, status, message, balance_before, balance_after,
  next_attempt_at, created_at, face_value, tier, held_for)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'processing', ?20, ?13, ?14, ?15, ?16,
  ?17, ?18, ?19)
