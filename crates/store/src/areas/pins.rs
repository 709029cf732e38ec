//! The shop's transaction PINs (issue 31). Only a failed check counts
//! toward the lock (issue 45): a try first takes a turn ([`take_try`], one
//! conditional UPDATE that admits it only while the wrong checks of the run
//! and the checks under way are fewer than [`MAX_FAILURES`]), and its answer
//! then ends the turn ([`failed`] adds a failure, and the fifth sets the
//! lock; [`matched`] ends the run). Tries sent at once cannot check more than
//! five PINs between two right ones, and right PINs sent at once are never
//! counted as wrong: they wait for a turn. The row also names the API key the
//! account's browser purchases are placed under (created with the first PIN).

use crate::clock::{now_ms, now_rfc3339};
use crate::db::{One, Param, ReadTx, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::transaction_pin::{LOCK, MAX_FAILURES};
use billpay_domain::{AccountId, KeyId};

/// Where an account's PIN stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinState {
    /// The key the shop's purchases are placed under.
    pub shop_key: KeyId,
    /// Wrong PINs in a row.
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
    /// As many checks are under way as the run has tries left: ask again
    /// when one has answered.
    Busy,
    /// Check the PIN against `pin_hash`, then say how it went
    /// ([`PinStore::pin_failed`] or [`PinStore::pin_matched`]).
    Check { pin_hash: String, shop_key: KeyId },
}

/// After a wrong PIN: the run's wrong PINs, and the lock they set (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinFailure {
    pub failures: u32,
    pub locked_until_ms: i64,
}

/// Turns taken longer ago than this belong to a process that died mid-check.
const STALE_TURN_MS: i64 = 60_000;

for_both_engines! {
    /// The shop's transaction PINs (`areas/pins.rs`): set, counted before each
    /// check, locked after too many wrong tries in a row.
    pub trait PinStore {
        /// Sets or replaces the PIN (an argon2id hash) and ends any lock; the
        /// first PIN also stores `shop_key`, the key the account's browser
        /// purchases are placed under. Answers the account's shop key.
        fn set_transaction_pin(account: AccountId, pin_hash: String, shop_key: NewApiKey) -> KeyId
            = write |tx| set(tx, account, &pin_hash, &shop_key);
        /// Replaces the PIN of an account that has one, proven by the current
        /// PIN alone: the shop's key is left as it is (a revoked one comes
        /// back only with the password, [`PinStore::set_transaction_pin`]).
        /// False when the account has no PIN.
        fn change_transaction_pin(account: AccountId, pin_hash: String) -> bool
            = statement |tx| change(tx, account, &pin_hash);
        fn transaction_pin(account: AccountId) -> Option<PinState> = read |tx| state(tx, account);
        /// Takes a turn to check a PIN (one conditional UPDATE: concurrent
        /// tries cannot get past the lock).
        fn take_pin_try(account: AccountId) -> PinTry = write |tx| take_try(tx, account, now_ms());
        /// The PIN checked was wrong: its turn ends as a failure, and the
        /// fifth in a row locks purchases.
        fn pin_failed(account: AccountId) -> PinFailure = write |tx| failed(tx, account, now_ms());
        /// The PIN checked was right: its turn ends and so does the run of
        /// wrong tries.
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

async fn change<T: Tx>(
    tx: One<'_, T>,
    account: AccountId,
    pin_hash: &str,
) -> Result<bool, T::Error> {
    let sql = "UPDATE transaction_pins
                  SET pin_hash = ?2, failures = 0, locked_until = 0, updated_at = ?3
                WHERE account_id = ?1";
    let account_text = account.to_string();
    let params: [&dyn Param; 3] = [&account_text, &pin_hash, &now_rfc3339()];
    Ok(tx.execute(sql, &params).await? == 1)
}

async fn state<T: ReadTx>(tx: &T, account: AccountId) -> Result<Option<PinState>, T::Error> {
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

/// Takes a turn to check a PIN, in one statement: an expired lock starts a
/// new run; the turn is given only while the run's wrong PINs and the checks
/// under way are fewer than [`MAX_FAILURES`]; a locked row is left alone.
/// No row changed: locked, busy, or no PIN.
pub(crate) async fn take_try<T: Tx>(
    tx: &T,
    account: AccountId,
    now: i64,
) -> Result<PinTry, T::Error> {
    const COLUMNS: &str = "pin_hash, shop_key_id";
    // `run`: the failures of this run (an expired lock's are over);
    // `under_way`: the checks still answering (stale turns forgotten).
    let run = "CASE WHEN locked_until > 0 THEN 0 ELSE failures END";
    let under_way = "CASE WHEN checking_since < ?3 THEN 0 ELSE checking END";
    let sql = format!(
        "UPDATE transaction_pins
            SET failures = {run}, locked_until = 0,
                checking = {under_way} + 1, checking_since = ?2
          WHERE account_id = ?1 AND locked_until <= ?2 AND {run} + {under_way} < ?4
      RETURNING pin_hash, shop_key_id"
    );
    let stale = now - STALE_TURN_MS;
    let max = i64::from(MAX_FAILURES);
    let account_text = account.to_string();
    let params: [&dyn Param; 4] = [&account_text, &now, &stale, &max];
    let taken = tx
        .query_opt(&sql, &params, |row| {
            Ok(PinTry::Check {
                pin_hash: row.get(col!("pin_hash"))?,
                shop_key: key_id(row.get(col!("shop_key_id"))?)?,
            })
        })
        .await?;
    if let Some(taken) = taken {
        return Ok(taken);
    }
    Ok(match state(tx, account).await? {
        None => PinTry::NotSet,
        Some(state) if state.locked_until_ms > now => PinTry::Locked {
            until_ms: state.locked_until_ms,
        },
        Some(_) => PinTry::Busy,
    })
}

/// Ends a turn as a wrong PIN: one more failure, and the lock when that
/// makes [`MAX_FAILURES`].
async fn failed<T: Tx>(tx: &T, account: AccountId, now: i64) -> Result<PinFailure, T::Error> {
    const COLUMNS: &str = "failures, locked_until";
    // (the CAST: PostgreSQL types a CASE of `?3` and a column as INTEGER
    // unless told, too narrow for a time in ms)
    let sql = "UPDATE transaction_pins
                  SET failures = failures + 1,
                      checking = CASE WHEN checking > 0 THEN checking - 1 ELSE 0 END,
                      locked_until = CASE WHEN failures + 1 >= ?2
                                          THEN CAST(?3 AS BIGINT) ELSE locked_until END
                WHERE account_id = ?1
            RETURNING failures, locked_until";
    let until = now + LOCK.as_millis() as i64;
    let max = i64::from(MAX_FAILURES);
    let account_text = account.to_string();
    let params: [&dyn Param; 3] = [&account_text, &max, &until];
    let after = tx
        .query_opt(sql, &params, |row| {
            Ok(PinFailure {
                failures: row.get(col!("failures"))?,
                locked_until_ms: row.get(col!("locked_until"))?,
            })
        })
        .await?;
    Ok(after.unwrap_or(PinFailure {
        failures: 0,
        locked_until_ms: 0,
    }))
}

/// Ends a turn as a right PIN: the run of wrong PINs ends (a lock set by
/// wrong PINs checked meanwhile stays).
async fn matched<T: Tx>(tx: One<'_, T>, account: AccountId) -> Result<(), T::Error> {
    let sql = "UPDATE transaction_pins
                  SET failures = 0, checking = CASE WHEN checking > 0 THEN checking - 1 ELSE 0 END
                WHERE account_id = ?1";
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
