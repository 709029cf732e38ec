//! The workers' claims: due rows of a work queue, leased in one statement.

use super::statements::{Lite, json_list};
use crate::StoreResult;
use crate::clock::now_ms;
use crate::columns::{EVENT_COLUMNS, TX_COLUMNS};
use crate::db::{RowRead, Tx, ready};
use billpay_domain::KeyId;
use rusqlite::Connection;
use std::time::Duration;

/// A queue the workers claim from: rows in `status` whose time has come.
pub(super) struct WorkQueue {
    table: &'static str,
    id: &'static str,
    status: &'static str,
    columns: &'static str,
}

pub(super) const FULFILMENTS: WorkQueue = WorkQueue {
    table: "transactions",
    id: "code",
    status: "processing",
    columns: TX_COLUMNS,
};

pub(super) const EVENTS: WorkQueue = WorkQueue {
    table: "events",
    id: "id",
    status: "pending",
    columns: EVENT_COLUMNS,
};

/// Leases up to `limit` due, unleased rows of a work queue, oldest due
/// first, none of the keys in `skip_keys`.
pub(super) fn claim_due<T>(
    conn: &Connection,
    queue: &WorkQueue,
    (limit, lease): (u32, Duration),
    skip_keys: &[KeyId],
    map: fn(&dyn RowRead) -> StoreResult<T>,
) -> StoreResult<Vec<T>> {
    let WorkQueue {
        table,
        id,
        status,
        columns,
    } = queue;
    let now = now_ms();
    let skip: Vec<String> = skip_keys.iter().map(KeyId::to_string).collect();
    let lease_until = now + lease.as_millis() as i64;
    let skip = json_list(&skip)?;
    ready(Lite(conn).query_all(
        &format!(
            "UPDATE {table} SET lease_until = ?1
             WHERE {id} IN (SELECT {id} FROM {table} WHERE status = '{status}'
                 AND next_attempt_at <= ?2 AND lease_until <= ?2
                 AND key_id NOT IN (SELECT value FROM json_each(?4))
                 ORDER BY next_attempt_at LIMIT CAST(?3 AS BIGINT))
             RETURNING {columns}"
        ),
        &[&lease_until, &now, &i64::from(limit), &skip],
        map,
    ))
}
