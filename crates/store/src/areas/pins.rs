//! The shop's transaction PINs (issue 31). A try is counted *before* the PIN
//! is checked, by one conditional UPDATE ([`take_try`]): the fifth try in a
//! row sets the lock in that same statement, and a locked account's row is
//! not updated at all, so concurrent tries cannot check more than
//! [`MAX_FAILURES`] PINs between two right ones. A right PIN then ends the
//! run ([`matched`]). The row also names the API key the account's browser
//! purchases are placed under (created with the first PIN).

use crate::clock::{now_ms, now_rfc3339};
use crate::db::{Param, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::transaction_pin::{LOCK, MAX_FAILURES};
use billpay_domain::{AccountId, KeyId};

/// Where an account's PIN stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinState {
    /// The key the shop's purchases are placed under.
    pub shop_key: KeyId,
    /// Wrong tries in a row (a try under way counts).
    pub failures: u32,
    /// Purchases are locked until then (ms since the epoch); 0: not locked.
    pub locked_until_ms: i64,
}

/// One try of the PIN, taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinTry {
    /// The account has no PIN yet.
    NotSet,
    /// Too many wrong tries: nothing to check until then (ms since the epoch).
    Locked { until_ms: i64 },
    /// Check the PIN against `pin_hash`; this was try `tries` of the run
    /// ([`MAX_FAILURES`] locks whatever the check says, until a right PIN).
    Check {
        pin_hash: String,
        shop_key: KeyId,
        tries: u32,
    },
}

for_both_engines! {
    /// The shop's transaction PINs (`areas/pins.rs`): set, counted before each
    /// check, locked after too many wrong tries in a row.
    pub trait PinStore {
        /// Sets or replaces the PIN (an argon2id hash) and ends any lock; the
        /// first PIN also stores `shop_key`, the key the account's browser
        /// purchases are placed under. Answers the account's shop key.
        fn set_transaction_pin(account: AccountId, pin_hash: String, shop_key: NewApiKey) -> KeyId
            = write |tx| set(tx, account, &pin_hash, &shop_key);
        fn transaction_pin(account: AccountId) -> Option<PinState> = read |tx| state(tx, account);
        /// Takes one try, counted before the PIN is checked (one conditional
        /// UPDATE: concurrent tries cannot get past the lock).
        fn take_pin_try(account: AccountId) -> PinTry = write |tx| take_try(tx, account, now_ms());
        /// The PIN tried was right: the run of wrong tries (and a lock its last
        /// try set) ends.
        fn pin_matched(account: AccountId) -> () = statement |tx| matched(tx, account);
    }
}

pub(crate) async fn set<T: Tx>(
    tx: &T,
    account: AccountId,
    pin_hash: &str,
    shop_key: &NewApiKey,
) -> Result<KeyId, T::Error> {
    let existing = state(tx, account).await?;
    // A revoked shop key (revoked before the keys page kept it, or by the
    // operator) can never buy again: a new PIN gives the shop a new key.
    let replace = match &existing {
        Some(state) => super::keys::by_id(tx, state.shop_key)
            .await?
            .is_none_or(|key| key.status == KeyStatus::Revoked),
        None => false,
    };
    let key = match existing {
        Some(state) if !replace => state.shop_key,
        _ => super::keys::create(tx, shop_key).await?.id,
    };
    // Two first PINs at once: the row keeps the first key (the other key,
    // never shown to anyone, is unused).
    let sql = "INSERT INTO transaction_pins
                   (account_id, pin_hash, failures, locked_until, shop_key_id, updated_at)
               VALUES (?1, ?2, 0, 0, ?3, ?4)
               ON CONFLICT (account_id) DO UPDATE
                   SET pin_hash = excluded.pin_hash, failures = 0, locked_until = 0,
                       updated_at = excluded.updated_at";
    let (account_text, key_text) = (account.to_string(), key.to_string());
    let params: [&dyn Param; 4] = [&account_text, &pin_hash, &key_text, &now_rfc3339()];
    tx.execute(sql, &params).await?;
    if replace {
        let sql = "UPDATE transaction_pins SET shop_key_id = ?2 WHERE account_id = ?1";
        tx.execute(sql, &[&account_text, &key_text]).await?;
    }
    Ok(state(tx, account)
        .await?
        .map_or(key, |stored| stored.shop_key))
}

async fn state<T: Tx>(tx: &T, account: AccountId) -> Result<Option<PinState>, T::Error> {
    const COLUMNS: &str = "shop_key_id, failures, locked_until";
    let sql = "SELECT shop_key_id, failures, locked_until FROM transaction_pins
               WHERE account_id = ?1";
    tx.query_opt(sql, &[&account.to_string()], |row| {
        Ok(PinState {
            shop_key: key_id(row.get(col!("shop_key_id"))?)?,
            failures: row.get(col!("failures"))?,
            locked_until_ms: row.get(col!("locked_until"))?,
        })
    })
    .await
}

/// Counts a try before its check, in one statement: an expired lock starts
/// a new run; the [`MAX_FAILURES`]th try sets the lock; a locked row is left
/// alone (no row: locked, or no PIN).
pub(crate) async fn take_try<T: Tx>(
    tx: &T,
    account: AccountId,
    now: i64,
) -> Result<PinTry, T::Error> {
    const COLUMNS: &str = "pin_hash, shop_key_id, failures";
    let sql = "UPDATE transaction_pins
                  SET failures = CASE WHEN locked_until > 0 THEN 1 ELSE failures + 1 END,
                      locked_until = CASE WHEN locked_until = 0 AND failures + 1 >= ?3
                                          THEN ?4 ELSE CAST(0 AS BIGINT) END
                WHERE account_id = ?1 AND locked_until <= ?2
            RETURNING pin_hash, shop_key_id, failures";
    let until = now + LOCK.as_millis() as i64;
    let max = i64::from(MAX_FAILURES);
    let account_text = account.to_string();
    // (the CAST: PostgreSQL types a CASE of `?4` and a bare 0 as INTEGER,
    // too narrow for a time in ms)
    let params: [&dyn Param; 4] = [&account_text, &now, &max, &until];
    let taken = tx
        .query_opt(sql, &params, |row| {
            Ok(PinTry::Check {
                pin_hash: row.get(col!("pin_hash"))?,
                shop_key: key_id(row.get(col!("shop_key_id"))?)?,
                tries: row.get(col!("failures"))?,
            })
        })
        .await?;
    if let Some(taken) = taken {
        return Ok(taken);
    }
    Ok(match state(tx, account).await? {
        None => PinTry::NotSet,
        Some(state) => PinTry::Locked {
            until_ms: state.locked_until_ms,
        },
    })
}

async fn matched<T: Tx>(tx: &T, account: AccountId) -> Result<(), T::Error> {
    let sql = "UPDATE transaction_pins SET failures = 0, locked_until = 0 WHERE account_id = ?1";
    tx.execute(sql, &[&account.to_string()]).await?;
    Ok(())
}

/// Ends a lock still on, and its line in the operator log; nothing when
/// no lock is on (a lock whose time has passed ends by itself).
pub(crate) async fn clear_lock<T: Tx>(
    tx: &T,
    account: AccountId,
    now: i64,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let sql = "UPDATE transaction_pins SET failures = 0, locked_until = 0
               WHERE account_id = ?1 AND locked_until > ?2";
    let account_text = account.to_string();
    let params: [&dyn Param; 2] = [&account_text, &now];
    if tx.execute(sql, &params).await? == 0 {
        return Ok(false);
    }
    super::operators::append(tx, log).await?;
    Ok(true)
}

fn key_id(stored: String) -> StoreResult<KeyId> {
    stored
        .parse()
        .map_err(|_| StoreError::backend(format!("unreadable shop key id {stored}")))
}
