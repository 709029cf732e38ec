//! Dashboard sessions, stored by the hash of their token.

use crate::clock::{now_ms, now_rfc3339};
use crate::columns::ACCOUNT_COLUMNS;
use crate::db::{One, ReadTx, Tx, for_both_engines};
use crate::*;
use billpay_domain::AccountId;
use std::sync::LazyLock;

for_both_engines! {
    /// Dashboard sessions.
    pub trait SessionStore {
        /// Stores a session, dropping the expired ones first.
        fn create_session(token_hash: &str, account: AccountId, expires_at_ms: i64) -> ()
            = write |tx| create(tx, &token_hash, account, expires_at_ms);
        /// The account of the unexpired session with this token hash, read
        /// at once on the request path (every signed-in page asks).
        fn session_account(token_hash: &str) -> Option<Account>
            = here |tx| account_of(tx, &token_hash);
        fn delete_session(token_hash: &str) -> () = statement |tx| delete(tx, &token_hash);
    }
}

async fn create<T: Tx>(
    tx: &T,
    token_hash: &str,
    account: AccountId,
    expires_at_ms: i64,
) -> Result<(), T::Error> {
    let expired = "DELETE FROM sessions WHERE expires_at < ?1";
    tx.execute(expired, &[&now_ms()]).await?;
    let insert = "INSERT INTO sessions (token_hash, account_id, expires_at, created_at)
                  VALUES (?1, ?2, ?3, ?4)";
    let (account, now) = (account.to_string(), now_rfc3339());
    tx.execute(insert, &[&token_hash, &account, &expires_at_ms, &now])
        .await?;
    Ok(())
}

/// One statement: every signed-in page asks it first.
pub(crate) async fn account_of<T: ReadTx>(
    tx: &T,
    token_hash: &str,
) -> Result<Option<Account>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        // Developer access is the account's own switch or its tier's
        // (migration 042): the last column, in the mapper's place.
        let own = ACCOUNT_COLUMNS
            .strip_suffix("developer_access")
            .expect("developer_access is the last account column");
        format!(
            "SELECT {own} COALESCE(developer_access, (SELECT 'tier' FROM account_tiers t
                 JOIN price_tiers p ON p.name = t.tier
                 WHERE t.account_id = accounts.id AND p.developer_access)) AS developer_access
             FROM accounts WHERE id = (SELECT account_id FROM sessions
             WHERE token_hash = ?1 AND expires_at > ?2)"
        )
    });
    tx.query_opt(&SQL, &[&token_hash, &now_ms()], crate::rows::account)
        .await
}

async fn delete<T: Tx>(tx: One<'_, T>, token_hash: &str) -> Result<(), T::Error> {
    tx.execute("DELETE FROM sessions WHERE token_hash = ?1", &[&token_hash])
        .await?;
    Ok(())
}
