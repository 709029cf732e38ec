//! The low-balance notice (issue 30), edge-triggered: one notice when a
//! customer's balance is under the mark they set, then none until the
//! balance has been back at or above it.
//!
//! Nothing is added to the purchase path: a periodic pass
//! (`billpay_worker::low_balance`) compares balances with the marks. Each
//! customer's watch is *armed* (`notice_preferences.low_balance_armed`); the
//! pass disarms a watch whose balance is under its mark in one conditional
//! UPDATE (so two nodes cannot both take it), numbers the episode and
//! writes the notice in the same transaction with the cause
//! `low_balance:<account>:<episode>` (the outbox keeps one per cause and
//! channel), and arms again the watches whose balance is back.

use super::notices::{Owner, for_account};
use crate::db::{ReadTx, Tx, col};
use crate::*;
use billpay_domain::AccountId;

/// A watch whose balance is back at or above its mark (or whose mark was
/// removed) is armed again.
const REARM: &str = "UPDATE notice_preferences SET low_balance_armed = TRUE
    WHERE NOT low_balance_armed
      AND (low_balance_below IS NULL OR low_balance_below <=
           (SELECT a.balance FROM accounts a WHERE a.id = notice_preferences.account_id))";

/// Armed watches of active accounts under their mark.
const UNDER: &str = "SELECT p.account_id FROM notice_preferences p
    JOIN accounts a ON a.id = p.account_id
    WHERE p.low_balance_below IS NOT NULL AND p.low_balance_armed
      AND a.balance < p.low_balance_below AND a.status = 'active'";

/// Whether a pass has anything to do (a read: the pass's write is skipped
/// when nothing changed, which is nearly always).
pub(crate) async fn pending<T: ReadTx>(tx: &T) -> Result<bool, T::Error> {
    const COLUMNS: &str = "due";
    let sql = format!(
        "SELECT (EXISTS ({UNDER}) OR EXISTS (SELECT 1 FROM notice_preferences p
             WHERE NOT p.low_balance_armed AND (p.low_balance_below IS NULL
               OR p.low_balance_below <= (SELECT a.balance FROM accounts a WHERE a.id = p.account_id))))
         AS due"
    );
    tx.query_one(&sql, &[], |row| row.get(col!("due"))).await
}

/// One pass: arms again the watches whose balance is back, then tells up
/// to `limit` customers whose balance is under their mark (each once per
/// episode); answers those told.
pub(crate) async fn watch<T: Tx>(tx: &T, limit: u32) -> Result<Vec<AccountId>, T::Error> {
    const COLUMNS: &str = "account_id, low_balance_episode, low_balance_below";
    tx.execute(REARM, &[]).await?;
    let sql = format!(
        "UPDATE notice_preferences
            SET low_balance_armed = FALSE, low_balance_episode = low_balance_episode + 1
          WHERE low_balance_armed AND account_id IN ({UNDER} ORDER BY p.account_id LIMIT CAST(?1 AS BIGINT))
      RETURNING account_id, low_balance_episode, low_balance_below"
    );
    let fired = tx
        .query_all(&sql, &[&i64::from(limit)], |row| {
            Ok((
                row.parsed::<AccountId>(col!("account_id"))?,
                row.get::<i64>(col!("low_balance_episode"))?,
                row.get::<i64>(col!("low_balance_below"))?,
            ))
        })
        .await?;
    let mut told = Vec::with_capacity(fired.len());
    for (account, episode, threshold) in fired {
        let balance = super::wallet::balance_of(tx, account).await?;
        let data = serde_json::json!({ "balance": balance.0, "threshold": threshold });
        let cause = format!("low_balance:{account}:{episode}");
        let (topic, owner) = (NoticeTopic::LowBalance, Owner::Account(account));
        for_account(tx, owner, topic, "low_balance", &cause, &data).await?;
        told.push(account);
    }
    Ok(told)
}
