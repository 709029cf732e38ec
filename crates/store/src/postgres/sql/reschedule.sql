UPDATE transactions SET attempts = attempts + 1, next_attempt_at = $1, lease_until = 0,
  result = jsonb_set(result::jsonb, '{last_note}', to_jsonb($2::TEXT))::TEXT
WHERE code = $3 AND status = 'processing'
