-- `RETURNING` so the statement answers one row, found or not.
WITH marked AS (
    UPDATE transactions SET submitted = TRUE, supplier = $2, supplier_reference = $3
    WHERE code = $1 RETURNING 1
)
SELECT COUNT(*) FROM marked
