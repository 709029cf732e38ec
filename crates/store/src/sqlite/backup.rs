//! `billpay backup`: a consistent copy of a live SQLite database through
//! SQLite's online backup API. The copy is taken in one step inside a read
//! transaction, so it is one point in time even while the server writes (in
//! WAL mode writers carry on; a step-by-step copy would restart on every
//! write). It is written beside the destination and renamed into place only
//! once it passes `PRAGMA integrity_check`, so a failed backup leaves nothing
//! that looks like a good one.

use super::path_from_url;
use crate::{StoreError, StoreResult};
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct BackupReport {
    /// The database that was copied.
    pub source: PathBuf,
    pub bytes: u64,
}

/// Copies the database of `database_url` to `destination`, which must not exist.
pub fn backup(database_url: &str, destination: &Path) -> StoreResult<BackupReport> {
    let source = path_from_url(database_url)?;
    if destination.exists() {
        return Err(StoreError::Invalid(format!(
            "{} already exists: choose a new file name",
            destination.display()
        )));
    }
    // Read-only, and never creates a database that is not there.
    let from = Connection::open_with_flags(&source, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| StoreError::Invalid(format!("cannot open {}: {e}", source.display())))?;
    from.busy_timeout(Duration::from_secs(5))?;
    let partial = partial_path(destination);
    let _ = std::fs::remove_file(&partial);
    let copied = copy_into(&from, &partial).and_then(|()| {
        std::fs::rename(&partial, destination).map_err(|e| {
            StoreError::caused_in(format!("cannot write {}", destination.display()), e)
        })
    });
    if copied.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    copied?;
    let bytes = std::fs::metadata(destination).map_or(0, |m| m.len());
    Ok(BackupReport { source, bytes })
}

fn copy_into(from: &Connection, path: &Path) -> StoreResult<()> {
    let mut to = Connection::open(path)?;
    {
        let backup = Backup::new(from, &mut to)?;
        // -1: every page in one step, i.e. one read transaction.
        while backup.step(-1)? != StepResult::Done {
            std::thread::sleep(Duration::from_millis(20)); // busy or locked: try again
        }
    }
    let check: String = to.query_row("PRAGMA integrity_check", [], |row| row.get(0))?;
    if check != "ok" {
        return Err(StoreError::backend(format!(
            "the copy failed its integrity check: {check}"
        )));
    }
    to.close().map_err(|(_, e)| StoreError::from(e))
}

fn partial_path(destination: &Path) -> PathBuf {
    let mut name = destination.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    destination.with_file_name(name)
}
