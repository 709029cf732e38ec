//! `billpay backup FILE`: a consistent copy of the SQLite database while the
//! server runs (SQLite's online backup API). PostgreSQL has its own tools:
//! the command says to use pg_dump.

use super::{Output, Settings};
use anyhow::Context;
use serde_json::json;
use std::path::Path;

pub fn run(settings: &Settings, file: &Path, out: &Output) -> anyhow::Result<()> {
    let url = &settings.database_url;
    anyhow::ensure!(
        !billpay_store::is_postgres_url(url),
        "billpay backup copies SQLite databases; back up PostgreSQL with its own tools: \
         pg_dump --format=custom --file=billpay.dump \"$BILLPAY_DATABASE_URL\" \
         (restore with pg_restore --clean --if-exists --dbname=…; see the README, Backups)"
    );
    let report = billpay_store::sqlite::backup::backup(url, file)
        .with_context(|| format!("cannot back up {}", super::config::redact(url)))?;
    let key_note = if settings.master_key_configured() {
        "BILLPAY_MASTER_KEY is not in the backup: restoring needs the same key".to_owned()
    } else {
        format!(
            "the master key file {} is not in the backup: keep a copy of it apart; restoring needs it",
            settings.master_key_file()?.display()
        )
    };
    out.emit(
        json!({
            "backup": file.display().to_string(),
            "database": report.source.display().to_string(),
            "bytes": report.bytes,
            "master_key": key_note,
        }),
        format!(
            "Backed up {} to {} ({} bytes, one consistent point in time).\nNote: {key_note}.",
            report.source.display(),
            file.display(),
            report.bytes
        ),
    );
    Ok(())
}
