//! The operators' side of the notification outbox (issue 30): the console's
//! list of notices and "resend one", which operators get which alert (each
//! turns off what they do not want), and the few reads the alerts need.

use crate::clock::now_ms;
use crate::db::{Param, ReadTx, Tx, col, for_both_engines};
use crate::*;

for_both_engines! {
    /// The operators' side of the outbox: "resend one" with its log line,
    /// which operator gets which alert, and the reads the alerts need.
    pub trait NoticeAdminStore {
        /// The alert kinds the operator turned off.
        fn alert_opt_outs(operator: i64) -> Vec<String> = read |tx| opt_outs(tx, operator);
        /// Replaces the alert kinds the operator turned off.
        fn set_alert_opt_outs(operator: i64, kinds: Vec<String>) -> ()
            = write |tx| set_opt_outs(tx, operator, &kinds);
        /// Active operators who have not turned `kind` off, whatever their role,
        /// with where it goes by each channel they chose.
        fn alert_recipients(kind: &str) -> Vec<AlertRecipient> = read |tx| recipients(tx, &kind);
        /// How the operator gets alerts (the defaults when never changed).
        fn alert_channels(operator: i64) -> AlertChannels = read |tx| channels(tx, operator);
        fn set_alert_channels(operator: i64, channels: AlertChannels) -> ()
            = write |tx| set_channels(tx, operator, &channels);
        /// Accounts created in `[from, until)` (RFC 3339 bounds).
        fn accounts_created(from: &str, until: &str) -> u64
            = read |tx| accounts_created(tx, &from, &until);
    }
}

/// Queues the notice for one more send now, with its log line; `false`
/// while a send holds it (two at once could reach the person twice).
/// Its attempts start again, so the retry bound applies afresh.
pub(crate) async fn resend<T: Tx>(tx: &T, id: &str, log: &NewLogEntry) -> Result<bool, T::Error> {
    const COLUMNS: &str = "status, lease_until";
    let sql = "SELECT status, lease_until FROM notices WHERE id = ?1";
    let found: Option<(String, i64)> = tx
        .query_opt(sql, &[&id], |row| {
            Ok((row.get(col!("status"))?, row.get(col!("lease_until"))?))
        })
        .await?;
    let (before, lease_until) = found.ok_or(StoreError::NotFound("notice"))?;
    if lease_until > now_ms() {
        return Ok(false);
    }
    super::notices::requeue(tx, id).await?;
    let mut log = log.clone();
    log.before = Some(before);
    log.after = Some("queued".into());
    super::operators::append(tx, &log).await?;
    Ok(true)
}

async fn opt_outs<T: ReadTx>(tx: &T, operator: i64) -> Result<Vec<String>, T::Error> {
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

/// Active operators who have not turned `kind` off, each with the email
/// and phone it goes to by their channels (no row: by email only); those
/// who turned every channel off are left out.
async fn recipients<T: ReadTx>(tx: &T, kind: &str) -> Result<Vec<AlertRecipient>, T::Error> {
    const COLUMNS: &str = "id, email, sms, role";
    let sql = "SELECT o.id,
                      CASE WHEN COALESCE(c.by_email, TRUE) THEN o.email END AS email,
                      CASE WHEN c.by_sms THEN c.phone END AS sms, o.role
               FROM operators o LEFT JOIN operator_alert_channels c ON c.operator_id = o.id
               WHERE o.status = 'active' AND NOT EXISTS (
                   SELECT 1 FROM operator_alert_opt_outs x
                   WHERE x.operator_id = o.id AND x.kind = ?1)
               ORDER BY o.id";
    let found = tx
        .query_all(sql, &[&kind], |row| {
            Ok(AlertRecipient {
                operator_id: row.get(col!("id"))?,
                email: row.get(col!("email"))?,
                sms: row.get(col!("sms"))?,
                role: row.parsed(col!("role"))?,
            })
        })
        .await?;
    let reachable = |r: &AlertRecipient| r.email.is_some() || r.sms.is_some();
    Ok(found.into_iter().filter(reachable).collect())
}

async fn channels<T: ReadTx>(tx: &T, operator: i64) -> Result<AlertChannels, T::Error> {
    const COLUMNS: &str = "phone, by_email, by_sms";
    let sql = "SELECT phone, by_email, by_sms FROM operator_alert_channels WHERE operator_id = ?1";
    let found = tx
        .query_opt(sql, &[&operator], |row| {
            Ok(AlertChannels {
                phone: row.get(col!("phone"))?,
                by_email: row.get(col!("by_email"))?,
                by_sms: row.get(col!("by_sms"))?,
            })
        })
        .await?;
    Ok(found.unwrap_or_default())
}

async fn set_channels<T: Tx>(
    tx: &T,
    operator: i64,
    channels: &AlertChannels,
) -> Result<(), T::Error> {
    let sql =
        "INSERT INTO operator_alert_channels (operator_id, phone, by_email, by_sms, updated_at)
               VALUES (?1, ?2, ?3, ?4, ?5)
               ON CONFLICT (operator_id) DO UPDATE SET phone = excluded.phone,
                   by_email = excluded.by_email, by_sms = excluded.by_sms,
                   updated_at = excluded.updated_at";
    let params: [&dyn Param; 5] = [
        &operator,
        &channels.phone,
        &channels.by_email,
        &channels.by_sms,
        &crate::clock::now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    Ok(())
}

/// Accounts created in `[from, until)` (RFC 3339 bounds): the daily
/// summary's new customers.
async fn accounts_created<T: ReadTx>(tx: &T, from: &str, until: &str) -> Result<u64, T::Error> {
    const COLUMNS: &str = "n";
    let sql = "SELECT COUNT(*) AS n FROM accounts WHERE created_at >= ?1 AND created_at < ?2";
    tx.query_one(sql, &[&from, &until], |row| row.get(col!("n")))
        .await
}
