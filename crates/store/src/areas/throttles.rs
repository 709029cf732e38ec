//! The one throttle (hardening issue: "throttles are per process"): a
//! counter per (scope, key) in the `throttles` table (migration
//! `029_throttles`), with the end of its window, so every node of one
//! database counts in the same row. A try is taken by one conditional
//! UPSERT ([`take`]): a row whose window has ended starts afresh, a full
//! row is not changed at all, and the try that fills the bound starts a
//! full window of lockout; concurrent tries (on any node) cannot take more
//! than the bound (PostgreSQL locks the row and checks the condition again
//! on its latest version; SQLite's writer runs one job at a time). The
//! bounds themselves are the domain's (`billpay_domain::throttle`).

use crate::clock::now_ms;
use crate::db::{One, Param, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::throttle::{Bound, LockedOut, Who};
use std::time::Duration;

/// One try, taken or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Counted: this was try `tries` of the window.
    Counted { tries: u32 },
    /// The bound is full: nothing counted until then (Unix ms).
    Locked { until_ms: i64 },
}

impl Taken {
    /// `Ok` when counted, else how long the lockout has left at `now` (ms).
    pub fn admitted(self, now: i64) -> Result<(), LockedOut> {
        match self {
            Taken::Counted { .. } => Ok(()),
            Taken::Locked { until_ms } => {
                let left = u64::try_from(until_ms - now).unwrap_or(0);
                Err(LockedOut(Duration::from_millis(left)))
            }
        }
    }
}

for_both_engines! {
    /// The throttles' counters (`areas/throttles.rs`), every node's.
    pub trait ThrottleStore {
        /// Takes one try of `key` under `bound`, in a window of `bound.window`
        /// from now (see [`take`]).
        fn take_throttle(bound: Bound, key: &str) -> Taken
            = write |tx| take_now(tx, &bound, &key);
        /// Ends `key`'s window under `bound` (a right secret: its person
        /// starts afresh).
        fn clear_throttle(bound: Bound, key: &str) -> ()
            = statement |tx| clear(tx, &bound, &key);
        /// Deletes the counters whose window ended before `now` (Unix ms);
        /// answers how many.
        fn prune_throttles(now: i64) -> u64 = statement |tx| prune(tx, now);
    }
}

async fn take_now<T: Tx>(tx: &T, bound: &Bound, key: &str) -> Result<Taken, T::Error> {
    let now = now_ms();
    let end = now.saturating_add(bound.window.as_millis() as i64);
    take(tx, bound.scope, key, bound.most, now, end).await
}

/// Counts one try of `key` in `scope` falling in the window `start..end`
/// (Unix ms: from now for a rolling bound, a Lagos day for the identity
/// checks), at most `most` in a window, in one statement: a row whose
/// window ended by `start` starts afresh (1 try, ending at `end`); a row
/// with fewer than `most` tries counts one more, and the try that fills it
/// moves its end to `end` (a full window of lockout from the last try);
/// a full row is left alone and answers when its window ends.
pub(crate) async fn take<T: Tx>(
    tx: &T,
    scope: &str,
    key: &str,
    most: u32,
    start: i64,
    end: i64,
) -> Result<Taken, T::Error> {
    const COLUMNS: &str = "tries, until_ms";
    let sql = "INSERT INTO throttles (scope, who, tries, until_ms) VALUES (?1, ?2, 1, ?5)
               ON CONFLICT (scope, who) DO UPDATE
                   SET tries = CASE WHEN throttles.until_ms <= ?4 THEN 1
                                    ELSE throttles.tries + 1 END,
                       until_ms = CASE WHEN throttles.until_ms <= ?4
                                         OR throttles.tries + 1 >= ?3
                                       THEN ?5 ELSE throttles.until_ms END
                   WHERE throttles.until_ms <= ?4 OR throttles.tries < ?3
               RETURNING tries, until_ms";
    let most = i64::from(most);
    let params: [&dyn Param; 5] = [&scope, &key, &most, &start, &end];
    let counted = tx
        .query_opt(sql, &params, |row| row.get::<u32>(col!("tries")))
        .await?;
    if let Some(tries) = counted {
        return Ok(Taken::Counted { tries });
    }
    let sql = "SELECT tries, until_ms FROM throttles WHERE scope = ?1 AND who = ?2";
    let until_ms = tx
        .query_one(sql, &[&scope, &key], |row| row.get::<i64>(col!("until_ms")))
        .await?;
    Ok(Taken::Locked { until_ms })
}

async fn clear<T: Tx>(tx: One<'_, T>, bound: &Bound, key: &str) -> Result<(), T::Error> {
    let sql = "DELETE FROM throttles WHERE scope = ?1 AND who = ?2";
    tx.execute(sql, &[&bound.scope, &key]).await?;
    Ok(())
}

async fn prune<T: Tx>(tx: One<'_, T>, now: i64) -> Result<u64, T::Error> {
    tx.execute("DELETE FROM throttles WHERE until_ms < ?1", &[&now])
        .await
}

/// One check of a secret of `who`, counted before it runs (their budget:
/// [`Who::bound`]); `Err` while they are locked out.
pub async fn secret_try(
    store: &(impl ThrottleStore + ?Sized),
    who: Who<'_>,
) -> StoreResult<Result<(), LockedOut>> {
    let taken = store.take_throttle(who.bound(), &who.key()).await?;
    Ok(taken.admitted(now_ms()))
}

/// `who`'s secret was right: they start afresh.
pub async fn secret_right(store: &(impl ThrottleStore + ?Sized), who: Who<'_>) -> StoreResult<()> {
    store.clear_throttle(who.bound(), &who.key()).await
}
