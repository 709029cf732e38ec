//! The notification outbox (issue 30): a notice is added in the same
//! transaction as its cause ([`enqueue`], called from that cause's area
//! function), then claimed under a lease and sent by the worker.

use crate::clock::{new_code, now_ms, now_rfc3339};
use crate::db::{Tx, for_both_engines};
use crate::*;

for_both_engines! {
    impl NoticeStore {
        /// Adds a notice on its own (a cause with no other change, such as a
        /// test message); `false` when one for that cause and channel exists.
        fn enqueue_notice(notice: NewNotice) -> bool = write |tx| enqueue(tx, &notice);
    }
}

/// Adds `notice` to the outbox inside the caller's transaction; `false` when
/// a notice for the same cause and channel is already there.
pub(crate) async fn enqueue<T: Tx>(tx: &T, notice: &NewNotice) -> Result<bool, T::Error> {
    let sql = "INSERT INTO notices
                   (id, cause, kind, channel, recipient, account_id, operator_id, data,
                    next_attempt_at, created_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
               ON CONFLICT (cause, channel) DO NOTHING";
    let id = new_code("NT");
    let account = notice.account_id.map(|a| a.to_string());
    let data = notice.data.to_string();
    let added = tx
        .execute(
            sql,
            &[
                &id,
                &notice.cause,
                &notice.kind,
                &notice.channel,
                &notice.recipient,
                &account,
                &notice.operator_id,
                &data,
                &now_ms(),
                &now_rfc3339(),
            ],
        )
        .await?;
    Ok(added == 1)
}
