//! Schedules (issue 50; docs/schedules.md): a purchase bought again every
//! day, week or month, made by the API (`POST /v1/schedules`) or the shop
//! ("Repeat this" on a receipt), run by [`Scheduler`] on every worker node.
//!
//! Each run is an ordinary purchase placed through [`Purchasing::buy`] — the
//! one purchase operation of the API and the shop: priced, limited,
//! idempotent — with the reference `{reference}-{n}`, under the key the
//! schedule was made with. Nodes claim due schedules with a lease; a run
//! whose node died after placing it is found again by its reference, so it
//! is placed once. A run that cannot be paid (the balance, a limit, the
//! product off sale) is skipped and the customer told, or with
//! `retry_later_today` tried again each hour until the Lagos day ends. A
//! cable schedule verifies the smartcard before each run, through
//! [`Purchasing::ask_supplier`] as `POST /v1/cable/verify` does, and stops
//! with a notice when its name is not the one verified when it was made.
//! A node that was down makes only the last run due (the ones between are
//! recorded as missed on it, and logged).

use crate::purchases::{Buyer, PurchaseError, Purchasing};
use crate::{Actor, OpsResult, Permission};
use billpay_domain::{Item, Product, PurchaseRequest, Reference};
use billpay_store::cadence::{self, Every};
use billpay_store::clock::{lagos_date_at, now_ms, parse_rfc3339_ms, rfc3339};
use billpay_store::{
    NewSchedule, RunOutcome, Schedule, ScheduleRun, ScheduleStatus, SettledRun, StatusChange,
    Store, StoreResult, work,
};
use billpay_supplier::{Verification, VerifyRequest};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// A schedule's reference leaves room for `-{n}` within a purchase
/// reference's 100 characters.
pub const REFERENCE_MAX: usize = 90;
/// How far back `starts_at` may be (a client's clock a little behind).
pub const STARTS_AT_PAST: Duration = Duration::from_secs(24 * 3600);
/// How far ahead `starts_at` may be.
pub const STARTS_AT_AHEAD: Duration = Duration::from_secs(366 * 24 * 3600);
/// A run that cannot be paid, with `retry_later_today`, is tried again after this.
pub const RETRY_AFTER: Duration = Duration::from_secs(3600);

/// How a schedule runs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub every: Every,
    /// RFC 3339, any offset.
    pub starts_at: String,
    pub retry_later_today: bool,
}

/// Why a schedule could not be made or changed. `Display` is the sentence.
#[derive(Debug)]
pub enum ScheduleError {
    /// The purchase it would make is refused as a purchase would be.
    Purchase(PurchaseError),
    /// `field: rule`.
    Invalid(String),
    /// The smartcard (cable) is not found by the supplier.
    CustomerNotFound,
    NotFound,
    /// A stopped schedule is stopped for good.
    Stopped,
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::Purchase(e) => e.fmt(f),
            ScheduleError::Invalid(why) => f.write_str(why),
            ScheduleError::CustomerNotFound => f.write_str("Customer not found: no such smartcard"),
            ScheduleError::NotFound => f.write_str("Schedule not found"),
            ScheduleError::Stopped => {
                f.write_str("This schedule is stopped; make a new one to buy again")
            }
        }
    }
}

impl std::error::Error for ScheduleError {}

impl From<PurchaseError> for ScheduleError {
    fn from(e: PurchaseError) -> Self {
        ScheduleError::Purchase(e)
    }
}

impl From<billpay_store::StoreError> for ScheduleError {
    fn from(e: billpay_store::StoreError) -> Self {
        ScheduleError::Purchase(e.into())
    }
}

/// Makes a schedule of `request` for `buyer`: the purchase is priced and
/// checked as a purchase would be (provider, plan, amounts, on sale), the
/// smartcard of a cable one verified, nothing charged; its first run is at
/// `starts_at`.
pub async fn create(
    purchasing: &Purchasing,
    buyer: &Buyer,
    request: PurchaseRequest,
    plan: Plan,
) -> Result<Schedule, ScheduleError> {
    let reference = request.reference.to_string();
    if reference.chars().count() > REFERENCE_MAX {
        let rule = format!("reference: must be at most {REFERENCE_MAX} characters for a schedule");
        return Err(ScheduleError::Invalid(rule));
    }
    let starts_at = starts_at(&plan.starts_at, now_ms())?;
    let item = request.item.clone();
    let quote = purchasing.quote(buyer, request).await?;
    let verified_name = match &item {
        Item::Cable { smartcard, .. } => {
            let ask = verify_request(&quote.provider, smartcard.as_str());
            match purchasing.ask_supplier(&ask).await? {
                Verification::Found { customer_name, .. } => Some(customer_name),
                Verification::NotFound => return Err(ScheduleError::CustomerNotFound),
            }
        }
        _ => None,
    };
    let new = NewSchedule {
        account_id: buyer.account_id,
        key_id: buyer.key_id,
        reference,
        provider: quote.provider,
        item,
        label: quote.label,
        recipient: quote.recipient,
        amount: quote.amount,
        every: plan.every,
        starts_at: rfc3339(starts_at),
        retry_today: plan.retry_later_today,
        verified_name,
    };
    Ok(purchasing.store.create_schedule(new).await?)
}

/// `starts_at` read (RFC 3339) and within its bounds around `now`.
fn starts_at(text: &str, now: i64) -> Result<i64, ScheduleError> {
    let invalid = |rule: &str| ScheduleError::Invalid(format!("starts_at: {rule}"));
    let at = parse_rfc3339_ms(text)
        .ok_or_else(|| invalid("must be a time in RFC 3339, e.g. 2026-12-01T09:00:00+01:00"))?;
    if at < now - STARTS_AT_PAST.as_millis() as i64 {
        return Err(invalid("must not be more than a day in the past"));
    }
    if at > now + STARTS_AT_AHEAD.as_millis() as i64 {
        return Err(invalid("must be within a year"));
    }
    Ok(at)
}

fn verify_request(provider: &str, smartcard: &str) -> VerifyRequest {
    VerifyRequest {
        product: Product::Cable,
        provider: provider.to_owned(),
        number: smartcard.to_owned(),
        meter_type: None,
        codes: Default::default(),
    }
}

/// The customer's own change of a schedule: stop (for good), pause, resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Stop,
    Pause,
    Resume,
}

/// Stops, pauses or resumes the account's schedule `reference`. Stopping a
/// stopped one answers it as it is; pausing or resuming it is refused.
/// Resumed, it runs next at its first run due from now: what fell due while
/// it was paused is not made.
pub async fn change(
    store: &dyn Store,
    account: billpay_domain::AccountId,
    reference: &str,
    change: Change,
) -> Result<Schedule, ScheduleError> {
    let schedule = store
        .schedule(account, reference)
        .await?
        .ok_or(ScheduleError::NotFound)?;
    let status_change = match (change, schedule.status) {
        (Change::Stop, ScheduleStatus::Stopped) => return Ok(schedule),
        (_, ScheduleStatus::Stopped) => return Err(ScheduleError::Stopped),
        (Change::Stop, _) => StatusChange {
            status: ScheduleStatus::Stopped,
            reason: Some("stopped by you".into()),
            next_run_at: None,
        },
        (Change::Pause, _) => StatusChange {
            status: ScheduleStatus::Paused,
            reason: Some("paused by you".into()),
            next_run_at: None,
        },
        (Change::Resume, ScheduleStatus::Active) => return Ok(schedule),
        (Change::Resume, ScheduleStatus::Paused) => StatusChange {
            status: ScheduleStatus::Active,
            reason: None,
            next_run_at: Some(next_from_now(&schedule)),
        },
    };
    store
        .set_schedule_status(account, reference, status_change)
        .await?
        .ok_or(ScheduleError::NotFound)
}

/// The first run of `schedule` due at or after now (RFC 3339).
fn next_from_now(schedule: &Schedule) -> String {
    let now = now_ms();
    let start = parse_rfc3339_ms(&schedule.starts_at).unwrap_or(now);
    let n = cadence::next_due(start, schedule.every, schedule.runs + 1, now);
    rfc3339(cadence::due_at(start, schedule.every, n))
}

/// When `schedule` runs next, for a person: `None` while paused or stopped.
pub fn next_run(schedule: &Schedule) -> Option<&str> {
    (schedule.status == ScheduleStatus::Active).then_some(schedule.next_run_at.as_str())
}

/// An operator pauses every active schedule of a customer (the customer
/// may resume each), logged in the same transaction; how many.
pub async fn pause_customer(
    store: &dyn Store,
    actor: Actor,
    account: billpay_domain::AccountId,
) -> OpsResult<u64> {
    actor.require(Permission::ManageAccounts)?;
    let mut log = actor.log("schedules.pause", account.to_string());
    log.after = Some("every active schedule paused".into());
    let reason = "paused by the operator".to_owned();
    let paused = store
        .write((account, reason, log), |tx, (account, reason, log)| {
            Box::pin(work::pause_schedules_logged(tx, *account, reason, log))
        })
        .await?;
    tracing::info!(%actor, %account, paused, "schedules paused");
    Ok(paused)
}

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    pub placed: usize,
    pub skipped: usize,
    pub stopped: usize,
    /// Left for a later pass (the store failed, the key's rate budget).
    pub later: usize,
}

/// Runs due schedules on this node (every worker node runs one).
#[derive(Clone)]
pub struct Scheduler {
    purchasing: Purchasing,
}

/// How long a claimed schedule is this node's; a run takes well under it.
const LEASE: Duration = Duration::from_secs(60);
/// Schedules claimed at once.
const PER_CLAIM: u32 = 50;
/// How often a node looks for due schedules (a read, then a claim only
/// when one is due).
const POLL: Duration = Duration::from_secs(1);

/// What trying a run came to.
enum Attempt {
    Placed(String),
    /// It cannot be paid: why, for the customer.
    Refused(String),
    /// The smartcard's name changed: why.
    NameChanged(String),
    /// Nothing decided (the store, the rate budget): tried again once the lease ends.
    Later,
}

impl Scheduler {
    pub fn new(purchasing: Purchasing) -> Self {
        Scheduler { purchasing }
    }

    /// One pass: every schedule due now, claimed, run once.
    pub async fn run_once(&self) -> StoreResult<Pass> {
        let mut pass = Pass::default();
        let store = &self.purchasing.store;
        if !store.schedules_due().await? {
            return Ok(pass);
        }
        for schedule in store.claim_due_schedules(PER_CLAIM, LEASE).await? {
            match self.run(schedule).await? {
                Some(RunOutcome::Placed) => pass.placed += 1,
                Some(RunOutcome::Stopped) => pass.stopped += 1,
                Some(_) => pass.skipped += 1,
                None => pass.later += 1,
            }
        }
        Ok(pass)
    }

    /// A pass every second until `shutdown`; a failed pass is logged and
    /// tried again.
    pub async fn run_until(self, shutdown: Arc<Notify>) {
        let mut ticks = tokio::time::interval(POLL);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = shutdown.notified() => return,
            }
            if let Err(e) = self.run_once().await {
                tracing::warn!(error = %e, "the schedules' pass failed");
            }
        }
    }

    /// Makes the last run of `schedule` due now; its outcome, `None` when
    /// left for later.
    async fn run(&self, schedule: Schedule) -> StoreResult<Option<RunOutcome>> {
        let now = now_ms();
        let start = parse_rfc3339_ms(&schedule.starts_at).unwrap_or(now);
        let first = schedule.runs + 1;
        let n = cadence::latest_due(start, schedule.every, first, now);
        let missed = n - first;
        if missed > 0 {
            tracing::warn!(
                schedule = schedule.id,
                n,
                missed,
                "schedule caught up: only the last run due is made"
            );
        }
        let due = cadence::due_at(start, schedule.every, n);
        let (outcome, code, reason) = match self.attempt(&schedule, n).await {
            Attempt::Placed(code) => (RunOutcome::Placed, Some(code), None),
            Attempt::Refused(why) if retries_today(&schedule, due, now) => {
                (RunOutcome::Retrying, None, Some(why))
            }
            Attempt::Refused(why) => (RunOutcome::Skipped, None, Some(why)),
            Attempt::NameChanged(why) => (RunOutcome::Stopped, None, Some(why)),
            Attempt::Later => return Ok(None),
        };
        let next_run_at = match outcome {
            RunOutcome::Retrying => rfc3339(now + RETRY_AFTER.as_millis() as i64),
            _ => rfc3339(cadence::due_at(start, schedule.every, n + 1)),
        };
        let settled = SettledRun {
            run: ScheduleRun {
                n,
                due_at: rfc3339(due),
                at: rfc3339(now),
                outcome,
                transaction_code: code,
                reason,
                missed,
            },
            notify: outcome != RunOutcome::Placed,
            schedule,
            next_run_at,
        };
        let id = settled.schedule.id.clone();
        if !self.purchasing.store.settle_schedule_run(settled).await? {
            tracing::info!(schedule = id, n, "run settled by another node");
        }
        Ok(Some(outcome))
    }

    /// Tries run `n`: the key admitted as the API admits it, a cable
    /// smartcard verified, then bought.
    async fn attempt(&self, schedule: &Schedule, n: u64) -> Attempt {
        let buyer = match self.admitted(schedule).await {
            Ok(buyer) => buyer,
            Err(e) => return said(e),
        };
        let mut item = schedule.item.clone();
        if let Item::Cable {
            smartcard,
            recipient_name,
            ..
        } = &mut item
        {
            let ask = verify_request(&schedule.provider, smartcard.as_str());
            match self.purchasing.ask_supplier(&ask).await {
                Ok(Verification::Found { customer_name, .. }) => {
                    if let Some(changed) = name_changed(schedule, &customer_name) {
                        return Attempt::NameChanged(changed);
                    }
                    *recipient_name = Some(customer_name);
                }
                Ok(Verification::NotFound) => {
                    return Attempt::Refused("the supplier could not find the smartcard".into());
                }
                Err(e) => return said(e),
            }
        }
        let Ok(reference) = Reference::parse(&run_reference(&schedule.reference, n)) else {
            return Attempt::Refused("its reference is not a purchase reference".into());
        };
        let request = PurchaseRequest {
            reference,
            provider_id: schedule.provider.clone(),
            item,
        };
        match self.purchasing.buy(&buyer, request).await {
            Ok(tx) => Attempt::Placed(tx.code),
            // placed before (a node that stopped after buying): that is the run
            Err(PurchaseError::DuplicateReference(Some(code))) => Attempt::Placed(code),
            Err(e) => said(e),
        }
    }

    /// The schedule's key, admitted as the API admits a request.
    async fn admitted(&self, schedule: &Schedule) -> Result<Buyer, PurchaseError> {
        let store = &self.purchasing.store;
        let account = store
            .account(schedule.account_id)
            .await?
            .ok_or(PurchaseError::KeyRevoked)?;
        self.purchasing
            .admit_key(account.id, schedule.key_id, account.status)
            .await
    }
}

/// `{reference}-{n}`: run `n`'s purchase reference.
pub fn run_reference(reference: &str, n: u64) -> String {
    format!("{reference}-{n}")
}

/// A refusal as the run's outcome: the store's failures, the rate budget
/// and a reference in flight are tried again; any other is the customer's
/// to hear.
fn said(e: PurchaseError) -> Attempt {
    match e {
        PurchaseError::Store(e) => {
            tracing::warn!(error = %e, "a scheduled run could not be placed: tried again");
            Attempt::Later
        }
        PurchaseError::RateLimited { .. } | PurchaseError::DuplicateReference(None) => {
            Attempt::Later
        }
        refused => Attempt::Refused(refused.to_string()),
    }
}

/// A different name on the smartcard than when the schedule was made.
fn name_changed(schedule: &Schedule, now: &str) -> Option<String> {
    let before = schedule.verified_name.as_deref()?;
    let same = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
    (!same(before, now)).then(|| {
        format!("the smartcard's name is now \"{now}\", not \"{before}\" as when you made it")
    })
}

/// Whether a refused run is tried again: the schedule says so and the retry
/// falls in the Lagos day the run was due.
fn retries_today(schedule: &Schedule, due: i64, now: i64) -> bool {
    let retry = now + RETRY_AFTER.as_millis() as i64;
    schedule.retry_today && lagos_date_at(retry) == lagos_date_at(due)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_is_read_in_rfc_3339_within_its_bounds() {
        let now = parse_rfc3339_ms("2026-11-29T12:00:00.000+00:00").unwrap();
        let read = |text: &str| starts_at(text, now).map(rfc3339).map_err(|e| e.to_string());
        assert_eq!(
            read("2026-12-01T09:00:00+01:00"),
            Ok("2026-12-01T08:00:00.000+00:00".into())
        );
        assert!(
            read("tomorrow")
                .unwrap_err()
                .starts_with("starts_at: must be a time")
        );
        assert!(read("2026-11-27T12:00:00Z").unwrap_err().contains("past"));
        assert!(read("2028-01-01T00:00:00Z").unwrap_err().contains("year"));
    }

    /// A monthly ₦500 airtime schedule due at 09:00 Lagos time on 1 December.
    fn sample() -> Schedule {
        Schedule {
            id: "SC1".into(),
            account_id: billpay_domain::AccountId::new(),
            key_id: billpay_domain::KeyId::new(),
            reference: "mum-airtime".into(),
            product: Product::Airtime,
            provider: "mtn".into(),
            item: Item::Airtime {
                phone: billpay_domain::Phone::parse("08031234567").unwrap(),
                amount: billpay_domain::Kobo::from_naira(500),
                ported: false,
            },
            label: "MTN Airtime".into(),
            recipient: "08031234567".into(),
            amount: billpay_domain::Kobo::from_naira(500),
            every: Every::Month,
            starts_at: "2026-12-01T08:00:00.000+00:00".into(),
            retry_today: true,
            verified_name: None,
            status: ScheduleStatus::Active,
            status_reason: None,
            runs: 0,
            next_run_at: "2026-12-01T08:00:00.000+00:00".into(),
            created_at: "2026-11-29T08:00:00.000+00:00".into(),
        }
    }

    #[test]
    fn a_refused_run_is_retried_only_within_its_lagos_day() {
        let at = |text: &str| parse_rfc3339_ms(text).unwrap();
        let mut schedule = sample();
        let due = at("2026-12-01T08:00:00.000+00:00");
        // 09:00 in Lagos: an hour later is the same day
        assert!(retries_today(&schedule, due, due));
        // 23:30 in Lagos (22:30 UTC): an hour later is the next Lagos day
        assert!(!retries_today(
            &schedule,
            due,
            at("2026-12-01T22:30:00.000+00:00")
        ));
        schedule.retry_today = false;
        assert!(!retries_today(&schedule, due, due));
    }

    #[test]
    fn a_new_name_on_the_smartcard_stops_it_but_not_its_case() {
        let schedule = |name: &str| Schedule {
            verified_name: Some(name.into()),
            ..sample()
        };
        assert_eq!(name_changed(&schedule("ADA OBI"), " Ada Obi "), None);
        let changed = name_changed(&schedule("ADA OBI"), "CHIDI EZE").unwrap();
        assert!(
            changed.contains("CHIDI EZE") && changed.contains("ADA OBI"),
            "{changed}"
        );
    }

    #[test]
    fn a_run_reference_numbers_the_schedules() {
        assert_eq!(run_reference("mum-airtime", 12), "mum-airtime-12");
    }
}
