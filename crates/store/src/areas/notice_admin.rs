//! The operators' side of the notification outbox (issue 30): the console's
//! list of notices and "resend one", which operators get which alert (each
//! turns off what they do not want), and the few reads the alerts need.

use crate::clock::now_ms;
use crate::db::{RowRead, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::AccountId;

for_both_engines! {
    impl NoticeAdminStore {
        /// Newest first.
        fn list_notices(filter: NoticeFilter) -> Vec<NoticeListing> = read |tx| list(tx, &filter);
        fn requeue_notice(id: &str, log: NewLogEntry) -> bool
            = write |tx| requeue(tx, &id, &log);
        fn alert_opt_outs(operator: i64) -> Vec<String> = read |tx| opt_outs(tx, operator);
        fn set_alert_opt_outs(operator: i64, kinds: Vec<String>) -> ()
            = write |tx| set_opt_outs(tx, operator, &kinds);
        fn alert_recipients(kind: &str) -> Vec<AlertRecipient> = read |tx| recipients(tx, &kind);
        fn accounts_created(from: &str, until: &str) -> u64
            = read |tx| accounts_created(tx, &from, &until);
    }
}

const NOTICE_COLUMNS: &str = "id, cause, kind, channel, recipient, account_id, operator_id, \
     status, attempts, last_error, provider, created_at, sent_at";

fn listing(row: &dyn RowRead) -> StoreResult<NoticeListing> {
    const COLUMNS: &str = NOTICE_COLUMNS;
    let account: Option<String> = row.get(col!("account_id"))?;
    Ok(NoticeListing {
        id: row.get(col!("id"))?,
        cause: row.get(col!("cause"))?,
        kind: row.get(col!("kind"))?,
        channel: row.get(col!("channel"))?,
        recipient: row.get(col!("recipient"))?,
        account_id: account.and_then(|a| a.parse().ok()),
        operator_id: row.get(col!("operator_id"))?,
        status: row.get(col!("status"))?,
        attempts: row.get(col!("attempts"))?,
        last_error: row.get(col!("last_error"))?,
        provider: row.get(col!("provider"))?,
        created_at: row.get(col!("created_at"))?,
        sent_at: row.get(col!("sent_at"))?,
    })
}

async fn list<T: Tx>(tx: &T, filter: &NoticeFilter) -> Result<Vec<NoticeListing>, T::Error> {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "SELECT {NOTICE_COLUMNS} FROM notices
             WHERE (CAST(?1 AS TEXT) IS NULL OR status = ?1)
               AND (CAST(?2 AS TEXT) IS NULL OR channel = ?2)
               AND (CAST(?3 AS TEXT) IS NULL OR account_id = ?3)
             ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5"
        )
    });
    let account = filter.account_id.map(|a: AccountId| a.to_string());
    let limit = i64::from(filter.limit.max(1));
    let offset = i64::from(filter.offset);
    let params: [&dyn crate::db::Param; 5] =
        [&filter.status, &filter.channel, &account, &limit, &offset];
    tx.query_all(&SQL, &params, listing).await
}

/// Queues the notice for one more send now, with its log line; `false`
/// while a send holds it (two at once could reach the person twice).
/// Its attempts start again, so the retry bound applies afresh.
async fn requeue<T: Tx>(tx: &T, id: &str, log: &NewLogEntry) -> Result<bool, T::Error> {
    const COLUMNS: &str = "status, lease_until";
    let sql = "SELECT status, lease_until FROM notices WHERE id = ?1";
    let found: Option<(String, i64)> = tx
        .query_opt(sql, &[&id], |row| {
            Ok((row.get(col!("status"))?, row.get(col!("lease_until"))?))
        })
        .await?;
    let (before, _) = found.ok_or(StoreError::NotFound("notice"))?;
    let sql = "UPDATE notices SET status = 'queued', attempts = 0, next_attempt_at = ?1,
                   last_error = NULL
               WHERE id = ?2 AND lease_until <= ?1";
    if tx.execute(sql, &[&now_ms(), &id]).await? == 0 {
        return Ok(false);
    }
    let mut log = log.clone();
    log.before = Some(before);
    log.after = Some("queued".into());
    super::operators::append(tx, &log).await?;
    Ok(true)
}

async fn opt_outs<T: Tx>(tx: &T, operator: i64) -> Result<Vec<String>, T::Error> {
    const COLUMNS: &str = "kind";
    let sql = "SELECT kind FROM operator_alert_opt_outs WHERE operator_id = ?1 ORDER BY kind";
    tx.query_all(sql, &[&operator], |row| row.get(col!("kind")))
        .await
}

async fn set_opt_outs<T: Tx>(tx: &T, operator: i64, kinds: &[String]) -> Result<(), T::Error> {
    let sql = "DELETE FROM operator_alert_opt_outs WHERE operator_id = ?1";
    tx.execute(sql, &[&operator]).await?;
    let sql = "INSERT INTO operator_alert_opt_outs (operator_id, kind) VALUES (?1, ?2)
               ON CONFLICT DO NOTHING";
    for kind in kinds {
        tx.execute(sql, &[&operator, kind]).await?;
    }
    Ok(())
}

/// Active operators who have not turned `kind` off (the caller keeps the
/// roles the alert is for).
async fn recipients<T: Tx>(tx: &T, kind: &str) -> Result<Vec<AlertRecipient>, T::Error> {
    const COLUMNS: &str = "id, email, role";
    let sql = "SELECT id, email, role FROM operators o
               WHERE status = 'active' AND NOT EXISTS (
                   SELECT 1 FROM operator_alert_opt_outs x
                   WHERE x.operator_id = o.id AND x.kind = ?1)
               ORDER BY id";
    tx.query_all(sql, &[&kind], |row| {
        Ok(AlertRecipient {
            operator_id: row.get(col!("id"))?,
            email: row.get(col!("email"))?,
            role: row.parsed(col!("role"))?,
        })
    })
    .await
}

/// Accounts created in `[from, until)` (RFC 3339 bounds): the daily
/// summary's new customers.
async fn accounts_created<T: Tx>(tx: &T, from: &str, until: &str) -> Result<u64, T::Error> {
    const COLUMNS: &str = "n";
    let sql = "SELECT COUNT(*) AS n FROM accounts WHERE created_at >= ?1 AND created_at < ?2";
    tx.query_one(sql, &[&from, &until], |row| row.get(col!("n")))
        .await
}
