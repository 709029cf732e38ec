SELECT outcome, before_kobo, after_kobo, limit_name, limit_value, used, held, held_for
FROM billpay_place_reviewed_purchase(
    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
    $19, $20, $21, $22)
