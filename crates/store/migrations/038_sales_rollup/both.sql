-- Issue 48: the hourly sales rollup the console's overview, the sales report
-- and the daily summary read instead of every purchase. A row per UTC hour of
-- placement (`SUBSTR(created_at, 1, 13)`, the report's hour) and product,
-- provider, supplier ('' = none), tier ('' = list prices) and final status,
-- with the sums the report needs. Written in the transaction of each
-- finalization (a reversal moves its purchase from successful to failed),
-- built here from the purchases already final (`areas/sales_rollup.rs`
-- `backfill`, appended to this step); `billpay audit` checks it equals them.
CREATE TABLE sales_rollup (
    hour TEXT COLLATE "C" NOT NULL,
    product TEXT NOT NULL,
    provider TEXT NOT NULL,
    supplier TEXT NOT NULL,
    tier TEXT NOT NULL,
    status TEXT NOT NULL,
    purchases BIGINT NOT NULL,
    face_value BIGINT NOT NULL,
    charged BIGINT NOT NULL,
    cost BIGINT NOT NULL,
    charged_with_cost BIGINT NOT NULL,
    cost_unknown BIGINT NOT NULL,
    PRIMARY KEY (hour, product, provider, supplier, tier, status)
) WITHOUT ROWID;
