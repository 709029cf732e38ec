-- Issue 48: placement is one Rust path on both engines (`areas/purchases.rs::place`)
-- since the release before the last. The PL/pgSQL placements stayed defined so that,
-- during that release's rolling upgrade, a node of the release before it could still
-- call them; no node of the last release or of this one does. Their five generations
-- go (docs/decisions.md, "The PL/pgSQL placement functions are retired in two steps").
-- The append-only triggers' functions stay: they guard the ledger and the operator log.
DROP FUNCTION IF EXISTS billpay_place_reviewed_purchase;
DROP FUNCTION IF EXISTS billpay_fixed_refusal;
DROP FUNCTION IF EXISTS billpay_place_limited_purchase;
DROP FUNCTION IF EXISTS billpay_place_priced_purchase;
DROP FUNCTION IF EXISTS billpay_place_purchase;
