//! The SQLite engine: one writer thread that group-commits, and a fixed set
//! of reader threads, each owning one read connection opened at start; point
//! reads on the request path (a row by its key) run on the calling thread's
//! own connection instead ([`Engine::read_here`]). A write is answered only
//! after its batch's COMMIT, with `synchronous=FULL`, so an answered write is
//! durable. Both keep their prepared statements
//! cached per connection, so a hot query is parsed once.

use super::statements::execute;
use crate::migrations::MIGRATIONS;
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

/// A batch's outcome as each job's reply sees it: committed, or why not.
type Commit = Result<(), Arc<dyn std::error::Error + Send + Sync>>;
type Reply = Box<dyn FnOnce(&Commit) + Send>;
/// A job answers its reply, and whether it failed after changing rows that
/// no savepoint of its own can undo ([`Engine::write_bare`]).
type Job = Box<dyn FnOnce(&Connection) -> (Reply, Torn) + Send>;
type Torn = bool;
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
        StoreError::caused(e)
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

pub(crate) fn connect(path: &Path) -> StoreResult<Connection> {
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
    trace_statements(&conn);
    Ok(conn)
}

/// Where each statement a connection runs is logged, at `TRACE`, when that
/// target is on (`RUST_LOG=billpay_store::sql=trace`): how the statements and
/// writes of a purchase are counted (docs/benchmarks.md, "Writes per
/// purchase"). Off, nothing is installed and nothing is paid.
pub(crate) const SQL_TARGET: &str = "billpay_store::sql";

fn trace_statements(conn: &Connection) {
    if tracing::enabled!(target: SQL_TARGET, tracing::Level::TRACE) {
        use rusqlite::trace::{TraceEvent, TraceEventCodes};
        fn logged(event: TraceEvent<'_>) {
            if let TraceEvent::Stmt(statement, _) = event {
                let thread = std::thread::current();
                let sql = statement.sql();
                tracing::trace!(target: SQL_TARGET, thread = thread.name().unwrap_or("-"), %sql);
            }
        }
        conn.trace_v2(TraceEventCodes::SQLITE_TRACE_STMT, Some(logged));
    }
}

/// Applies the steps of `crate::migrations` after the file's `user_version`,
/// up to `last`, each in its own transaction.
pub(crate) fn migrate(conn: &Connection, last: usize) -> StoreResult<()> {
    let current: usize = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (index, step) in MIGRATIONS.iter().enumerate().take(last).skip(current) {
        let (version, sql) = (index + 1, step.sql(crate::db::Engine::Sqlite));
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {sql}; PRAGMA user_version = {version}; COMMIT;"
        ))
        .map_err(|e| StoreError::caused_in(format!("migration {} failed", step.name), e))?;
        tracing::info!(version, "applied SQLite migration");
    }
    Ok(())
}

impl Engine {
    pub fn open(path: PathBuf) -> StoreResult<Engine> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::caused_in(format!("cannot create {}", dir.display()), e)
            })?;
        }
        let writer_conn = connect(&path)?;
        // Two migrating processes must not race: take the write lock first.
        migrate(&writer_conn, MIGRATIONS.len())?;
        // 16 MiB of pages for the writer (SQLite's default is 2 MiB): the
        // indexes a purchase touches stay in memory as the tables grow.
        writer_conn.execute_batch("PRAGMA cache_size = -16384;")?;
        let (writer, jobs) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("billpay-sqlite-writer".into())
            .spawn(move || run_writer(writer_conn, jobs))
            .map_err(StoreError::caused)?;
        let (reads, queue) = mpsc::channel::<ReadJob>();
        let queue = Arc::new(Mutex::new(queue));
        for index in 0..reader_count() {
            let (conn, queue) = (connect(&path)?, queue.clone());
            std::thread::Builder::new()
                .name(format!("billpay-sqlite-reader-{index}"))
                .spawn(move || run_reader(conn, &queue))
                .map_err(StoreError::caused)?;
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
        self.submit(move |conn| (run_in_savepoint(conn, op), false))
            .await
    }

    /// [`Engine::write`] without the job's savepoint, whose sub-journal copies
    /// every page the job changes, for an `op` that refuses, if it does,
    /// before its first change: one statement (SQLite undoes a failed
    /// statement by itself), or a purchase's placement and finalize, whose
    /// checks come first. Should `op` fail after a change all the same, its
    /// whole batch is rolled back and every job in it fails, as when COMMIT
    /// fails: nothing half-done is ever committed.
    pub async fn write_bare<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        self.submit(move |conn| {
            let before = conn.total_changes();
            let result = caught(|| op(conn));
            let torn = result.is_err() && conn.total_changes() != before;
            (result, torn)
        })
        .await
    }

    /// Queues `job` for the next group commit; answers after COMMIT (a job
    /// that failed with its own error, whatever the batch did).
    async fn submit<T, F>(&self, job: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> (StoreResult<T>, Torn) + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let (result, torn) = job(conn);
            let reply: Reply = Box::new(move |commit: &Commit| {
                let committed = commit
                    .as_ref()
                    .map_err(|e| StoreError::caused(Arc::clone(e)));
                let _ = tx.send(result.and_then(|value| committed.map(|()| value)));
            });
            (reply, torn)
        });
        self.writer
            .send(job)
            .map_err(|_| StoreError::backend("writer thread stopped"))?;
        rx.await
            .map_err(|_| StoreError::backend("writer thread stopped"))?
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
        let stopped = || StoreError::backend("reader threads stopped");
        self.reads.send(job).map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

/// Runs `op`, a panic turned into an error: the thread and its connection
/// carry on serving the others.
fn caught<T>(op: impl FnOnce() -> StoreResult<T>) -> StoreResult<T> {
    std::panic::catch_unwind(AssertUnwindSafe(op))
        .unwrap_or_else(|_| Err(StoreError::backend("store operation panicked")))
}

/// Runs `op`'s reads in one read transaction: they agree, and the WAL's read
/// lock (file-lock system calls) is taken once, not once per statement. The
/// transaction ends whatever `op` does, a panic included, so the connection
/// never keeps a snapshot that would hold the WAL back.
pub(crate) fn agreeing<T>(
    conn: &Connection,
    op: impl FnOnce(&Connection) -> StoreResult<T>,
) -> StoreResult<T> {
    conn.prepare_cached("BEGIN")?.execute([])?;
    let answer = caught(|| op(conn));
    conn.prepare_cached("COMMIT")?.execute([])?;
    answer
}

impl Engine {
    /// Runs a point read (a row by its key: microseconds; or the few rows of
    /// a page's panel) right here, on this thread's own connection, in one
    /// read transaction ([`agreeing`]): no hop to a reader thread and back,
    /// which costs more than the read. WAL readers never wait for the writer.
    pub fn read_here<T>(&self, op: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        NEARBY.with(|nearby| {
            let mut nearby = nearby.borrow_mut();
            let conn = match nearby.entry(self.id) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => v.insert(connect(&self.path)?),
            };
            agreeing(conn, op)
        })
    }
}

/// Why a batch was rolled back instead of committed.
#[derive(Debug, thiserror::Error)]
#[error("a write failed after changing rows outside a savepoint; its batch was rolled back")]
struct TornBatch;

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
        // Through the statement cache: `execute_batch` would parse each
        // of BEGIN and COMMIT again for every group commit.
        while let Err(e) = execute(&conn, "BEGIN IMMEDIATE", []) {
            tracing::warn!(error = %e, "waiting for the SQLite write lock");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut torn = false;
        let replies: Vec<Reply> = batch
            .into_iter()
            .map(|job| {
                let (reply, job_torn) = job(&conn);
                torn |= job_torn;
                reply
            })
            .collect();
        // shared, so each job's reply carries the cause itself
        let commit: Commit = if torn {
            Err(Arc::new(TornBatch))
        } else {
            execute(&conn, "COMMIT", [])
                .map(drop)
                .map_err(|e| Arc::new(e) as _)
        };
        crate::metrics::record_batch("sqlite", "writes", size, started);
        if let Err(e) = &commit {
            tracing::error!(error = %e, "group commit failed; batch rolled back");
            let _ = execute(&conn, "ROLLBACK", []);
        }
        for reply in replies {
            reply(&commit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Engine;
    use crate::{StoreError, StoreResult};

    /// A statement that fails part-way leaves nothing of itself behind
    /// without a savepoint, and the batch's other writes commit.
    #[tokio::test]
    async fn a_failed_statement_without_a_savepoint_changes_nothing_and_spares_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path().join("statements.db")).unwrap();
        let table = "CREATE TABLE t (n INTEGER PRIMARY KEY, v INTEGER NOT NULL CHECK (v < 10))";
        engine
            .write(move |conn| Ok(conn.execute(table, [])?))
            .await
            .unwrap();
        let insert = |sql: &'static str| engine.write_bare(move |conn| Ok(conn.execute(sql, [])?));
        let (kept, refused) = tokio::join!(
            insert("INSERT INTO t VALUES (1, 1)"),
            // its second row breaks the CHECK after its first was written
            insert("INSERT INTO t VALUES (2, 2), (3, 30)"),
        );
        assert_eq!(kept.unwrap(), 1);
        assert!(refused.is_err());
        let stored = engine
            .read(|conn| {
                let mut stmt = conn.prepare("SELECT n FROM t ORDER BY n")?;
                let rows = stmt.query_map([], |row| row.get::<_, i64>(0))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
            .unwrap();
        assert_eq!(stored, [1]);
    }

    /// A bare job that fails after a change takes its whole batch with it:
    /// its batchmate's write is not committed, and each says why.
    #[tokio::test]
    async fn a_bare_job_failing_after_a_change_rolls_its_batch_back() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path().join("torn.db")).unwrap();
        let table = "CREATE TABLE t (n INTEGER PRIMARY KEY)";
        engine
            .write(move |conn| Ok(conn.execute(table, [])?))
            .await
            .unwrap();
        // The writer is held inside this job (its own batch, already closed)
        // while both others are queued, so they share the next batch: no
        // timing decides it (a sleep did, and lost under load).
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (inside, writer_inside) = tokio::sync::oneshot::channel::<()>();
        let blocker = engine.write(move |_| {
            let _ = inside.send(());
            Ok(wait.recv().ok())
        });
        let both = async {
            writer_inside.await.unwrap();
            let kept = engine.write(|conn| Ok(conn.execute("INSERT INTO t VALUES (1)", [])?));
            let torn = engine.write_bare(|conn| {
                conn.execute("INSERT INTO t VALUES (2)", [])?;
                Err::<(), _>(StoreError::Invalid("refused after a change".into()))
            });
            // both are queued on their first poll, before the writer is let go
            let release = async { go.send(()).unwrap() };
            let (kept, torn, ()) = tokio::join!(kept, torn, release);
            (kept, torn)
        };
        let (_, (kept, torn)) = tokio::join!(blocker, both);
        let kept = kept.unwrap_err().to_string();
        assert!(kept.contains("its batch was rolled back"), "{kept}");
        assert_eq!(torn.unwrap_err().to_string(), "refused after a change");
        let count = |conn: &rusqlite::Connection| -> StoreResult<i64> {
            Ok(conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))?)
        };
        assert_eq!(engine.read(count).await.unwrap(), 0);
        // The writer carries on with the next batch.
        engine
            .write_bare(|conn| Ok(conn.execute("INSERT INTO t VALUES (3)", [])?))
            .await
            .unwrap();
        assert_eq!(engine.read(count).await.unwrap(), 1);
    }
}
