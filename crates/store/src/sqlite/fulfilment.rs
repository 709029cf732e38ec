//! The fulfilment worker's side: claiming due purchases under a lease,
//! recording what the supplier was asked, rescheduling, and the final status
//! with its refund and outbox event.

use super::claims::{FULFILMENTS, claim_due};
use super::purchases::get;
use super::rows::transaction;
use super::statements::{collect, execute, json_list, query_row};
use super::wallet::{Entry, post_ledger};
use super::{Lite, SqliteStore};
use crate::areas::notices;
use crate::clock::{new_code, rfc3339};
use crate::columns::{EVENT_COLUMNS, TX_COLUMNS};
use crate::db::ready;
use crate::rules::ms_from_now;
use crate::*;
use async_trait::async_trait;
use billpay_domain::TxStatus;
use rusqlite::{Connection, params};
use std::sync::LazyLock;
use std::time::Duration;

#[async_trait]
impl FulfilmentStore for SqliteStore {
    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        self.engine
            .write(move |conn| {
                claim_due(
                    conn,
                    &FULFILMENTS,
                    (limit, lease),
                    &[],
                    crate::rows::transaction,
                )
            })
            .await
    }

    async fn claim_watches(&self, limit: u32, lease: Duration) -> StoreResult<Vec<Transaction>> {
        self.engine
            .write(move |conn| claim_watches(conn, limit, lease))
            .await
    }

    async fn rewatch(&self, code: &str, at_ms: Option<i64>) -> StoreResult<()> {
        let code = code.to_owned();
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "UPDATE transactions SET watch_at = ?1, lease_until = 0
                     WHERE code = ?2 AND status = 'successful'",
                    params![at_ms, code],
                )?;
                Ok(())
            })
            .await
    }

    /// Extends the leases of transactions still being processed.
    async fn renew_fulfilment_leases(
        &self,
        codes: Vec<String>,
        lease: Duration,
    ) -> StoreResult<()> {
        if codes.is_empty() {
            return Ok(());
        }
        let codes = json_list(&codes)?;
        self.engine
            .write(move |conn| {
                // `lease_until > 0`: a transaction rescheduled or finalized in
                // the meantime has released its lease; never take it back.
                execute(
                    conn,
                    "UPDATE transactions SET lease_until = ?1
                     WHERE code IN (SELECT value FROM json_each(?2))
                       AND status IN ('processing', 'successful') AND lease_until > 0",
                    params![ms_from_now(lease), codes],
                )?;
                Ok(())
            })
            .await
    }

    async fn mark_submitted(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        let (code, supplier) = (code.to_owned(), supplier.to_owned());
        let supplier_reference = supplier_reference.map(str::to_owned);
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "UPDATE transactions SET submitted = 1, supplier = ?2, supplier_reference = ?3 WHERE code = ?1",
                    params![code, supplier, supplier_reference],
                )?;
                Ok(())
            })
            .await
    }

    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()> {
        let (code, note) = (code.to_owned(), note.to_owned());
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "UPDATE transactions SET attempts = attempts + 1, next_attempt_at = ?1, lease_until = 0,
                       result = json_set(result, '$.last_note', ?2)
                     WHERE code = ?3 AND status = 'processing'",
                    params![ms_from_now(delay), note, code],
                )?;
                Ok(())
            })
            .await
    }

    /// The final status, its refund if failed, and its outbox event; `false`
    /// when the transaction does not take this finalization (nothing changed).
    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        let code = code.to_owned();
        self.engine
            .write(move |conn| finalize_in(conn, &code, &fin))
            .await
    }

    /// How many purchases are `processing`, and since when the oldest.
    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        self.engine
            .read(|conn| {
                Ok(query_row(conn, crate::BACKLOG, [], |r| {
                    Ok(Backlog {
                        processing: r.get::<_, i64>(0)? as u64,
                        oldest_created_at: r.get(1)?,
                    })
                })?)
            })
            .await
    }
}

/// Leases the successful transactions whose reversal watch is due.
fn claim_watches(conn: &Connection, limit: u32, lease: Duration) -> StoreResult<Vec<Transaction>> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "UPDATE transactions SET lease_until = ?1
             WHERE code IN (SELECT code FROM transactions
                 WHERE watch_at IS NOT NULL AND watch_at <= ?2
                   AND status = 'successful' AND lease_until <= ?2
                 ORDER BY watch_at LIMIT ?3)
             RETURNING {TX_COLUMNS}"
        )
    });
    let now = crate::clock::now_ms();
    let until = now + lease.as_millis() as i64;
    collect(conn, &SQL, params![until, now, limit], transaction)
}

/// The transaction's webhook event (sent again on a reversal).
fn queue_event(conn: &Connection, tx: &Transaction, fin: &Finalization) -> StoreResult<()> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        include_str!("sql/insert_event.sql")
            .replace("{columns}", EVENT_COLUMNS)
            .replace("{resend}", RESEND_ON_REVERSAL)
    });
    execute(
        conn,
        &SQL,
        params![
            new_code("EV"),
            tx.code,
            tx.account_id.to_string(),
            tx.key_id.to_string(),
            tx.product.event(),
            fin.event_payload,
            rfc3339(fin.completed_at_ms),
            fin.completed_at_ms,
        ],
    )?;
    Ok(())
}

/// A final status, its refund (if failed) and its outbox event, inside the
/// caller's transaction; `false` when the transaction was already final.
pub(super) fn finalize_in(conn: &Connection, code: &str, fin: &Finalization) -> StoreResult<bool> {
    let tx = get(conn, code)?;
    if !fin.applies_to(tx.status) {
        return Ok(false);
    }
    execute(
        conn,
        include_str!("sql/finalize.sql"),
        params![
            fin.status.as_str(),
            fin.message,
            fin.result.to_string(),
            rfc3339(fin.completed_at_ms),
            code,
            fin.cost.map(|c| c.0),
            fin.watch_at_ms,
        ],
    )?;
    if fin.status == TxStatus::Failed {
        post_ledger(conn, tx.account_id, tx.amount, Entry::Refund(code))?;
    }
    queue_event(conn, &tx, fin)?;
    let lite = Lite(conn);
    ready(notices::purchase_final(&lite, code, tx.product, fin.status))?;
    Ok(true)
}
