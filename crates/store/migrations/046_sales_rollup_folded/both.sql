-- Issue 48: the unsharded sales rollup of migration 038 folded into shard 0 of
-- `sales_rollup_shards` (044). No node of the last release writes `sales_rollup`
-- (its finalizations write their shard), and from this release on no node reads it.
-- It is emptied, not dropped: a node of the last release still sums it with the
-- shards during this release's rolling upgrade, and finds it empty, its rows now in
-- shard 0, so its sums stay the same. The migration after the next release drops it
-- (docs/decisions.md, "The hourly sales rollup").
INSERT INTO sales_rollup_shards (hour, product, provider, supplier, tier, status, shard,
    purchases, face_value, charged, cost, charged_with_cost, cost_unknown)
SELECT hour, product, provider, supplier, tier, status, 0,
    purchases, face_value, charged, cost, charged_with_cost, cost_unknown
FROM sales_rollup
WHERE true
ON CONFLICT (hour, product, provider, supplier, tier, status, shard) DO UPDATE SET
    purchases = sales_rollup_shards.purchases + excluded.purchases,
    face_value = sales_rollup_shards.face_value + excluded.face_value,
    charged = sales_rollup_shards.charged + excluded.charged,
    cost = sales_rollup_shards.cost + excluded.cost,
    charged_with_cost = sales_rollup_shards.charged_with_cost + excluded.charged_with_cost,
    cost_unknown = sales_rollup_shards.cost_unknown + excluded.cost_unknown;
DELETE FROM sales_rollup;
