//! The PostgreSQL backend of [`Store`]: the same tables, rules and answers as
//! the SQLite backend, for when one machine is not enough and several
//! `billpay serve` processes share one database.
//!
//! - Every trait method is one transaction on a pooled connection
//!   (deadpool-postgres); serialisation failures and deadlocks are retried.
//! - Live purchases are **group-committed**: concurrent `place_purchase` calls
//!   are queued, and up to [`MAX_BATCH`] of them run in one transaction as
//!   pipelined calls of the `billpay_place_purchase` function (one round trip
//!   each, sent without waiting), then one COMMIT; each caller is answered only
//!   after that COMMIT. A batch locks wallets in account order, so batches of
//!   different nodes never deadlock. Should a batch fail as a whole, each of
//!   its purchases is retried in a transaction of its own. The workers'
//!   single-statement writes that lock no wallet (mark submitted, a successful
//!   finalize with its outbox event, a delivery attempt) are batched the same
//!   way.
//! - Workers claim due rows with `FOR UPDATE SKIP LOCKED` plus a lease
//!   (`lease_until`), so several nodes never take the same work, and a node
//!   that dies mid-lease has its work taken over when the lease expires.

mod rows;
pub mod scratch;

use crate::clock::{new_code, now_ms, now_rfc3339, rfc3339};
use crate::*;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::{AccountId, KeyId, Kobo, Product, TxStatus};
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use rows::*;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

/// Purchases per group-commit transaction at most.
pub const MAX_BATCH: usize = 128;
/// Attempts of a transaction that failed on a serialisation failure or deadlock.
const TRIES: u32 = 8;

const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_initial.sql"),
    include_str!("migrations/002_supplier.sql"),
    include_str!("migrations/003_events_due_by_key.sql"),
];
/// `pg_advisory_xact_lock` key: two processes migrating at once take turns.
const MIGRATION_LOCK: i64 = 0x0062_696c_6c70_6179;

/// Tuning of the PostgreSQL backend.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Connections in the pool at most.
    pub pool_size: usize,
    /// Group-commit live purchases (on by default); off, each purchase is its
    /// own transaction (kept for measuring, see docs/benchmarks.md).
    pub group_commit: bool,
    /// Group-commit transactions in flight at once (each on its own
    /// connection). Purchases run in this many lanes, a wallet always in the
    /// same one.
    pub batches_in_flight: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            group_commit: true,
            batches_in_flight: 4,
        }
    }
}

pub struct PostgresStore {
    pool: Pool,
    /// One queue per purchase lane (see [`run_purchase_lane`]).
    purchases: Option<Vec<mpsc::UnboundedSender<PurchaseJob>>>,
    /// The workers' single-statement writes, group-committed likewise.
    statements: Option<mpsc::UnboundedSender<StatementJob>>,
}

/// Errors inside the backend: the database's (kept whole, so serialisation
/// failures can be retried) or the store's own.
#[derive(Debug)]
pub enum PgError {
    Db(tokio_postgres::Error),
    Store(StoreError),
}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> Self {
        PgError::Db(e)
    }
}

impl From<StoreError> for PgError {
    fn from(e: StoreError) -> Self {
        PgError::Store(e)
    }
}

impl From<Refusal> for PgError {
    fn from(e: Refusal) -> Self {
        PgError::Store(StoreError::Refused(e))
    }
}

impl From<deadpool_postgres::PoolError> for PgError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        PgError::Store(StoreError::Backend(format!("PostgreSQL pool: {e}")))
    }
}

impl From<PgError> for StoreError {
    fn from(e: PgError) -> Self {
        match e {
            PgError::Store(e) => e,
            PgError::Db(e) => StoreError::Backend(describe(&e)),
        }
    }
}

fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    }
}

fn retryable(e: &PgError) -> bool {
    matches!(e, PgError::Db(e) if e.code().is_some_and(|c| {
        *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    }))
}

type PgResult<T> = Result<T, PgError>;
type PgTx<'a> = deadpool_postgres::Transaction<'a>;
type BoxFut<'a, T> = Pin<Box<dyn Future<Output = PgResult<T>> + Send + 'a>>;
type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A short pause before retrying, spread so retrying transactions do not collide again.
async fn backoff(attempt: u32) {
    use rand::Rng;
    let ms = rand::rng().random_range(1..=(5u64 << attempt.min(6)));
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

async fn query<C: GenericClient>(c: &C, sql: &str, params: Params<'_>) -> PgResult<Vec<Row>> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query(&stmt, params).await?)
}

async fn query_opt<C: GenericClient>(
    c: &C,
    sql: &str,
    params: Params<'_>,
) -> PgResult<Option<Row>> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query_opt(&stmt, params).await?)
}

async fn query_one<C: GenericClient>(c: &C, sql: &str, params: Params<'_>) -> PgResult<Row> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query_one(&stmt, params).await?)
}

async fn execute<C: GenericClient>(c: &C, sql: &str, params: Params<'_>) -> PgResult<u64> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.execute(&stmt, params).await?)
}

/// A password change or a suspension signs the account out everywhere.
async fn end_sessions<C: GenericClient>(c: &C, id: AccountId) -> PgResult<()> {
    let id = id.to_string();
    execute(c, "DELETE FROM sessions WHERE account_id = $1", &[&id]).await?;
    Ok(())
}

fn map_rows<T>(rows: Vec<Row>, map: fn(&Row) -> PgResult<T>) -> PgResult<Vec<T>> {
    rows.iter().map(map).collect()
}

/// Parses a `postgres://` URL (libpq's URL and key=value forms).
fn config_from_url(url: &str) -> StoreResult<tokio_postgres::Config> {
    let mut config = tokio_postgres::Config::from_str(url).map_err(|e| {
        StoreError::Invalid(format!("invalid PostgreSQL URL {}: {e}", redact_url(url)))
    })?;
    if config.get_application_name().is_none() {
        config.application_name("billpay");
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    Ok(config)
}

fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

impl PostgresStore {
    /// Connects, migrates (once, whoever comes first), seeds the default
    /// catalogue on first start, and starts the group-commit writer.
    pub async fn open(url: &str) -> StoreResult<PostgresStore> {
        Self::open_with(url, PostgresOptions::default()).await
    }

    pub async fn open_with(url: &str, options: PostgresOptions) -> StoreResult<PostgresStore> {
        let config = config_from_url(url)?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(Duration::from_secs(15)))
            .build()
            .map_err(|e| StoreError::Backend(format!("PostgreSQL pool: {e}")))?;
        migrate(&pool).await?;
        let purchases = options.group_commit.then(|| {
            (0..options.batches_in_flight.max(1))
                .map(|_| {
                    let (tx, rx) = mpsc::unbounded_channel();
                    tokio::spawn(run_purchase_lane(pool.clone(), rx));
                    tx
                })
                .collect()
        });
        let statements = options.group_commit.then(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(run_statement_batches(
                pool.clone(),
                rx,
                options.batches_in_flight.max(1),
            ));
            tx
        });
        let store = PostgresStore {
            pool,
            purchases,
            statements,
        };
        let default =
            Catalogue::from_toml(Catalogue::default_toml()).map_err(StoreError::Invalid)?;
        let document =
            serde_json::to_string(&default).map_err(|e| StoreError::Backend(e.to_string()))?;
        store
            .write(move |tx| {
                let document = document.clone();
                Box::pin(async move {
                    execute(
                        tx,
                        "INSERT INTO catalogue (id, version, document) VALUES (1, 1, $1)
                         ON CONFLICT (id) DO NOTHING",
                        &[&document],
                    )
                    .await?;
                    Ok(())
                })
            })
            .await?;
        Ok(store)
    }

    async fn client(&self) -> PgResult<deadpool_postgres::Object> {
        Ok(self.pool.get().await?)
    }

    /// Runs `op` in one transaction and commits; retried whole on a
    /// serialisation failure or deadlock (so `op` may run more than once).
    async fn write<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, T> + Send + Sync,
    {
        let mut attempt = 0;
        loop {
            let result = async {
                let mut client = self.client().await?;
                let tx = client.transaction().await?;
                let value = op(&tx).await?;
                tx.commit().await?;
                Ok(value)
            }
            .await;
            match result {
                Err(e) if retryable(&e) && attempt + 1 < TRIES => {
                    attempt += 1;
                    tracing::debug!(error = ?e, attempt, "retrying a PostgreSQL transaction");
                    backoff(attempt).await;
                }
                other => return other.map_err(StoreError::from),
            }
        }
    }

    /// One statement returning one row: group-committed with other workers'
    /// statements when group commit is on, else in a transaction of its own.
    /// Answered after COMMIT either way. For statements that lock no wallet
    /// (so a batch of them never deadlocks with a batch of purchases).
    async fn write_statement(&self, sql: &'static str, params: OwnedParams) -> PgResult<Row> {
        let Some(queue) = &self.statements else {
            return statement(&self.pool, sql, &borrow(&params)).await;
        };
        let (reply, answer) = oneshot::channel();
        let stopped = || PgError::Store(StoreError::Backend("statement writer stopped".into()));
        queue
            .send(StatementJob { sql, params, reply })
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Runs `op` on a pooled connection, outside any explicit transaction
    /// (single statements: each is atomic on its own).
    async fn read<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'a> FnOnce(&'a deadpool_postgres::Object) -> BoxFut<'a, T> + Send,
    {
        let client = self.client().await?;
        Ok(op(&client).await?)
    }
}

async fn migrate(pool: &Pool) -> StoreResult<()> {
    let run = async {
        let mut client = pool.get().await?;
        let tx = client.transaction().await?;
        tx.query("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        tx.batch_execute(
            "SET LOCAL client_min_messages = warning;
             CREATE TABLE IF NOT EXISTS billpay_migrations (
                 version    INTEGER PRIMARY KEY,
                 applied_at TEXT NOT NULL
             )",
        )
        .await?;
        let current: i32 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM billpay_migrations",
                &[],
            )
            .await?
            .try_get(0)?;
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
            let version = index as i32 + 1;
            tx.batch_execute(sql).await.map_err(|e| {
                PgError::Store(StoreError::Backend(format!(
                    "migration {version} failed: {}",
                    describe(&e)
                )))
            })?;
            tx.execute(
                "INSERT INTO billpay_migrations (version, applied_at) VALUES ($1, $2)",
                &[&version, &now_rfc3339()],
            )
            .await?;
            tracing::info!(version, "applied PostgreSQL migration");
        }
        tx.commit().await?;
        Ok::<_, PgError>(())
    };
    run.await.map_err(|e| match e {
        PgError::Store(e) => e,
        PgError::Db(e) => StoreError::Backend(format!("PostgreSQL: {}", describe(&e))),
    })
}

fn catalogue_document(catalogue: &Catalogue) -> StoreResult<String> {
    serde_json::to_string(catalogue).map_err(|e| StoreError::Backend(e.to_string()))
}

async fn save_document(tx: &PgTx<'_>, document: &str) -> PgResult<()> {
    execute(
        tx,
        "INSERT INTO catalogue (id, version, document) VALUES (1, 1, $1)
         ON CONFLICT (id) DO UPDATE SET version = catalogue.version + 1, document = excluded.document",
        &[&document],
    )
    .await?;
    Ok(())
}

async fn load_catalogue<C: GenericClient>(c: &C, lock: bool) -> PgResult<(i64, Catalogue)> {
    let sql = if lock {
        "SELECT version, document FROM catalogue WHERE id = 1 FOR UPDATE"
    } else {
        "SELECT version, document FROM catalogue WHERE id = 1"
    };
    let row = query_one(c, sql, &[]).await?;
    let version: i64 = get(&row, 0)?;
    let document: String = get(&row, 1)?;
    let catalogue =
        serde_json::from_str(&document).map_err(|e| StoreError::Backend(e.to_string()))?;
    Ok((version, catalogue))
}

async fn balance_of<C: GenericClient>(c: &C, account: AccountId, lock: bool) -> PgResult<Kobo> {
    let sql = if lock {
        "SELECT balance FROM accounts WHERE id = $1 FOR UPDATE"
    } else {
        "SELECT balance FROM accounts WHERE id = $1"
    };
    match query_opt(c, sql, &[&account.to_string()]).await? {
        Some(row) => Ok(Kobo(get(&row, 0)?)),
        None => Err(StoreError::NotFound("account").into()),
    }
}

/// Moves a wallet by `amount` (signed) with the guarded UPDATE and appends the
/// matching ledger entry, in one statement.
async fn post_ledger(
    tx: &PgTx<'_>,
    account: AccountId,
    amount: Kobo,
    kind: &str,
    transaction_code: Option<&str>,
    credit_reference: Option<&str>,
) -> PgResult<Kobo> {
    let row = query_opt(
        tx,
        "WITH moved AS (
             UPDATE accounts SET balance = balance + $1 WHERE id = $2 AND balance + $1 >= 0
             RETURNING balance
         )
         INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, credit_reference, created_at)
         SELECT $2, $1, $3, balance, $4, $5, $6 FROM moved
         RETURNING balance_after",
        &[
            &amount.0,
            &account.to_string(),
            &kind,
            &transaction_code,
            &credit_reference,
            &now_rfc3339(),
        ],
    )
    .await?;
    match row {
        Some(row) => Ok(Kobo(get(&row, 0)?)),
        None => Err(Refusal::InsufficientBalance.into()),
    }
}

async fn get_api_key<C: GenericClient>(c: &C, id: KeyId) -> PgResult<Option<ApiKey>> {
    query_opt(
        c,
        &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1"),
        &[&id.to_string()],
    )
    .await?
    .map(|row| api_key(&row))
    .transpose()
}

/// One statement in its own (implicit) transaction, retried on serialisation
/// failures and deadlocks: one round trip, no BEGIN/COMMIT.
async fn statement(pool: &Pool, sql: &str, params: Params<'_>) -> PgResult<Row> {
    let mut attempt = 0;
    loop {
        let result = async {
            let client = pool.get().await?;
            query_one(&client, sql, params).await
        }
        .await;
        match result {
            Err(e) if retryable(&e) && attempt + 1 < TRIES => {
                attempt += 1;
                backoff(attempt).await;
            }
            other => return other,
        }
    }
}

/// A final status, its refund (if failed) and its outbox event, as one
/// statement. Only a `processing` transaction changes (the row lock makes a
/// concurrent finalize on another node wait, then find it final). Answers
/// (the transaction exists, rows changed).
static FINALIZE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let events = Product::ALL
        .iter()
        .map(|p| format!("WHEN '{}' THEN '{}'", p.service(), p.event()))
        .collect::<Vec<_>>()
        .join(" ");
    let resend = crate::RESEND_ON_REVERSAL;
    format!(
        "WITH current AS (
             SELECT code FROM transactions WHERE code = $1 AND status = $10 AND $2 <> $10 FOR UPDATE
         ), changed AS (
             UPDATE transactions t SET status = $2, message = $3, result = $4, completed_at = $5,
               attempts = t.attempts + 1, lease_until = 0
             FROM current WHERE t.code = current.code
             RETURNING t.account_id, t.key_id, t.amount, t.product
         ), refunded AS (
             UPDATE accounts a SET balance = a.balance + changed.amount FROM changed
             WHERE $2 = 'failed' AND a.id = changed.account_id
             RETURNING a.id, a.balance, changed.amount
         ), refund AS (
             INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, created_at)
             SELECT id, amount, 'refund', balance, $1, $7 FROM refunded
         ), event AS (
             INSERT INTO events (id, transaction_code, account_id, key_id, event, payload, status,
               attempts, created_at, next_attempt_at)
             SELECT $6, $1, account_id, key_id, CASE product {events} END, $8, 'pending', 0, $5, $9
             FROM changed {resend}
         )
         SELECT EXISTS (SELECT 1 FROM transactions WHERE code = $1), (SELECT COUNT(*) FROM changed)"
    )
});

// --- group commit of the workers' statements ---------------------------------

type OwnedParams = Vec<Box<dyn ToSql + Sync + Send>>;

fn borrow(params: &OwnedParams) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

macro_rules! owned {
    ($($value:expr),* $(,)?) => {
        vec![$(Box::new($value) as Box<dyn ToSql + Sync + Send>),*]
    };
}

struct StatementJob {
    sql: &'static str,
    params: OwnedParams,
    reply: oneshot::Sender<PgResult<Row>>,
}

async fn run_statement_batches(
    pool: Pool,
    mut jobs: mpsc::UnboundedReceiver<StatementJob>,
    in_flight: usize,
) {
    let permits = Arc::new(Semaphore::new(in_flight));
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = jobs.recv().await else {
            return;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let pool = pool.clone();
        tokio::spawn(async move {
            let (started, size) = (std::time::Instant::now(), batch.len());
            run_statement_batch(&pool, batch).await;
            crate::metrics::record_batch("postgres", "statements", size, started);
            drop(permit);
        });
    }
}

async fn run_statement_batch(pool: &Pool, batch: Vec<StatementJob>) {
    if batch.len() > 1 {
        let outcome = async {
            let mut client = pool
                .get()
                .await
                .map_err(|e| BatchError::RolledBack(e.into()))?;
            let tx = client
                .transaction()
                .await
                .map_err(|e| BatchError::RolledBack(e.into()))?;
            let mut statements = HashMap::new();
            for job in &batch {
                if !statements.contains_key(job.sql) {
                    let stmt = tx
                        .prepare_cached(job.sql)
                        .await
                        .map_err(|e| BatchError::RolledBack(e.into()))?;
                    statements.insert(job.sql, stmt);
                }
            }
            let params: Vec<_> = batch.iter().map(|job| borrow(&job.params)).collect();
            let rows = futures_util::future::try_join_all(
                batch
                    .iter()
                    .zip(&params)
                    .map(|(job, p)| tx.query_one(&statements[job.sql], p)),
            )
            .await
            .map_err(|e| BatchError::RolledBack(e.into()))?;
            match tx.commit().await {
                Ok(()) => Ok(rows),
                Err(e) if e.as_db_error().is_some() => Err(BatchError::RolledBack(e.into())),
                Err(e) => Err(BatchError::Unknown(e)),
            }
        }
        .await;
        match outcome {
            Ok(rows) => {
                for (job, row) in batch.into_iter().zip(rows) {
                    let _ = job.reply.send(Ok(row));
                }
                return;
            }
            Err(BatchError::Unknown(e)) => {
                tracing::error!(error = %describe(&e), "group commit outcome unknown");
                for job in batch {
                    let message = describe(&e);
                    let _ = job
                        .reply
                        .send(Err(PgError::Store(StoreError::Backend(message))));
                }
                return;
            }
            Err(BatchError::RolledBack(e)) => {
                tracing::debug!(error = ?e, size = batch.len(), "statement batch failed; running each alone");
            }
        }
    }
    let singles = batch.into_iter().map(|job| async move {
        let result = statement(pool, job.sql, &borrow(&job.params)).await;
        let _ = job.reply.send(result);
    });
    futures_util::future::join_all(singles).await;
}

// --- group commit of live purchases -------------------------------------------

const PLACE_PURCHASE: &str = "SELECT outcome, before_kobo, after_kobo FROM billpay_place_purchase(\
     $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";

struct PurchaseJob {
    args: PurchaseArgs,
    reply: oneshot::Sender<StoreResult<Transaction>>,
}

/// One purchase, ready to bind.
struct PurchaseArgs {
    new: NewPurchase,
    code: String,
    account: String,
    key: String,
    product: &'static str,
    details: String,
    batch_id: Option<String>,
    now_ms: i64,
    now: String,
}

impl PurchaseArgs {
    fn new(new: NewPurchase) -> Self {
        let now_ms = now_ms();
        PurchaseArgs {
            code: new_code("BP"),
            account: new.account_id.to_string(),
            key: new.key_id.to_string(),
            product: new.product.service(),
            details: new.details.to_string(),
            batch_id: new
                .details
                .get("batch_id")
                .and_then(|b| b.as_str())
                .map(str::to_owned),
            now_ms,
            now: rfc3339(now_ms),
            new,
        }
    }

    fn params(&self) -> [&(dyn ToSql + Sync); 14] {
        [
            &self.code,
            &self.account,
            &self.key,
            &self.new.reference,
            &self.product,
            &self.new.provider,
            &self.new.plan_id,
            &self.new.label,
            &self.new.recipient,
            &self.new.amount.0,
            &self.details,
            &self.batch_id,
            &self.now_ms,
            &self.now,
        ]
    }

    /// The function's answer → the transaction as `transaction()` would read it back.
    fn answer(&self, row: &Row) -> StoreResult<Transaction> {
        let outcome: String = get(row, 0)?;
        match outcome.as_str() {
            "ok" => {
                let before: i64 = get(row, 1)?;
                let after: i64 = get(row, 2)?;
                let new = &self.new;
                Ok(Transaction {
                    code: self.code.clone(),
                    account_id: new.account_id,
                    key_id: new.key_id,
                    reference: new.reference.clone(),
                    product: new.product,
                    provider: new.provider.clone(),
                    plan_id: new.plan_id.clone(),
                    label: new.label.clone(),
                    recipient: new.recipient.clone(),
                    amount: new.amount,
                    // exactly what reading the stored text back gives
                    details: serde_json::from_str(&self.details)
                        .map_err(|e| StoreError::Backend(e.to_string()))?,
                    status: TxStatus::Processing,
                    message: "Transaction is processing".into(),
                    balance_before: Kobo(before),
                    balance_after: Kobo(after),
                    result: serde_json::json!({}),
                    attempts: 0,
                    submitted: false,
                    created_at: self.now.clone(),
                    completed_at: None,
                    supplier: None,
                    supplier_reference: None,
                })
            }
            "duplicate" => Err(Refusal::DuplicateReference.into()),
            "insufficient" => Err(Refusal::InsufficientBalance.into()),
            "no_account" => Err(StoreError::NotFound("account")),
            other => Err(StoreError::Backend(format!(
                "unexpected purchase outcome {other}"
            ))),
        }
    }
}

/// One purchase lane: one batch at a time; while it commits, new purchases
/// wait and the next batch grows. A wallet's purchases always take the same
/// lane ([`lane_of`]), so a hot wallet is debited by one batch per COMMIT
/// instead of several batches queuing on its row lock.
async fn run_purchase_lane(pool: Pool, mut jobs: mpsc::UnboundedReceiver<PurchaseJob>) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let (started, size) = (std::time::Instant::now(), batch.len());
        run_batch(&pool, batch).await;
        crate::metrics::record_batch("postgres", "purchases", size, started);
    }
}

/// The lane of a wallet: the same for every purchase of one account.
fn lane_of(account: AccountId, lanes: usize) -> usize {
    (account.0.as_u128() % lanes as u128) as usize
}

async fn run_batch(pool: &Pool, mut batch: Vec<PurchaseJob>) {
    if batch.len() > 1 {
        // One lock order for every batch of every node: no deadlocks between batches.
        batch.sort_by(|a, b| a.args.account.cmp(&b.args.account));
        match commit_batch(pool, &batch).await {
            Ok(rows) => {
                for (job, row) in batch.into_iter().zip(rows) {
                    let _ = job.reply.send(job.args.answer(&row));
                }
                return;
            }
            Err(BatchError::Unknown(e)) => {
                // The COMMIT itself was lost: its outcome is unknown, so no
                // purchase of it may be retried (it may have been accepted).
                tracing::error!(error = %describe(&e), "group commit outcome unknown");
                for job in batch {
                    let _ = job.reply.send(Err(StoreError::Backend(describe(&e))));
                }
                return;
            }
            Err(BatchError::RolledBack(e)) => {
                tracing::warn!(error = ?e, size = batch.len(), "purchase batch failed; retrying each alone");
            }
        }
    }
    let singles = batch.into_iter().map(|job| async move {
        let mut args = job.args;
        let result = place_one(pool, &mut args).await;
        let _ = job.reply.send(result);
    });
    futures_util::future::join_all(singles).await;
}

enum BatchError {
    /// Nothing was committed: every purchase can be retried.
    RolledBack(PgError),
    /// The connection failed during COMMIT.
    Unknown(tokio_postgres::Error),
}

async fn commit_batch(pool: &Pool, batch: &[PurchaseJob]) -> Result<Vec<Row>, BatchError> {
    let rolled_back = BatchError::RolledBack;
    let mut client = pool.get().await.map_err(|e| rolled_back(e.into()))?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| rolled_back(e.into()))?;
    let stmt = tx
        .prepare_cached(PLACE_PURCHASE)
        .await
        .map_err(|e| rolled_back(e.into()))?;
    let params: Vec<_> = batch.iter().map(|job| job.args.params()).collect();
    // Polled together, the calls are pipelined on the one connection.
    let rows = futures_util::future::try_join_all(params.iter().map(|p| tx.query_one(&stmt, p)))
        .await
        .map_err(|e| rolled_back(e.into()))?;
    match tx.commit().await {
        Ok(()) => Ok(rows),
        // The server answered with an error: it rolled back.
        Err(e) if e.as_db_error().is_some() => Err(rolled_back(e.into())),
        Err(e) => Err(BatchError::Unknown(e)),
    }
}

/// One purchase in its own (single-statement) transaction, retried on
/// serialisation failures and deadlocks.
async fn place_one(pool: &Pool, args: &mut PurchaseArgs) -> StoreResult<Transaction> {
    let mut attempt = 0;
    loop {
        let result = async {
            let client = pool.get().await?;
            query_one(&client, PLACE_PURCHASE, &args.params()).await
        }
        .await;
        match result {
            Ok(row) => return args.answer(&row),
            Err(e) if retryable(&e) && attempt + 1 < TRIES => {
                attempt += 1;
                backoff(attempt).await;
            }
            // Two purchases drew the same code (same millisecond, same 24
            // random bits): draw again.
            Err(e) if violates(&e, "transactions_pkey") && attempt + 1 < TRIES => {
                attempt += 1;
                args.code = new_code("BP");
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Whether `e` is a unique violation of `constraint`.
fn violates(e: &PgError, constraint: &str) -> bool {
    matches!(e, PgError::Db(e) if e.as_db_error().is_some_and(|db| {
        *db.code() == SqlState::UNIQUE_VIOLATION && db.constraint() == Some(constraint)
    }))
}

#[async_trait]
impl Store for PostgresStore {
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account> {
        let id = AccountId::new().to_string();
        let created_at = now_rfc3339();
        self.write(move |tx| {
            let (id, new, created_at) = (id.clone(), new.clone(), created_at.clone());
            Box::pin(async move {
                let row = query_opt(
                    tx,
                    &format!(
                        "INSERT INTO accounts (id, name, email, password_hash, status, created_at)
                         VALUES ($1, $2, $3, $4, 'active', $5) ON CONFLICT DO NOTHING
                         RETURNING {ACCOUNT_COLUMNS}"
                    ),
                    &[&id, &new.name, &new.email, &new.password_hash, &created_at],
                )
                .await?;
                match row {
                    Some(row) => account(&row),
                    None => Err(StoreError::Invalid(format!(
                        "an account with email {} exists",
                        new.email
                    ))
                    .into()),
                }
            })
        })
        .await
    }

    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        self.read(|c| {
            Box::pin(async move {
                query_opt(
                    c,
                    &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1"),
                    &[&id.to_string()],
                )
                .await?
                .map(|row| account(&row))
                .transpose()
            })
        })
        .await
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        let email = email.to_owned();
        self.read(|c| {
            Box::pin(async move {
                query_opt(
                    c,
                    &format!(
                        "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE lower(email) = lower($1)"
                    ),
                    &[&email],
                )
                .await?
                .map(|row| account(&row))
                .transpose()
            })
        })
        .await
    }

    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()> {
        self.write(move |tx| {
            Box::pin(async move {
                match execute(
                    tx,
                    "UPDATE accounts SET status = $1 WHERE id = $2",
                    &[&status.as_str(), &id.to_string()],
                )
                .await?
                {
                    0 => Err(StoreError::NotFound("account").into()),
                    _ if status == AccountStatus::Suspended => end_sessions(tx, id).await,
                    _ => Ok(()),
                }
            })
        })
        .await
    }

    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()> {
        self.write(move |tx| {
            let password_hash = password_hash.clone();
            Box::pin(async move {
                match execute(
                    tx,
                    "UPDATE accounts SET password_hash = $1 WHERE id = $2",
                    &[&password_hash, &id.to_string()],
                )
                .await?
                {
                    0 => Err(StoreError::NotFound("account").into()),
                    _ => end_sessions(tx, id).await,
                }
            })
        })
        .await
    }

    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey> {
        let id = KeyId::new();
        let created_at = now_rfc3339();
        self.write(move |tx| {
            let (new, created_at) = (new.clone(), created_at.clone());
            Box::pin(async move {
                balance_of(tx, new.account_id, false).await?; // the account must exist
                execute(
                    tx,
                    "INSERT INTO api_keys (id, account_id, name, key_hash, display_prefix, status, created_at)
                     VALUES ($1, $2, $3, $4, $5, 'active', $6)",
                    &[
                        &id.to_string(),
                        &new.account_id.to_string(),
                        &new.name,
                        &new.key_hash,
                        &new.display_prefix,
                        &created_at,
                    ],
                )
                .await?;
                get_api_key(tx, id)
                    .await?
                    .ok_or(StoreError::NotFound("API key").into())
            })
        })
        .await
    }

    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        self.read(|c| Box::pin(get_api_key(c, id))).await
    }

    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        self.read(|c| {
            Box::pin(async move {
                let rows = query(
                    c,
                    &format!(
                        "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at"
                    ),
                    &[&account.to_string()],
                )
                .await?;
                map_rows(rows, api_key)
            })
        })
        .await
    }

    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>> {
        let key_hash = key_hash.to_owned();
        self.read(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {}, a.status FROM api_keys k JOIN accounts a ON a.id = k.account_id
                     WHERE k.key_hash = $1",
                    qualified(KEY_COLUMNS, "k")
                );
                let Some(row) = query_opt(c, &sql, &[&key_hash]).await? else {
                    return Ok(None);
                };
                let status: String = get(&row, 12)?;
                let status = status.parse().map_err(StoreError::Backend)?;
                Ok(Some((api_key(&row)?, status)))
            })
        })
        .await
    }

    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey> {
        self.write(move |tx| {
            let change = change.clone();
            Box::pin(async move {
                let key = id.to_string();
                let changed = match change {
                    // Revocation is final.
                    KeyChange::Status(status) => {
                        execute(
                            tx,
                            "UPDATE api_keys SET status = $1 WHERE id = $2 AND status <> 'revoked'",
                            &[&status.as_str(), &key],
                        )
                        .await?
                    }
                    KeyChange::RateLimit(limit) => {
                        let per_second = limit.map(|l| l.per_second.min(i32::MAX as u32) as i32);
                        let burst = limit.map(|l| l.burst.min(i32::MAX as u32) as i32);
                        execute(
                            tx,
                            "UPDATE api_keys SET rate_per_second = $1, rate_burst = $2 WHERE id = $3",
                            &[&per_second, &burst, &key],
                        )
                        .await?
                    }
                    KeyChange::WebhookUrl(url) => {
                        execute(
                            tx,
                            "UPDATE api_keys SET webhook_url = $1 WHERE id = $2",
                            &[&url, &key],
                        )
                        .await?
                    }
                    KeyChange::WebhookSecretSealed(sealed) => {
                        execute(
                            tx,
                            "UPDATE api_keys SET webhook_secret_sealed = $1 WHERE id = $2",
                            &[&sealed, &key],
                        )
                        .await?
                    }
                    KeyChange::WebhookRetries(on) => {
                        execute(
                            tx,
                            "UPDATE api_keys SET webhook_retries = $1 WHERE id = $2",
                            &[&on, &key],
                        )
                        .await?
                    }
                };
                let found = get_api_key(tx, id)
                    .await?
                    .ok_or(StoreError::NotFound("API key"))?;
                if changed == 0 {
                    return Err(
                        StoreError::Invalid("a revoked key cannot be changed".into()).into(),
                    );
                }
                Ok(found)
            })
        })
        .await
    }

    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()> {
        self.read(|c| {
            Box::pin(async move {
                execute(
                    c,
                    "UPDATE api_keys SET last_used_at = $1 WHERE id = $2",
                    &[&now_rfc3339(), &id.to_string()],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn balance(&self, account: AccountId) -> StoreResult<Kobo> {
        self.read(|c| Box::pin(balance_of(c, account, false))).await
    }

    async fn credit(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
    ) -> StoreResult<Credit> {
        let reference = reference.to_owned();
        self.write(move |tx| {
            let reference = reference.clone();
            Box::pin(async move {
                // The wallet's row lock orders credits of one account, so the
                // check below sees every credit committed before ours.
                let balance = balance_of(tx, account, true).await?;
                let seen = query_opt(
                    tx,
                    "SELECT 1 FROM ledger WHERE account_id = $1 AND credit_reference = $2",
                    &[&account.to_string(), &reference],
                )
                .await?
                .is_some();
                if seen {
                    return Ok(Credit {
                        balance,
                        applied: false,
                    });
                }
                let balance =
                    post_ledger(tx, account, amount, "credit", None, Some(&reference)).await?;
                Ok(Credit {
                    balance,
                    applied: true,
                })
            })
        })
        .await
    }

    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>> {
        self.read(|c| {
            Box::pin(async move {
                let rows = query(
                    c,
                    &format!(
                        "SELECT {LEDGER_COLUMNS} FROM ledger WHERE account_id = $1 ORDER BY id DESC LIMIT $2"
                    ),
                    &[&account.to_string(), &i64::from(limit)],
                )
                .await?;
                map_rows(rows, ledger_entry)
            })
        })
        .await
    }

    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo> {
        self.read(|c| {
            Box::pin(async move {
                let row = query_one(
                    c,
                    "SELECT COALESCE(SUM(amount), 0)::BIGINT FROM ledger WHERE account_id = $1",
                    &[&account.to_string()],
                )
                .await?;
                Ok(Kobo(get(&row, 0)?))
            })
        })
        .await
    }

    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>> {
        let code = code.to_owned();
        self.read(|c| {
            Box::pin(async move {
                let rows = query(
                    c,
                    &format!(
                        "SELECT {LEDGER_COLUMNS} FROM ledger WHERE transaction_code = $1 ORDER BY id"
                    ),
                    &[&code],
                )
                .await?;
                map_rows(rows, ledger_entry)
            })
        })
        .await
    }

    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)> {
        self.read(|c| Box::pin(load_catalogue(c, false))).await
    }

    async fn catalogue_version(&self) -> StoreResult<i64> {
        self.read(|c| {
            Box::pin(async move {
                let row = query_one(c, "SELECT version FROM catalogue WHERE id = 1", &[]).await?;
                get(&row, 0)
            })
        })
        .await
    }

    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()> {
        catalogue.validate().map_err(StoreError::Invalid)?;
        let document = catalogue_document(catalogue)?;
        self.write(move |tx| {
            let document = document.clone();
            Box::pin(async move { save_document(tx, &document).await })
        })
        .await
    }

    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String> {
        let target = target.to_owned();
        self.write(move |tx| {
            let target = target.clone();
            Box::pin(async move {
                let (_, mut catalogue) = load_catalogue(tx, true).await?;
                let what = catalogue
                    .set_active(&target, active)
                    .ok_or(StoreError::NotFound("provider or plan"))?;
                save_document(tx, &catalogue_document(&catalogue)?).await?;
                Ok(what)
            })
        })
        .await
    }

    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo> {
        let reference = reference.to_owned();
        self.read(|c| {
            Box::pin(async move {
                let row = query_opt(
                    c,
                    "SELECT a.balance, EXISTS (SELECT 1 FROM transactions t
                         WHERE t.account_id = a.id AND t.reference = $2)
                     FROM accounts a WHERE a.id = $1",
                    &[&account.to_string(), &reference],
                )
                .await?
                .ok_or(StoreError::NotFound("account"))?;
                let balance = Kobo(get(&row, 0)?);
                let used: bool = get(&row, 1)?;
                if used {
                    return Err(Refusal::DuplicateReference.into());
                }
                if balance < amount {
                    return Err(Refusal::InsufficientBalance.into());
                }
                Ok(balance)
            })
        })
        .await
    }

    async fn place_purchase(&self, new: NewPurchase) -> StoreResult<Transaction> {
        let args = PurchaseArgs::new(new);
        let Some(lanes) = &self.purchases else {
            let mut args = args;
            return place_one(&self.pool, &mut args).await;
        };
        let (reply, answer) = oneshot::channel();
        lanes[lane_of(args.new.account_id, lanes.len())]
            .send(PurchaseJob { args, reply })
            .map_err(|_| StoreError::Backend("purchase writer stopped".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Backend("purchase writer stopped".into()))?
    }

    async fn transaction(
        &self,
        account: Option<AccountId>,
        lookup: TxLookup,
    ) -> StoreResult<Option<Transaction>> {
        let (column, value) = match lookup {
            TxLookup::Code(code) => ("code", code),
            TxLookup::Reference(reference) => ("reference", reference),
            TxLookup::BatchId(batch) => ("batch_id", batch),
        };
        let account = account.map(|a| a.to_string());
        self.read(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {TX_COLUMNS} FROM transactions
                     WHERE {column} = $1 AND ($2::TEXT IS NULL OR account_id = $2)
                     ORDER BY created_at LIMIT 1"
                );
                query_opt(c, &sql, &[&value, &account])
                    .await?
                    .map(|row| transaction(&row))
                    .transpose()
            })
        })
        .await
    }

    async fn transactions(&self, filter: TxFilter) -> StoreResult<Vec<Transaction>> {
        self.read(|c| {
            Box::pin(async move {
                let rows = query(
                    c,
                    &format!(
                        "SELECT {TX_COLUMNS} FROM transactions WHERE ($1::TEXT IS NULL OR account_id = $1)
                         AND ($2::TEXT IS NULL OR status = $2) AND ($3::TEXT IS NULL OR product = $3)
                         AND ($4::TEXT IS NULL OR created_at >= $4) AND ($5::TEXT IS NULL OR created_at < $5)
                         AND ($6::TEXT IS NULL OR strpos(reference, $6) > 0 OR strpos(code, $6) > 0)
                         ORDER BY created_at DESC, code DESC LIMIT $7 OFFSET $8"
                    ),
                    &[
                        &filter.account_id.map(|a| a.to_string()),
                        &filter.status.map(TxStatus::as_str),
                        &filter.product.map(Product::service),
                        &filter.created_from,
                        &filter.created_until,
                        &filter.search,
                        &i64::from(filter.limit.max(1)),
                        &i64::from(filter.offset),
                    ],
                )
                .await?;
                map_rows(rows, transaction)
            })
        })
        .await
    }

    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>> {
        let since = since.to_owned();
        self.read(|c| {
            Box::pin(async move {
                let rows = query(
                    c,
                    "SELECT substr(created_at, 1, 10) AS day, product, COUNT(*), SUM(amount)::BIGINT
                     FROM transactions
                     WHERE account_id = $1 AND created_at >= $2 AND status <> 'failed'
                     GROUP BY day, product ORDER BY day, product",
                    &[&account.to_string(), &since],
                )
                .await?;
                map_rows(rows, daily_spend_row)
            })
        })
        .await
    }

    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.write(move |tx| {
            let token_hash = token_hash.clone();
            Box::pin(async move {
                execute(
                    tx,
                    "DELETE FROM sessions WHERE expires_at < $1",
                    &[&now_ms()],
                )
                .await?;
                execute(
                    tx,
                    "INSERT INTO sessions (token_hash, account_id, expires_at, created_at)
                     VALUES ($1, $2, $3, $4)",
                    &[
                        &token_hash,
                        &account.to_string(),
                        &expires_at_ms,
                        &now_rfc3339(),
                    ],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>> {
        let token_hash = token_hash.to_owned();
        self.read(|c| {
            Box::pin(async move {
                let row = query_opt(
                    c,
                    "SELECT account_id, expires_at FROM sessions WHERE token_hash = $1 AND expires_at > $2",
                    &[&token_hash, &now_ms()],
                )
                .await?;
                let Some(row) = row else {
                    return Ok(None);
                };
                let account: String = get(&row, 0)?;
                let expires_at_ms: i64 = get(&row, 1)?;
                Ok(account.parse().ok().map(|account_id| Session {
                    account_id,
                    expires_at_ms,
                }))
            })
        })
        .await
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.read(|c| {
            Box::pin(async move {
                execute(
                    c,
                    "DELETE FROM sessions WHERE token_hash = $1",
                    &[&token_hash],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        self.read(|c| {
            Box::pin(async move {
                let now = now_ms();
                // One statement, so one transaction: rows another node holds
                // (locked or leased) are skipped, never waited for.
                let rows = query(
                    c,
                    &format!(
                        "WITH due AS (
                             SELECT code FROM transactions
                             WHERE status = 'processing' AND next_attempt_at <= $2 AND lease_until <= $2
                             ORDER BY next_attempt_at LIMIT $3
                             FOR UPDATE SKIP LOCKED
                         )
                         UPDATE transactions t SET lease_until = $1 FROM due WHERE t.code = due.code
                         RETURNING {}",
                        qualified(TX_COLUMNS, "t")
                    ),
                    &[
                        &(now + lease.as_millis() as i64),
                        &now,
                        &i64::from(limit),
                    ],
                )
                .await?;
                let mut claimed = map_rows(rows, transaction)?;
                claimed.sort_by(|a, b| a.created_at.cmp(&b.created_at));
                Ok(claimed)
            })
        })
        .await
    }

    async fn renew_fulfilment_leases(
        &self,
        codes: Vec<String>,
        lease: Duration,
    ) -> StoreResult<()> {
        if codes.is_empty() {
            return Ok(());
        }
        self.read(|c| {
            Box::pin(async move {
                // `lease_until > 0`: a transaction rescheduled or finalized in
                // the meantime has released its lease; never take it back.
                // SKIP LOCKED: a row a worker's batch is writing right now is
                // left for the next heartbeat; waiting for it could deadlock
                // with that batch (both lock several rows, in no common order).
                execute(
                    c,
                    "WITH mine AS (
                         SELECT code FROM transactions
                         WHERE code = ANY($2) AND status = 'processing' AND lease_until > 0
                         FOR UPDATE SKIP LOCKED
                     )
                     UPDATE transactions t SET lease_until = $1 FROM mine WHERE t.code = mine.code",
                    &[&(now_ms() + lease.as_millis() as i64), &codes],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn mark_submitted(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        // `RETURNING` so the statement answers one row, found or not.
        self.write_statement(
            "WITH marked AS (UPDATE transactions SET submitted = TRUE, supplier = $2, supplier_reference = $3
                             WHERE code = $1 RETURNING 1)
             SELECT COUNT(*) FROM marked",
            owned![
                code.to_owned(),
                supplier.to_owned(),
                supplier_reference.map(str::to_owned)
            ],
        )
        .await?;
        Ok(())
    }

    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()> {
        let (code, note) = (code.to_owned(), note.to_owned());
        self.read(|c| {
            Box::pin(async move {
                execute(
                    c,
                    "UPDATE transactions SET attempts = attempts + 1, next_attempt_at = $1, lease_until = 0,
                       result = jsonb_set(result::jsonb, '{last_note}', to_jsonb($2::TEXT))::TEXT
                     WHERE code = $3 AND status = 'processing'",
                    &[&(now_ms() + delay.as_millis() as i64), &note, &code],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        let completed_at = rfc3339(fin.completed_at_ms);
        let now = now_rfc3339();
        let mut draws = 0;
        let row = loop {
            let params = owned![
                code.to_owned(),
                fin.status.as_str(),
                fin.message.clone(),
                fin.result.to_string(),
                completed_at.clone(),
                new_code("EV"),
                now.clone(),
                fin.event_payload.clone(),
                fin.completed_at_ms,
                // the status it must be in now
                if fin.reversal {
                    "successful"
                } else {
                    "processing"
                },
            ];
            // A refund locks a wallet: never in a batch with other wallets' locks
            // (purchase batches take them in account order; this could not).
            let result = if fin.status == TxStatus::Failed {
                statement(&self.pool, &FINALIZE, &borrow(&params)).await
            } else {
                self.write_statement(FINALIZE.as_str(), params).await
            };
            match result {
                // Another event drew the same id: draw again.
                Err(e) if violates(&e, "events_pkey") && draws < 3 => draws += 1,
                other => break other?,
            }
        };
        let (found, changed): (bool, i64) = (get(&row, 0)?, get(&row, 1)?);
        if !found {
            return Err(StoreError::NotFound("transaction"));
        }
        Ok(changed > 0)
    }

    async fn claim_events(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        let skip: Vec<String> = skip_keys.iter().map(KeyId::to_string).collect();
        self.read(|c| {
            Box::pin(async move {
                let now = now_ms();
                let rows = query(
                    c,
                    &format!(
                        "WITH due AS (
                             SELECT id FROM events
                             WHERE status = 'pending' AND next_attempt_at <= $2 AND lease_until <= $2
                               AND NOT (key_id = ANY($4))
                             ORDER BY next_attempt_at LIMIT $3
                             FOR UPDATE SKIP LOCKED
                         )
                         UPDATE events e SET lease_until = $1 FROM due WHERE e.id = due.id
                         RETURNING {}",
                        qualified(EVENT_COLUMNS, "e")
                    ),
                    &[
                        &(now + lease.as_millis() as i64),
                        &now,
                        &i64::from(limit),
                        &skip,
                    ],
                )
                .await?;
                map_rows(rows, event)
            })
        })
        .await
    }

    async fn record_delivery(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        let (status, next_at) = match next {
            EventNext::Delivered => (EventStatus::Delivered, 0),
            EventNext::Failed => (EventStatus::Failed, 0),
            EventNext::Skipped => (EventStatus::Skipped, 0),
            EventNext::RetryAtMs(at) => (EventStatus::Pending, at),
        };
        // One statement: the attempt and the event's new state commit together.
        self.write_statement(
            "WITH logged AS (
                 INSERT INTO webhook_attempts (event_id, url, http_status, error, latency_ms,
                   response_excerpt, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
             )
             UPDATE events SET status = $8, next_attempt_at = $9, lease_until = 0,
               attempts = attempts + 1 WHERE id = $1
             RETURNING id",
            owned![
                event_id.to_owned(),
                attempt.url,
                attempt.http_status.map(i32::from),
                attempt.error,
                attempt.latency_ms.min(i64::MAX as u64) as i64,
                attempt.response_excerpt,
                now_rfc3339(),
                status.as_str(),
                next_at,
            ],
        )
        .await?;
        Ok(())
    }

    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>> {
        self.read(|c| {
            Box::pin(async move {
                let rows = query(
                    c,
                    &format!(
                        "SELECT {EVENT_COLUMNS} FROM events WHERE ($1::TEXT IS NULL OR account_id = $1)
                         AND (NOT $2 OR status = 'failed') AND ($4::TEXT IS NULL OR key_id = $4)
                         ORDER BY created_at DESC LIMIT $3"
                    ),
                    &[
                        &filter.account_id.map(|a| a.to_string()),
                        &filter.failed_only,
                        &i64::from(filter.limit.max(1)),
                        &filter.key_id.map(|k| k.to_string()),
                    ],
                )
                .await?;
                map_rows(rows, event)
            })
        })
        .await
    }

    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>> {
        let key = id_or_code.to_owned();
        self.read(|c| {
            Box::pin(async move {
                query_opt(
                    c,
                    &format!(
                        "SELECT {EVENT_COLUMNS} FROM events WHERE id = $1 OR transaction_code = $1
                         ORDER BY created_at LIMIT 1"
                    ),
                    &[&key],
                )
                .await?
                .map(|row| event(&row))
                .transpose()
            })
        })
        .await
    }

    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>> {
        let event_id = event_id.to_owned();
        self.read(|c| {
            Box::pin(async move {
                let rows = query(
                    c,
                    &format!(
                        "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = $1 ORDER BY id"
                    ),
                    &[&event_id],
                )
                .await?;
                map_rows(rows, attempt)
            })
        })
        .await
    }

    async fn requeue_event(&self, event_id: &str) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.read(|c| {
            Box::pin(async move {
                // Not while a delivery holds the event: that would send it twice at once.
                let queued = execute(
                    c,
                    "UPDATE events SET status = 'pending', next_attempt_at = $1 WHERE id = $2 AND lease_until <= $1",
                    &[&now_ms(), &event_id],
                )
                .await?;
                let exists = execute(c, "SELECT 1 FROM events WHERE id = $1", &[&event_id]).await? > 0;
                match (queued, exists) {
                    (0, false) => Err(StoreError::NotFound("event").into()),
                    (0, true) => Err(StoreError::Invalid(crate::DELIVERY_IN_PROGRESS.into()).into()),
                    _ => Ok(()),
                }
            })
        })
        .await
    }

    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        self.read(|c| {
            Box::pin(async move {
                let row = query_one(c, crate::BACKLOG, &[]).await?;
                Ok(Backlog {
                    processing: get::<i64>(&row, 0)? as u64,
                    oldest_created_at: get(&row, 1)?,
                })
            })
        })
        .await
    }

    async fn audit(&self) -> StoreResult<Vec<audit::CheckOutcome>> {
        let run = async {
            let mut client = self.client().await?;
            let snapshot = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?;
            let mut outcomes = Vec::new();
            for check in audit::CHECKS {
                let rows = snapshot.query(check.sql, &[]).await?;
                outcomes.push(audit::CheckOutcome {
                    name: check.name,
                    rule: check.rule,
                    violations: rows.iter().map(audit_row).collect::<Result<_, _>>()?,
                });
            }
            snapshot.commit().await?;
            Ok::<_, PgError>(outcomes)
        };
        Ok(run.await?)
    }
}

/// One row of an audit query, every column read as text.
fn audit_row(row: &tokio_postgres::Row) -> Result<audit::AuditRow, tokio_postgres::Error> {
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, column)| Ok((column.name().to_owned(), row.try_get(i)?)))
        .collect()
}
