//! The SQLite engine: one writer thread that group-commits, and a small pool
//! of read connections. A write is answered only after its batch's COMMIT,
//! with `synchronous=FULL`, so an answered write is durable.

use crate::{StoreError, StoreResult};
use rusqlite::{Connection, OpenFlags};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;

/// Operations per transaction at most; more wait for the next batch.
const MAX_BATCH: usize = 256;
const MIGRATIONS: &[&str] = &[
    include_str!("001_initial.sql"),
    include_str!("002_sessions.sql"),
    include_str!("003_supplier.sql"),
];

type Reply = Box<dyn FnOnce(Result<(), StoreError>) + Send>;
type Job = Box<dyn FnOnce(&Connection) -> Reply + Send>;

pub struct Engine {
    writer: mpsc::Sender<Job>,
    readers: Mutex<Vec<Connection>>,
    path: PathBuf,
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
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
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
        let (writer, jobs) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("billpay-sqlite-writer".into())
            .spawn(move || run_writer(writer_conn, jobs))
            .map_err(|e| StoreError::Backend(e.to_string()))?;
        Ok(Engine {
            writer,
            readers: Mutex::new(Vec::new()),
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

    /// Runs `op` on a pooled read connection off the async runtime.
    pub async fn read<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let conn = match self.readers.lock().expect("reader pool poisoned").pop() {
            Some(conn) => conn,
            None => connect(&self.path)?,
        };
        let (conn, result) = tokio::task::spawn_blocking(move || {
            let result = op(&conn);
            (conn, result)
        })
        .await
        .map_err(|e| StoreError::Backend(format!("read task failed: {e}")))?;
        let mut pool = self.readers.lock().expect("reader pool poisoned");
        if pool.len() < 8 {
            pool.push(conn);
        }
        result
    }
}

fn run_in_savepoint<T>(
    conn: &Connection,
    op: impl FnOnce(&Connection) -> StoreResult<T>,
) -> StoreResult<T> {
    conn.execute_batch("SAVEPOINT op")?;
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| op(conn)))
        .unwrap_or_else(|_| Err(StoreError::Backend("store operation panicked".into())));
    let end = if result.is_ok() {
        "RELEASE op"
    } else {
        "ROLLBACK TO op; RELEASE op"
    };
    conn.execute_batch(end)?;
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
