//! The fulfilment worker's queue of purchases: due purchases claimed under a
//! lease, what the supplier was asked, rescheduling, the reversal watch, and
//! the final status with its refund, outbox event, notice and sales rollup.
//!
//! Both engines run the functions here: SQLite in its writer's group
//! commit, PostgreSQL marking a purchase submitted and the finalize as units
//! of its group-committed lanes (`postgres/fulfilment.rs`; a refund in a
//! transaction of its own).

use super::claims::{claim, claim_sql};
use super::{events, notices, operators, referrals, sales_rollup, wallet};
use crate::clock::{new_code, now_ms, now_rfc3339, rfc3339};
use crate::columns::{EVENT_COLUMNS, TX_COLUMNS, qualified};
use crate::db::{
    Changing, Column, Engine, Guarded, One, Param, PerEngine, ReadTx, Reading, Statements, Tx, col,
    for_both_engines, json_list, json_values,
};
use crate::rows::transaction;
use crate::rules::ms_from_now;
use crate::*;
use billpay_domain::{AccountId, KeyId, Kobo, Product, TxStatus};
use std::sync::LazyLock;
use std::time::Duration;

for_both_engines! {
    /// The fulfilment worker's queue of purchases.
    pub trait FulfilmentStore {
        /// Leases up to `limit` due processing transactions, oldest placed first.
        fn claim_fulfilments(limit: u32, lease: Duration) -> Vec<Transaction>
            = claim opened |tx| claim_due(tx, limit, lease);
        /// Leases up to `limit` successful transactions whose reversal watch is
        /// due (`Finalization::watch_at_ms`), soonest first.
        fn claim_watches(limit: u32, lease: Duration) -> Vec<Transaction>
            = claim opened |tx| claim(tx, &WATCHES, (limit, lease), &[], transaction);
        /// A watched successful transaction was requeried and still stands: watch
        /// it again at `at_ms`, or (`None`) no more; its lease is released.
        fn rewatch(code: &str, at_ms: Option<i64>) -> ()
            = statement |tx| rewatch(tx, &code, at_ms);
        /// Extends the lease of transactions still being processed (the worker's
        /// heartbeat; a watched successful one too), so a short lease never expires
        /// under a live worker while a crashed worker's transactions are picked up again soon.
        fn renew_fulfilment_leases(codes: Vec<String> => codes, lease: Duration) -> ()
            = statement |tx| renew_leases(tx, &codes, lease);
        /// Records that the supplier was asked, before asking: after a crash we requery instead.
        fn mark_submitted(code: &str, supplier: &str, supplier_reference: Option<&str>
            => supplier_reference.map(str::to_owned)) -> ()
            = statement |tx| mark_submitted(tx, &code, &supplier, supplier_reference.as_deref()),
            postgres |store| store.mark_submitted_here(code, supplier, supplier_reference);
        /// Outcome unknown or pending: check again after `delay`.
        fn reschedule(code: &str, delay: Duration, note: &str) -> ()
            = statement |tx| reschedule(tx, &code, delay, &note);
        /// Outcome unknown and the supplier's books cannot say (`note`, the
        /// evidence): rescheduled as `reschedule` does, and it needs the
        /// operator's review now (`review_requested_at`, set once; kept until
        /// it is final).
        fn request_review(code: &str, delay: Duration, note: &str) -> ()
            = statement |tx| request_review(tx, &code, delay, &note);
        /// Final status + refund (if failed) + outbox event, in one transaction.
        /// `false` when the transaction was already final (nothing changed).
        fn finalize(code: &str, #[sealed] fin: Finalization => fin) -> bool
            = guarded |tx| finalize(tx, &code, &fin),
            postgres |store| store.finalize_here(code, fin);
        /// How many purchases are `processing`, and since when the oldest.
        fn fulfilment_backlog() -> Backlog = read |tx| backlog(tx);
        /// How many of them (held ones aside) were created before `before`
        /// (RFC 3339) or were flagged for review (`request_review`), counted
        /// up to `cap`: the needs-review count, read through the processing
        /// rows' index, never a scan of every purchase.
        fn needs_review_count(before: &str, cap: u32) -> u64
            = read |tx| needs_review_count(tx, &before, cap);
    }
}

/// Due processing transactions, oldest due first; never one held for
/// review (it waits at a far `next_attempt_at` as well, for a node of the
/// previous release).
static FULFILMENTS: PerEngine = PerEngine::new(|engine| {
    let due = "status = 'processing' AND next_attempt_at <= ?2 AND held_for IS NULL";
    claim_sql(
        engine,
        "transactions",
        "code",
        (due, "next_attempt_at"),
        TX_COLUMNS,
    )
});

/// Successful transactions whose reversal watch is due, soonest first.
static WATCHES: PerEngine = PerEngine::new(|engine| {
    let due = "watch_at IS NOT NULL AND watch_at <= ?2 AND status = 'successful'";
    claim_sql(
        engine,
        "transactions",
        "code",
        (due, "watch_at"),
        TX_COLUMNS,
    )
});

async fn claim_due<T: Tx>(
    tx: One<'_, T>,
    limit: u32,
    lease: Duration,
) -> Result<Vec<Transaction>, T::Error> {
    let mut claimed = claim(tx, &FULFILMENTS, (limit, lease), &[], transaction).await?;
    // The order a statement returns its rows in is neither engine's promise.
    claimed.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    Ok(claimed)
}

async fn rewatch<T: Tx>(tx: One<'_, T>, code: &str, at_ms: Option<i64>) -> Result<(), T::Error> {
    let sql = "UPDATE transactions SET watch_at = ?1, lease_until = 0
               WHERE code = ?2 AND status = 'successful'";
    tx.execute(sql, &[&at_ms, &code]).await?;
    Ok(())
}

/// `lease_until > 0`: a transaction rescheduled or finalized in the meantime
/// has released its lease; never take it back. PostgreSQL skips a row a
/// worker's batch is writing right now (left for the next heartbeat): waiting
/// for it could deadlock with that batch (both lock several rows, in no
/// common order).
async fn renew_leases<T: Tx>(
    tx: One<'_, T>,
    codes: &[String],
    lease: Duration,
) -> Result<(), T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| {
        format!(
            "UPDATE transactions SET lease_until = ?1
             WHERE code IN (SELECT code FROM transactions
                 WHERE code IN ({}) AND status IN ('processing', 'successful')
                   AND lease_until > 0{})",
            json_values(engine, "?2"),
            engine.skip_locked()
        )
    });
    if codes.is_empty() {
        return Ok(());
    }
    let sql = SQL.sql(T::ENGINE);
    tx.execute(sql, &[&ms_from_now(lease), &json_list(codes)?])
        .await?;
    Ok(())
}

/// Records that the supplier was asked, before asking.
pub(crate) async fn mark_submitted<'a, T: Tx + 'a>(
    tx: impl Into<One<'a, T>>,
    code: &str,
    supplier: &str,
    supplier_reference: Option<&str>,
) -> Result<(), T::Error> {
    let tx: One<'a, T> = tx.into();
    tx.execute(MARK_SUBMITTED, &[&code, &supplier, &supplier_reference])
        .await?;
    Ok(())
}

/// Marks a purchase submitted: `?1` its code, `?2` the supplier, `?3` the
/// supplier's reference.
const MARK_SUBMITTED: &str = "UPDATE transactions
    SET submitted = TRUE, supplier = ?2, supplier_reference = ?3 WHERE code = ?1";

/// A processing purchase's next attempt after `?1`, the note `?2` in its
/// stored result, by its code `?3`; `also` sets more.
fn next_attempt(engine: Engine, also: &str) -> String {
    format!(
        "UPDATE transactions SET attempts = attempts + 1, next_attempt_at = ?1,
           lease_until = 0, result = {}{also}
         WHERE code = ?3 AND status = 'processing'",
        with_note(engine)
    )
}

/// The note goes in the stored result's `last_note` (JSON text on both).
async fn reschedule<T: Tx>(
    tx: One<'_, T>,
    code: &str,
    delay: Duration,
    note: &str,
) -> Result<(), T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| next_attempt(engine, ""));
    tx.execute(SQL.sql(T::ENGINE), &[&ms_from_now(delay), &note, &code])
        .await?;
    Ok(())
}

/// [`reschedule`], and the review asked for (the first time kept).
async fn request_review<T: Tx>(
    tx: One<'_, T>,
    code: &str,
    delay: Duration,
    note: &str,
) -> Result<(), T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| {
        next_attempt(
            engine,
            ", review_requested_at = COALESCE(review_requested_at, ?4)",
        )
    });
    let now = rfc3339(now_ms());
    tx.execute(
        SQL.sql(T::ENGINE),
        &[&ms_from_now(delay), &note, &code, &now],
    )
    .await?;
    Ok(())
}

/// `result` with the note `?2` set as its `last_note`: the JSON functions are
/// each engine's own (SQLite's `json_set` of the text, PostgreSQL's `jsonb_set`).
fn with_note(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "json_set(result, '$.last_note', ?2)",
        Engine::Postgres => "jsonb_set(result::jsonb, '{last_note}', to_jsonb(?2::TEXT))::TEXT",
    }
}

/// A final status, its refund (if failed) with its usage given back, its
/// outbox event, its notice and its sales rollup row, inside the caller's
/// transaction; `false` when the transaction does not take this finalization
/// (nothing changed). A guarded write ([`Guarded`]): only its decision
/// refuses (no such purchase).
pub(crate) async fn finalize<'a, T: Tx + 'a>(
    tx: impl Into<Guarded<'a, T>>,
    code: &str,
    fin: &Finalization,
) -> Result<bool, T::Error> {
    let taken = |tx: Reading<'a, T>| async move { taken(&tx, code, fin).await };
    let change = |tx: Changing<'a, T>, taken| async move { write_final(&tx, fin, taken).await };
    tx.into().run(taken, change).await
}

/// What a finalization changes: the purchase it takes from `from`, what a
/// reversal takes out of the rollup, whether its key has a webhook URL and
/// who referred its buyer (read with the purchase's row, so the changes
/// need no read of their own).
struct Taken {
    from: TxStatus,
    purchase: Finalized,
    reversed: Option<sales_rollup::Reversed>,
    webhook: bool,
    referrer: Option<referrals::Referrer>,
}

/// Whether the purchase takes `fin` (in the status it takes it from): its
/// row read once, with what the rest of the finalization needs of it (these
/// columns never change after placement), its key's webhook URL's presence
/// and its buyer's referrer; refused if there is no such purchase.
async fn taken<T: ReadTx>(
    tx: &T,
    code: &str,
    fin: &Finalization,
) -> Result<Option<Taken>, T::Error> {
    const COLUMNS: &str =
        "account_id, key_id, amount, product, recipient, created_at, status, cost";
    /// After `COLUMNS`: the key's webhook URL's presence, then the referrer.
    const WEBHOOK: usize = crate::db::width(COLUMNS);
    static ROW: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {}, k.webhook_url IS NOT NULL, {}
             FROM transactions t JOIN api_keys k ON k.id = t.key_id
             LEFT JOIN referrals r ON {}
             WHERE t.code = ?1",
            qualified(COLUMNS, "t"),
            referrals::REFERRER_COLUMNS,
            referrals::REFERRER_JOIN,
        )
    });
    let found = tx
        .query_opt(&ROW, &[&code], |row| {
            let purchase = Finalized {
                code: code.to_owned(),
                account_id: row.parsed(col!("account_id"))?,
                key_id: row.parsed(col!("key_id"))?,
                amount: row.get(col!("amount"))?,
                product: row.parsed(col!("product"))?,
                recipient: row.get(col!("recipient"))?,
                created_at: row.get(col!("created_at"))?,
            };
            let status: TxStatus = row.parsed(col!("status"))?;
            let cost: Option<i64> = row.get(col!("cost"))?;
            let webhook: bool = row.get(Column::nth(WEBHOOK))?;
            let referrer = referrals::Referrer::read(row, WEBHOOK + 1)?;
            Ok((purchase, status, cost, webhook, referrer))
        })
        .await?;
    let Some((purchase, status, cost, webhook, referrer)) = found else {
        return Err(StoreError::NotFound("transaction").into());
    };
    let Some(from) = fin.takes_from().filter(|from| *from == status) else {
        return Ok(None);
    };
    // What a reversal takes out of the rollup, as its row was counted.
    let reversed = (from == TxStatus::Successful).then(|| sales_rollup::Reversed::of(cost));
    Ok(Some(Taken {
        from,
        purchase,
        reversed,
        webhook,
        referrer,
    }))
}

/// The finalization's changes, if the purchase takes it: none refuses.
async fn write_final<T: Statements>(
    tx: &T,
    fin: &Finalization,
    taken: Option<Taken>,
) -> Result<bool, T::Error> {
    let Some(Taken {
        from,
        purchase,
        reversed,
        webhook,
        referrer,
    }) = taken
    else {
        return Ok(false);
    };
    let reversal = reversed.is_some();
    let status = NewStatus::of(fin, &purchase.code, from);
    let event = NewEvent::of(&purchase, fin, webhook, &status.completed_at);
    // PostgreSQL writes a first finalization's event in its status's statement.
    let event_with_status = T::ENGINE == Engine::Postgres && !reversal;
    let changed = if event_with_status {
        change_status_with_event(tx, &status, &event).await?
    } else {
        change_status(tx, &status, reversed).await?
    };
    if !changed {
        // Another node's finalization took it since it was read.
        return Ok(false);
    }
    let code = purchase.code.as_str();
    if fin.status == TxStatus::Failed {
        wallet::refund(tx, purchase.account_id, purchase.amount, code).await?;
        // After the wallet's lock, as a purchase takes them.
        super::limits::give_back_usage(tx, &purchase).await?;
    }
    if !event_with_status {
        queue_event(tx, &event, reversal).await?;
    }
    notices::purchase_final(tx, code, purchase.product, fin.status).await?;
    // The referrer's commission, earned or taken back with the status that
    // earns or reverses it (`areas/referrals.rs`).
    if reversal {
        referrals::take_back(tx, code).await?;
    } else if let (TxStatus::Successful, Some(referrer)) = (fin.status, referrer) {
        let (buyer, product, charged) = (purchase.account_id, purchase.product, purchase.amount);
        referrals::earn(tx, code, (referrer, buyer), product, charged).await?;
    }
    Ok(true)
}

/// What the rest of a finalization needs of its transaction.
pub(crate) struct Finalized {
    pub code: String,
    pub account_id: AccountId,
    pub key_id: KeyId,
    pub amount: Kobo,
    pub product: Product,
    pub recipient: String,
    pub created_at: String,
}

/// A finalization's new status for its purchase: `UPDATE_STATUS`'s
/// parameters `?1`–`?8`.
struct NewStatus<'a> {
    fin: &'a Finalization,
    code: &'a str,
    status: &'static str,
    cost: Option<i64>,
    result: String,
    completed_at: String,
    from: &'static str,
}

impl<'a> NewStatus<'a> {
    fn of(fin: &'a Finalization, code: &'a str, from: TxStatus) -> Self {
        Self {
            fin,
            code,
            status: fin.status.as_str(),
            cost: fin.cost.map(|c| c.0),
            result: fin.result.to_string(),
            completed_at: rfc3339(fin.completed_at_ms),
            from: from.as_str(),
        }
    }

    fn params(&self) -> [&dyn Param; 8] {
        [
            &self.status,
            &self.fin.message,
            &self.result,
            &self.completed_at,
            &self.code,
            &self.cost,
            &self.fin.watch_at_ms,
            &self.from,
        ]
    }
}

/// The purchase `?5` made final, if it is still in the status `?8` the
/// finalization takes it from (PostgreSQL's `UPDATE` locks the row and reads
/// it again after a concurrent finalize, so only one of them changes it).
const UPDATE_STATUS: &str = "UPDATE transactions SET status = ?1, message = ?2, result = ?3,
             completed_at = ?4, attempts = attempts + 1, lease_until = 0, cost = ?6,
             watch_at = ?7
           WHERE code = ?5 AND status = ?8";

/// The final status written and counted in the sales rollup, if the
/// purchase takes it (`UPDATE_STATUS`); a reversal is first taken out of its
/// successful row (`reversed`). Two statements: SQLite has no `UPDATE` in a
/// `WITH` (in-process, no round trip); PostgreSQL runs this only for a
/// reversal ([`change_status_with_event`] otherwise).
async fn change_status<T: Statements>(
    tx: &T,
    status: &NewStatus<'_>,
    reversed: Option<sales_rollup::Reversed>,
) -> Result<bool, T::Error> {
    if tx.execute(UPDATE_STATUS, &status.params()).await? != 1 {
        return Ok(false);
    }
    sales_rollup::record(tx, status.code, reversed).await?;
    Ok(true)
}

/// PostgreSQL, a first finalization: [`change_status`] and [`queue_event`]
/// in one statement of its lane's batch instead of three — the rollup's
/// upsert and the event's `INSERT` reading the row the `UPDATE` returns
/// (`WITH`), so neither is written unless the status changed, and the
/// skipped attempt reading the event's row as its `INSERT` returns it.
async fn change_status_with_event<T: Statements>(
    tx: &T,
    status: &NewStatus<'_>,
    event: &NewEvent<'_>,
) -> Result<bool, T::Error> {
    // The status's 8 parameters, then the event's.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "WITH changed AS ({UPDATE_STATUS} RETURNING {}),
                  event AS ({} RETURNING id, status),
                  attempt AS ({})
             {}",
            sales_rollup::SOURCE_COLUMNS,
            insert_event(8, Some("changed")),
            skipped_attempt_of_event(8),
            sales_rollup::added_from(Engine::Postgres, "changed"),
        )
    });
    let params: Vec<&dyn Param> = status.params().into_iter().chain(event.params()).collect();
    // The upsert touches one row exactly when the `UPDATE` changed one.
    Ok(tx.execute(&SQL, &params).await? == 1)
}

/// [`finalize`] with the operator's line, written only if it changed something.
pub(crate) async fn finalize_logged<T: Tx>(
    tx: &T,
    code: &str,
    fin: &Finalization,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let changed = finalize(tx, code, fin).await?;
    if changed {
        operators::append(tx, log).await?;
    }
    Ok(changed)
}

/// A finalization's webhook event: queued, or, for a key without a webhook
/// URL (`webhook` false, as the purchase's row read found it), skipped with
/// its attempt ([`first_state`]). Its parameters are `queue_event`'s.
struct NewEvent<'a> {
    id: String,
    purchase: &'a Finalized,
    fin: &'a Finalization,
    account: String,
    key: String,
    created_at: &'a str,
    name: &'static str,
    webhook: bool,
    status: &'static str,
    attempts: i32,
    now: String,
}

impl<'a> NewEvent<'a> {
    /// The event of `purchase` made final by `fin` at `created_at` (its
    /// completion time, as the status writes it).
    fn of(
        purchase: &'a Finalized,
        fin: &'a Finalization,
        webhook: bool,
        created_at: &'a str,
    ) -> Self {
        let (status, attempts) = first_state(webhook);
        Self {
            id: new_code("EV"),
            purchase,
            fin,
            account: purchase.account_id.to_string(),
            key: purchase.key_id.to_string(),
            created_at,
            name: purchase.product.event(),
            webhook,
            status,
            attempts,
            now: now_rfc3339(),
        }
    }

    fn params(&self) -> [&dyn Param; 12] {
        [
            &self.id,
            &self.purchase.code,
            &self.account,
            &self.key,
            &self.name,
            &self.fin.event_payload,
            &self.created_at,
            &self.fin.completed_at_ms,
            &self.status,
            &self.attempts,
            &crate::NO_WEBHOOK_URL,
            &self.now,
        ]
    }
}

/// The transaction's webhook event (queued again on a reversal: the
/// upsert keeps the event's first id), with its skipped attempt if its key
/// has no webhook URL.
///
/// PostgreSQL: one statement, the attempt written from the event's row as
/// the `INSERT` returns it (`WITH`), which inserts none for a `pending`
/// event. SQLite: the attempt written with the new event's id, never read
/// back (docs/decisions.md, "No temporary B-tree on a purchase's path"), or
/// a reversal's from the event's row, read again.
async fn queue_event<T: Statements>(
    tx: &T,
    event: &NewEvent<'_>,
    reversal: bool,
) -> Result<(), T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| insert_event(0, None));
    static WITH_ATTEMPT: LazyLock<String> = LazyLock::new(|| {
        format!(
            "WITH event AS ({} RETURNING id, status) {}",
            *SQL,
            skipped_attempt_of_event(0),
        )
    });
    let params = event.params();
    if T::ENGINE == Engine::Postgres {
        tx.execute(&WITH_ATTEMPT, &params).await?;
        return Ok(());
    }
    tx.execute(&SQL, &params[..10]).await?;
    if event.webhook {
        Ok(())
    } else if reversal {
        events::add_skipped_attempt(tx, &event.purchase.code).await
    } else {
        events::add_skipped_attempt_to(tx, &event.id).await
    }
}

/// A finalization's event `INSERT` (an upsert: a reversal queues it
/// again), its values [`NewEvent::params`] from the placeholder after the
/// first `skip`: `VALUES`, or selected `from` a `FROM` clause.
fn insert_event(skip: usize, from: Option<&str>) -> String {
    // `EVENT_COLUMNS`, then `next_attempt_at`: the parameters' order differs.
    let values = [1, 2, 3, 4, 5, 6, 9, 10, 7, 8]
        .map(|n| format!("?{}", n + skip))
        .join(", ");
    let rows = match from {
        None => format!("VALUES ({values})"),
        Some(source) => format!("SELECT {values} FROM {source}"),
    };
    format!("INSERT INTO events ({EVENT_COLUMNS}, next_attempt_at) {rows} {RESEND_ON_REVERSAL}")
}

/// The skipped attempt of the event a `WITH event AS (… RETURNING id,
/// status)` wrote, if it was written skipped: [`NewEvent::params`]' error
/// and time, after the first `skip`.
fn skipped_attempt_of_event(skip: usize) -> String {
    let (error, at) = (format!("?{}", 11 + skip), format!("?{}", 12 + skip));
    events::skipped_attempts("event WHERE status = 'skipped'", (&error, &at))
}

/// Read through the partial index of processing rows (`transactions_due`):
/// with a million purchases stored, the listing's optional filters scanned
/// them all (300 ms a check).
async fn needs_review_count<T: ReadTx>(tx: &T, before: &str, cap: u32) -> Result<u64, T::Error> {
    let sql = needs_review_count_sql(T::ENGINE);
    let count: i64 = tx
        .query_one(&sql, &[&before, &i64::from(cap)], |row| {
            row.get(Column::nth(0))
        })
        .await?;
    Ok(count as u64)
}

/// The count's statement (its plan is checked in `sqlite::listing_plans`).
pub(crate) fn needs_review_count_sql(engine: Engine) -> String {
    let rows = super::purchases::processing_rows(engine);
    format!(
        "SELECT COUNT(*) FROM (SELECT 1 FROM {rows}
         WHERE status = 'processing' AND held_for IS NULL
           AND (created_at < ?1 OR review_requested_at IS NOT NULL)
         LIMIT CAST(?2 AS BIGINT)) AS due"
    )
}

async fn backlog<T: ReadTx>(tx: &T) -> Result<Backlog, T::Error> {
    tx.query_one(BACKLOG, &[], |row| {
        Ok(Backlog {
            processing: row.get(Column::nth(0))?,
            oldest_created_at: row.get(Column::nth(1))?,
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::to_dollar_placeholders;
    use crate::postgres::scratch::ScratchDatabase;
    use crate::postgres::{PgError, PostgresStore};

    /// PostgreSQL plans the fulfilment claim over a table it has no
    /// statistics for (as after a backlog built up on stale ones): alone it
    /// reads every due row through a bitmap scan and sorts them; run as the
    /// `claim` kind runs it, it walks `transactions_due` in order.
    #[tokio::test]
    async fn the_postgres_claim_walks_the_due_rows_index_in_order() {
        let Some(db) = ScratchDatabase::for_test().await else {
            return;
        };
        let store = PostgresStore::open(&db.url).await.unwrap();
        // A backlog of 10,000 due purchases among 30,000, never analysed (the
        // foreign keys' triggers off: no accounts or keys are needed).
        let backlog = "SET LOCAL session_replication_role = replica;
            INSERT INTO transactions (code, account_id, key_id, reference, product, provider,
                label, recipient, amount, details, status, message, balance_before,
                balance_after, next_attempt_at, created_at)
            SELECT 'T' || g, 'a', 'k', 'r' || g, 'airtime', 'mtn', 'MTN', '08030000000', 100,
                '{}', CASE WHEN g % 3 = 0 THEN 'processing' ELSE 'successful' END, '', 0, 0,
                g, '2026-11-30T00:00:00Z'
            FROM generate_series(1, 30000) g";
        store
            .write(|t| Box::pin(async move { Ok(t.batch_execute(backlog).await?) }))
            .await
            .unwrap();
        let alone = store.autocommit(|c| Box::pin(plan(c))).await.unwrap();
        assert!(alone.contains("Bitmap Heap Scan"), "{alone}");
        let claimed = store.in_index_order(|t| Box::pin(plan(t))).await.unwrap();
        assert!(
            claimed.contains("Index Scan using transactions_due") && !claimed.contains("Bitmap"),
            "{claimed}"
        );
    }

    /// The plan PostgreSQL makes for the fulfilment claim on `c`, as
    /// `EXPLAIN` prints it.
    async fn plan<C: deadpool_postgres::GenericClient>(c: &C) -> Result<String, PgError> {
        let explain = format!(
            "EXPLAIN {}",
            to_dollar_placeholders(FULFILMENTS.sql(Engine::Postgres))
        );
        let (until, now, limit) = (1_i64, 1_000_000_i64, 64_i64);
        let rows = c.query(&explain, &[&until, &now, &limit]).await?;
        let lines = rows.iter().map(|row| row.get::<_, String>(0));
        Ok(lines.collect::<Vec<_>>().join("\n"))
    }
}
