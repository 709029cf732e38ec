//! Schedules (issue 50, migration `040_schedules`): a purchase bought again
//! every day, week or month. A schedule keeps the checked request's item;
//! each run is an ordinary purchase placed by `operations::schedules` with
//! the reference `{reference}-{n}`. Nodes claim due schedules with a lease
//! (`claims.rs`), so one node runs a schedule at a time; the reference makes
//! a run once even when a lease ran out mid-run. A run's outcome, the
//! schedule's next run and the customer's notice are one transaction.

use super::claims::{claim, claim_sql};
use super::notices::{Owner, for_account};
use crate::cadence::Every;
use crate::clock::{new_code, now_ms, now_rfc3339};
use crate::db::{One, Param, PerEngine, ReadTx, RowRead, Tx, col, for_both_engines};
use crate::model::text_enum;
use crate::*;
use billpay_domain::{AccountId, Item, KeyId, Kobo, Product};
use std::sync::LazyLock;
use std::time::Duration;

/// Whether a schedule still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleStatus {
    Active,
    /// Not run until resumed (by the customer or, after an operator's
    /// pause, by the customer too).
    Paused,
    /// For good: deleted by the customer, or its smartcard's name changed.
    Stopped,
}

text_enum!(ScheduleStatus { Active = "active", Paused = "paused", Stopped = "stopped" });

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub id: String,
    pub account_id: AccountId,
    /// The key its runs are placed under.
    pub key_id: KeyId,
    pub reference: String,
    pub product: Product,
    /// The provider's slug.
    pub provider: String,
    /// What each run buys (its reference aside).
    pub item: Item,
    pub label: String,
    pub recipient: String,
    /// One run's price when the schedule was made (each run is priced anew).
    pub amount: Kobo,
    pub every: Every,
    pub starts_at: String,
    /// A run that cannot be paid is tried again later the same Lagos day.
    pub retry_today: bool,
    /// Cable: the smartcard's name when the schedule was made.
    pub verified_name: Option<String>,
    pub status: ScheduleStatus,
    /// Why it is paused or stopped, for a person.
    pub status_reason: Option<String>,
    /// The last run settled (0: none yet).
    pub runs: u64,
    /// When it is next tried (RFC 3339): a run's due time or a retry's.
    pub next_run_at: String,
    pub created_at: String,
}

#[derive(Debug, Clone)]
pub struct NewSchedule {
    pub account_id: AccountId,
    pub key_id: KeyId,
    pub reference: String,
    pub provider: String,
    pub item: Item,
    pub label: String,
    pub recipient: String,
    pub amount: Kobo,
    pub every: Every,
    pub starts_at: String,
    pub retry_today: bool,
    pub verified_name: Option<String>,
}

/// What became of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// Its purchase was placed (`transaction_code`).
    Placed,
    /// It could not be paid; tried again later today.
    Retrying,
    /// It could not be paid (`reason`); the next run is as usual.
    Skipped,
    /// The schedule was stopped before it (`reason`).
    Stopped,
}

text_enum!(RunOutcome { Placed = "placed", Retrying = "retrying", Skipped = "skipped", Stopped = "stopped" });

/// A run as the schedule's history lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRun {
    pub n: u64,
    pub due_at: String,
    /// When it was (last) tried.
    pub at: String,
    pub outcome: RunOutcome,
    pub transaction_code: Option<String>,
    pub reason: Option<String>,
    /// Earlier runs not made because no node ran when they fell due.
    pub missed: u64,
}

/// A run's outcome and what follows it, written at once.
#[derive(Debug, Clone)]
pub struct SettledRun {
    pub schedule: Schedule,
    pub run: ScheduleRun,
    /// When the schedule is next tried (RFC 3339).
    pub next_run_at: String,
    /// The customer is told (`schedule_skipped` or `schedule_stopped`).
    pub notify: bool,
}

/// A change of a schedule's status by its customer or an operator.
#[derive(Debug, Clone)]
pub struct StatusChange {
    pub status: ScheduleStatus,
    pub reason: Option<String>,
    /// Resuming: the next run (what fell due while paused is not made).
    pub next_run_at: Option<String>,
}

for_both_engines! {
    /// Schedules and their runs (`areas/schedules.rs`).
    pub trait ScheduleStore {
        /// A new schedule, active; a reference the account used for another
        /// schedule is refused (`Refusal::DuplicateReference`).
        fn create_schedule(new: NewSchedule) -> Schedule = write |tx| create(tx, &new);
        /// The account's schedules, newest first.
        fn schedules(account: AccountId) -> Vec<Schedule> = read |tx| of_account(tx, account);
        fn schedule(account: AccountId, reference: &str) -> Option<Schedule>
            = read |tx| find(tx, account, &reference);
        /// The schedule's last `limit` runs, newest first.
        fn schedule_runs(schedule_id: &str, limit: u32) -> Vec<ScheduleRun>
            = read |tx| runs(tx, &schedule_id, limit);
        /// Sets its status unless it is stopped (a stop is for good); the
        /// schedule after, `None` when the account has no such schedule.
        fn set_schedule_status(account: AccountId, reference: &str, change: StatusChange)
            -> Option<Schedule> = write |tx| set_status(tx, account, &reference, &change);
        /// Whether an active schedule is due and not leased (a read, before a claim).
        fn schedules_due() -> bool = read |tx| any_due(tx);
        /// Leases up to `limit` active schedules due now (PostgreSQL: skipping
        /// those another node is claiming).
        fn claim_due_schedules(limit: u32, lease: Duration) -> Vec<Schedule>
            = claim |tx| claim_due(tx, limit, lease);
        /// Records a run, moves the schedule on and tells its customer, at
        /// once; `false`, nothing written, when that run was settled already.
        fn settle_schedule_run(settled: SettledRun) -> bool = write |tx| settle(tx, &settled);
    }
}

const COLUMNS: &str = "id, account_id, key_id, reference, product, provider, item, label, \
     recipient, amount, every, starts_at, retry_today, verified_name, status, status_reason, \
     runs, next_run_at, created_at";

fn schedule(row: &dyn RowRead) -> StoreResult<Schedule> {
    Ok(Schedule {
        id: row.get(col!("id"))?,
        account_id: row.parsed(col!("account_id"))?,
        key_id: row.parsed(col!("key_id"))?,
        reference: row.get(col!("reference"))?,
        product: row.parsed(col!("product"))?,
        provider: row.get(col!("provider"))?,
        item: row.json(col!("item"))?,
        label: row.get(col!("label"))?,
        recipient: row.get(col!("recipient"))?,
        amount: row.get(col!("amount"))?,
        every: row.parsed(col!("every"))?,
        starts_at: row.get(col!("starts_at"))?,
        retry_today: row.get(col!("retry_today"))?,
        verified_name: row.get(col!("verified_name"))?,
        status: row.parsed(col!("status"))?,
        status_reason: row.get(col!("status_reason"))?,
        runs: row.get(col!("runs"))?,
        next_run_at: row.get(col!("next_run_at"))?,
        created_at: row.get(col!("created_at"))?,
    })
}

async fn create<T: Tx>(tx: &T, new: &NewSchedule) -> Result<Schedule, T::Error> {
    let sql = format!(
        "INSERT INTO schedules ({COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 'active', NULL,
                 0, ?12, ?15)
         ON CONFLICT (account_id, reference) DO NOTHING"
    );
    let id = new_code("SC");
    let item = serde_json::to_string(&new.item).map_err(|e| StoreError::backend(e.to_string()))?;
    let params: [&dyn Param; 15] = [
        &id,
        &new.account_id.to_string(),
        &new.key_id.to_string(),
        &new.reference,
        &new.item.product().service(),
        &new.provider,
        &item,
        &new.label,
        &new.recipient,
        &new.amount.0,
        &new.every.as_str(),
        &new.starts_at,
        &new.retry_today,
        &new.verified_name,
        &now_rfc3339(),
    ];
    if tx.execute(&sql, &params).await? == 0 {
        return Err(Refusal::DuplicateReference.into());
    }
    let made = find(tx, new.account_id, &new.reference).await?;
    Ok(made.ok_or(StoreError::NotFound("schedule"))?)
}

async fn of_account<T: ReadTx>(tx: &T, account: AccountId) -> Result<Vec<Schedule>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {COLUMNS} FROM schedules WHERE account_id = ?1 ORDER BY created_at DESC, id DESC"
        )
    });
    tx.query_all(&SQL, &[&account.to_string()], schedule).await
}

async fn find<T: ReadTx>(
    tx: &T,
    account: AccountId,
    reference: &str,
) -> Result<Option<Schedule>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT {COLUMNS} FROM schedules WHERE account_id = ?1 AND reference = ?2")
    });
    let params: [&dyn Param; 2] = [&account.to_string(), &reference];
    tx.query_opt(&SQL, &params, schedule).await
}

async fn runs<T: ReadTx>(
    tx: &T,
    schedule_id: &str,
    limit: u32,
) -> Result<Vec<ScheduleRun>, T::Error> {
    const COLUMNS: &str = "n, due_at, at, outcome, transaction_code, reason, missed";
    let sql = "SELECT n, due_at, at, outcome, transaction_code, reason, missed FROM schedule_runs
               WHERE schedule_id = ?1 ORDER BY n DESC LIMIT CAST(?2 AS BIGINT)";
    let params: [&dyn Param; 2] = [&schedule_id, &i64::from(limit)];
    tx.query_all(sql, &params, |row| {
        Ok(ScheduleRun {
            n: row.get(col!("n"))?,
            due_at: row.get(col!("due_at"))?,
            at: row.get(col!("at"))?,
            outcome: row.parsed(col!("outcome"))?,
            transaction_code: row.get(col!("transaction_code"))?,
            reason: row.get(col!("reason"))?,
            missed: row.get(col!("missed"))?,
        })
    })
    .await
}

async fn set_status<T: Tx>(
    tx: &T,
    account: AccountId,
    reference: &str,
    change: &StatusChange,
) -> Result<Option<Schedule>, T::Error> {
    let sql = "UPDATE schedules SET status = ?1, status_reason = ?2,
                   next_run_at = COALESCE(?3, next_run_at)
               WHERE account_id = ?4 AND reference = ?5 AND status <> 'stopped'";
    let params: [&dyn Param; 5] = [
        &change.status.as_str(),
        &change.reason,
        &change.next_run_at,
        &account.to_string(),
        &reference,
    ];
    tx.execute(sql, &params).await?;
    find(tx, account, reference).await
}

/// Pauses every active schedule of `account` (an operator's pause); how many.
pub(crate) async fn pause_all<T: Tx>(
    tx: &T,
    account: AccountId,
    reason: &str,
) -> Result<u64, T::Error> {
    let sql = "UPDATE schedules SET status = 'paused', status_reason = ?2
               WHERE account_id = ?1 AND status = 'active'";
    tx.execute(sql, &[&account.to_string(), &reason]).await
}

async fn any_due<T: ReadTx>(tx: &T) -> Result<bool, T::Error> {
    let sql = "SELECT 1 FROM schedules
               WHERE status = 'active' AND next_run_at <= ?1 AND lease_until <= ?2 LIMIT 1";
    let found = tx
        .query_opt(sql, &[&now_rfc3339(), &now_ms()], |_| Ok(()))
        .await?;
    Ok(found.is_some())
}

/// Active schedules due by `?4` (now, RFC 3339), soonest first.
static DUE: PerEngine = PerEngine::new(|engine| {
    let due = "status = 'active' AND next_run_at <= ?4";
    claim_sql(engine, "schedules", "id", (due, "next_run_at"), COLUMNS)
});

async fn claim_due<T: Tx>(
    tx: One<'_, T>,
    limit: u32,
    lease: Duration,
) -> Result<Vec<Schedule>, T::Error> {
    let now = now_rfc3339();
    let mut claimed = claim(tx, &DUE, (limit, lease), &[&now], schedule).await?;
    claimed.sort_by(|a, b| a.next_run_at.cmp(&b.next_run_at));
    Ok(claimed)
}

async fn settle<T: Tx>(tx: &T, settled: &SettledRun) -> Result<bool, T::Error> {
    let (schedule, run) = (&settled.schedule, &settled.run);
    let n = i64::try_from(run.n).map_err(|e| StoreError::backend(e.to_string()))?;
    // a retry leaves the run to come; any other outcome settles it
    let runs = match run.outcome {
        RunOutcome::Retrying => n - 1,
        _ => n,
    };
    let stop = run.outcome == RunOutcome::Stopped;
    let sql = "UPDATE schedules SET runs = ?2, next_run_at = ?3, lease_until = 0,
                   status = CASE WHEN ?4 THEN 'stopped' ELSE status END,
                   status_reason = CASE WHEN ?4 THEN ?5 ELSE status_reason END
               WHERE id = ?1 AND runs < ?6";
    let params: [&dyn Param; 6] = [
        &schedule.id,
        &runs,
        &settled.next_run_at,
        &stop,
        &run.reason,
        &n,
    ];
    if tx.execute(sql, &params).await? == 0 {
        return Ok(false);
    }
    let sql = "INSERT INTO schedule_runs
                   (schedule_id, n, account_id, due_at, at, outcome, transaction_code, reason, missed)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
               ON CONFLICT (schedule_id, n) DO UPDATE SET at = excluded.at,
                   outcome = excluded.outcome, transaction_code = excluded.transaction_code,
                   reason = excluded.reason, missed = excluded.missed";
    let missed = i64::try_from(run.missed).map_err(|e| StoreError::backend(e.to_string()))?;
    let params: [&dyn Param; 9] = [
        &schedule.id,
        &n,
        &schedule.account_id.to_string(),
        &run.due_at,
        &run.at,
        &run.outcome.as_str(),
        &run.transaction_code,
        &run.reason,
        &missed,
    ];
    tx.execute(sql, &params).await?;
    if settled.notify {
        notice(tx, settled).await?;
    }
    Ok(true)
}

/// The customer's notice of a run not made (once per run: its cause) or of
/// the schedule stopped. The topic is the refunds' — a purchase that did
/// not go through as usual —, so the customer's choice for those applies.
async fn notice<T: Tx>(tx: &T, settled: &SettledRun) -> Result<(), T::Error> {
    let (schedule, run) = (&settled.schedule, &settled.run);
    let (kind, cause) = match run.outcome {
        RunOutcome::Stopped => (
            "schedule_stopped",
            format!("schedule:{}:stopped", schedule.id),
        ),
        _ => (
            "schedule_skipped",
            format!("schedule:{}:{}:skipped", schedule.id, run.n),
        ),
    };
    let data = serde_json::json!({
        "schedule": schedule.reference,
        "every": schedule.every.adverb(),
        "product": schedule.label,
        "recipient": schedule.recipient,
        "amount": schedule.amount.0,
        "reason": run.reason,
        "retry": run.outcome == RunOutcome::Retrying,
        "next": settled.next_run_at,
    });
    let owner = Owner::Account(schedule.account_id);
    for_account(tx, owner, NoticeTopic::Refund, kind, &cause, &data).await
}
