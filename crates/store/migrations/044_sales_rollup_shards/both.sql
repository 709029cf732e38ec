-- Issue 48: the hourly sales rollup written in shards. Every finalization
-- adds to its hour's row, and on PostgreSQL the concurrent transactions of
-- the workers' lanes (and of other nodes) all wanted the same row: each
-- waited for the last one's COMMIT, and the workers made purchases final at
-- a quarter of the rate they were placed (docs/benchmarks.md). Here a row is
-- per rollup key and shard; a PostgreSQL transaction writes the shard of its
-- connection (`pg_backend_pid() % 16`), SQLite's one writer shard 0; readers
-- sum the shards (`areas/sales_rollup.rs`).
--
-- A new table, not a column of `sales_rollup`: a node of the previous release
-- still upserts `sales_rollup` by its six-column key during a rolling upgrade,
-- and the readers sum both tables. The migration after the next release folds
-- `sales_rollup` into this one and drops it (docs/decisions.md).
CREATE TABLE sales_rollup_shards (
    hour TEXT COLLATE "C" NOT NULL,
    product TEXT NOT NULL,
    provider TEXT NOT NULL,
    supplier TEXT NOT NULL,
    tier TEXT NOT NULL,
    status TEXT NOT NULL,
    shard INTEGER NOT NULL,
    purchases BIGINT NOT NULL,
    face_value BIGINT NOT NULL,
    charged BIGINT NOT NULL,
    cost BIGINT NOT NULL,
    charged_with_cost BIGINT NOT NULL,
    cost_unknown BIGINT NOT NULL,
    PRIMARY KEY (hour, product, provider, supplier, tier, status, shard)
) WITHOUT ROWID;
