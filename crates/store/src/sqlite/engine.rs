//! The SQLite engine: one writer thread that group-commits, and a fixed set
//! of reader threads, each owning one read connection opened at start; point
//! reads on the request path (a row by its key) run on the calling thread's
//! own connection instead ([`Engine::read_here`]). A write is answered only
//! after its batch's COMMIT, with `synchronous=FULL`, so an answered write is
//! durable. Both keep their prepared statements
//! cached per connection, so a hot query is parsed once.

use crate::{StoreError, StoreResult};
use rusqlite::{Connection, OpenFlags};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;

/// Operations per transaction at most; more wait for the next batch.
const MAX_BATCH: usize = 256;
/// Prepared statements kept per connection (rusqlite's default is 16, fewer
/// than the statements the store uses).
const STATEMENT_CACHE: usize = 128;
const MIGRATIONS: &[&str] = &[
    include_str!("001_initial.sql"),
    include_str!("002_sessions.sql"),
    include_str!("003_supplier.sql"),
    include_str!("004_events_due_by_key.sql"),
    include_str!("005_ledger_by_transaction.sql"),
    include_str!("006_credit_source.sql"),
    include_str!("007_pricing.sql"),
    include_str!("008_funding.sql"),
    include_str!("009_operators.sql"),
    include_str!("010_totp_step.sql"),
    include_str!("011_reversal_watch.sql"),
    include_str!("012_last_cost.sql"),
    include_str!("013_notices.sql"),
    include_str!("014_notice_outbox.sql"),
    include_str!("015_operator_alerts.sql"),
    include_str!("016_account_care.sql"),
    include_str!("017_shop_buying.sql"),
    include_str!("018_checkouts.sql"),
    include_str!("019_notice_watches.sql"),
    include_str!("020_checkouts_abandoned.sql"),
    include_str!("021_privacy.sql"),
    include_str!("022_limits.sql"),
    include_str!("023_velocity.sql"),
];

type Reply = Box<dyn FnOnce(Result<(), StoreError>) + Send>;
type Job = Box<dyn FnOnce(&Connection) -> Reply + Send>;
type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

pub struct Engine {
    writer: mpsc::Sender<Job>,
    /// Served by the reader threads, whichever is free first.
    reads: mpsc::Sender<ReadJob>,
    /// Names this engine's connections in the threads' [`NEARBY`] maps.
    id: u64,
    path: PathBuf,
}

thread_local! {
    /// Each thread's own connection per engine, for [`Engine::read_here`].
    static NEARBY: std::cell::RefCell<std::collections::HashMap<u64, Connection>> =
        std::cell::RefCell::default();
}

static ENGINES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Reader threads: reads are short and CPU-bound, so a few more than the
/// cores keeps them busy while one waits on the disk; more would only queue
/// inside SQLite.
fn reader_count() -> usize {
    std::thread::available_parallelism().map_or(4, |n| (n.get() * 2).clamp(4, 16))
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Backend(e.to_string())
    }
}

/// `sqlite://billpay.db` (relative) or `sqlite:///var/lib/billpay/db.sqlite` (absolute).
pub fn path_from_url(url: &str) -> StoreResult<PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .ok_or_else(|| StoreError::Invalid(format!("not a sqlite URL: {url}")))?;
    let rest = rest.split('?').next().unwrap_or_default();
    if rest.is_empty() {
        return Err(StoreError::Invalid("sqlite URL names no file".into()));
    }
    Ok(PathBuf::from(rest))
}

fn connect(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // Other processes (the CLI) write too: wait for their locks instead of failing.
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // secure_delete: what a statement frees is zeroed, so an erased
    // customer's old name, email and phone are not left in the file's free
    // space (`areas/privacy.rs`); it costs a memset, not I/O, on the
    // purchase path, which frees no pages.
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;
         PRAGMA temp_store = MEMORY; PRAGMA secure_delete = ON;",
    )?;
    Ok(conn)
}

fn migrate(conn: &Connection) -> StoreResult<()> {
    let current: usize = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {sql}; PRAGMA user_version = {}; COMMIT;",
            index + 1
        ))
        .map_err(|e| StoreError::Backend(format!("migration {} failed: {e}", index + 1)))?;
        tracing::info!(version = index + 1, "applied SQLite migration");
    }
    Ok(())
}

impl Engine {
    pub fn open(path: PathBuf) -> StoreResult<Engine> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Backend(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        let writer_conn = connect(&path)?;
        // Two migrating processes must not race: take the write lock first.
        migrate(&writer_conn)?;
        // 16 MiB of pages for the writer (SQLite's default is 2 MiB): the
        // indexes a purchase touches stay in memory as the tables grow.
        writer_conn.execute_batch("PRAGMA cache_size = -16384;")?;
        let (writer, jobs) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("billpay-sqlite-writer".into())
            .spawn(move || run_writer(writer_conn, jobs))
            .map_err(|e| StoreError::Backend(e.to_string()))?;
        let (reads, queue) = mpsc::channel::<ReadJob>();
        let queue = Arc::new(Mutex::new(queue));
        for index in 0..reader_count() {
            let (conn, queue) = (connect(&path)?, queue.clone());
            std::thread::Builder::new()
                .name(format!("billpay-sqlite-reader-{index}"))
                .spawn(move || run_reader(conn, &queue))
                .map_err(|e| StoreError::Backend(e.to_string()))?;
        }
        let id = ENGINES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Engine {
            writer,
            reads,
            id,
            path,
        })
    }

    /// Runs `op` inside the next group-commit batch (in its own savepoint, so a
    /// failing op leaves the others intact) and answers after COMMIT.
    pub async fn write<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let result = run_in_savepoint(conn, op);
            Box::new(move |commit: Result<(), StoreError>| {
                let _ = tx.send(commit.and(result));
            })
        });
        self.writer
            .send(job)
            .map_err(|_| StoreError::Backend("writer thread stopped".into()))?;
        rx.await
            .map_err(|_| StoreError::Backend("writer thread stopped".into()))?
    }

    /// Runs `op` on the next free reader thread's connection; when all are
    /// busy it waits in their queue (never opens another connection).
    pub async fn read<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn| {
            let _ = tx.send(caught(|| op(conn)));
        });
        let stopped = || StoreError::Backend("reader threads stopped".into());
        self.reads.send(job).map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

/// Runs `op`, a panic turned into an error: the thread and its connection
/// carry on serving the others.
fn caught<T>(op: impl FnOnce() -> StoreResult<T>) -> StoreResult<T> {
    std::panic::catch_unwind(AssertUnwindSafe(op))
        .unwrap_or_else(|_| Err(StoreError::Backend("store operation panicked".into())))
}

impl Engine {
    /// Runs a point read (a row by its key: microseconds) right here, on this
    /// thread's own connection: no hop to a reader thread and back, which
    /// costs more than the read. WAL readers never wait for the writer.
    pub fn read_here<T>(&self, op: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        NEARBY.with(|nearby| {
            let mut nearby = nearby.borrow_mut();
            let conn = match nearby.entry(self.id) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => v.insert(connect(&self.path)?),
            };
            caught(|| op(conn))
        })
    }
}

fn run_reader(conn: Connection, queue: &Mutex<mpsc::Receiver<ReadJob>>) {
    loop {
        // Held only while waiting for a job: the next free reader takes the next one.
        let job = queue.lock().expect("read queue poisoned").recv();
        match job {
            Ok(job) => job(&conn),
            Err(_) => return,
        }
    }
}

fn run_in_savepoint<T>(
    conn: &Connection,
    op: impl FnOnce(&Connection) -> StoreResult<T>,
) -> StoreResult<T> {
    conn.prepare_cached("SAVEPOINT op")?.execute([])?;
    let result = caught(|| op(conn));
    if result.is_err() {
        conn.prepare_cached("ROLLBACK TO op")?.execute([])?;
    }
    conn.prepare_cached("RELEASE op")?.execute([])?;
    result
}

fn run_writer(conn: Connection, jobs: mpsc::Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let started = std::time::Instant::now();
        let size = batch.len();
        // Another process may hold the lock for a while: keep trying, never drop work.
        while let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
            tracing::warn!(error = %e, "waiting for the SQLite write lock");
            std::thread::sleep(Duration::from_millis(50));
        }
        let replies: Vec<Reply> = batch.into_iter().map(|job| job(&conn)).collect();
        let commit = conn.execute_batch("COMMIT").map_err(StoreError::from);
        crate::metrics::record_batch("sqlite", "writes", size, started);
        if let Err(e) = &commit {
            tracing::error!(error = %e, "group commit failed; batch rolled back");
            let _ = conn.execute_batch("ROLLBACK");
        }
        for reply in replies {
            reply(match &commit {
                Ok(()) => Ok(()),
                Err(e) => Err(StoreError::Backend(e.to_string())),
            });
        }
    }
}
