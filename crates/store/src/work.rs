//! The unit of work, given to the caller: changes composed in one
//! transaction, all stored or none — an operator's change and its log line,
//! next a change and its notice — without a store method per combination.
//!
//! ```ignore
//! store.write((account, amount, reference, log), |tx, (account, amount, reference, log)| {
//!     Box::pin(work::credit_logged(tx, *account, *amount, reference, log))
//! }).await?;
//! ```
//!
//! - The body gets the transaction ([`WriteTx`]) and its input by reference,
//!   and runs the changes listed below (each an area's function, written once
//!   for both engines) with `.await?`.
//! - SQLite runs it as one job of the writer's group commit (in its own
//!   savepoint); PostgreSQL in one pooled transaction, run again whole after a
//!   serialisation failure or deadlock (so the body is `Fn`, and its input is
//!   kept by the store rather than moved into it).
//! - A body runs statements only: it must not wait on anything else (a
//!   supplier, a timer). On SQLite such a wait is an error and nothing is stored.
//! - A change that writes a secret seals it here, with the engine's key
//!   (`crate::sealing`).
//!
//! A new change a caller may compose is its area's function and one entry in
//! [`changes!`] below.

use crate::areas::{accounts, catalogue, developer_access, fulfilment, funding, keys};
use crate::areas::{brand, limits, notice_admin, operators, pins};
use crate::areas::{pricing, privacy, referrals, schedules, upgrades, wallet};
use crate::limits::{AccountLimits, BlockEntry, BlockKind, Kyc, KycChange, LevelLimits, Limits};
use crate::postgres::{PgError, PgTx};
use crate::sealing::{Seal, Sealer};
use crate::*;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::{Rule, Scope};
use billpay_domain::{AccountId, KeyId, Kobo};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;

/// The transaction a unit of work's body runs its changes in.
pub struct WriteTx<'a> {
    on: On<'a>,
    sealer: &'a Sealer,
}

#[derive(Clone, Copy)]
enum On<'a> {
    /// The writer thread's connection, inside its batch (`sqlite::on_writer`).
    Sqlite,
    Postgres(&'a PgTx<'a>),
}

impl<'a> WriteTx<'a> {
    pub(crate) fn sqlite(sealer: &'a Sealer) -> Self {
        WriteTx {
            on: On::Sqlite,
            sealer,
        }
    }

    pub(crate) fn postgres(tx: &'a PgTx<'a>, sealer: &'a Sealer) -> Self {
        WriteTx {
            on: On::Postgres(tx),
            sealer,
        }
    }

    /// `value` as it is written: sealed with the engine's key.
    fn sealed<T: Seal + Clone>(&self, value: &T) -> StoreResult<T> {
        self.sealer.seal(value.clone())
    }
}

/// Why a unit of work failed: the store's error, or PostgreSQL's whole (so a
/// serialisation failure is retried). A body returns it; `?` makes one of a
/// [`StoreError`] or a [`Refusal`].
#[derive(Debug)]
pub struct WorkError(PgError);

impl From<StoreError> for WorkError {
    fn from(e: StoreError) -> Self {
        WorkError(PgError::Store(e))
    }
}

impl From<Refusal> for WorkError {
    fn from(e: Refusal) -> Self {
        WorkError(e.into())
    }
}

impl From<PgError> for WorkError {
    fn from(e: PgError) -> Self {
        WorkError(e)
    }
}

impl From<WorkError> for PgError {
    fn from(e: WorkError) -> Self {
        e.0
    }
}

impl From<WorkError> for StoreError {
    fn from(e: WorkError) -> Self {
        e.0.into()
    }
}

/// What a unit of work's body answers.
pub type WorkFuture<'t, T> = Pin<Box<dyn Future<Output = Result<T, WorkError>> + Send + 't>>;

type Answer = Box<dyn Any + Send>;
type Input = dyn Any + Send + Sync;
type Body = dyn for<'t> Fn(&'t WriteTx<'t>, &'t Input) -> WorkFuture<'t, Answer> + Send + Sync;

/// A unit of work on its way to an engine, its types erased so it crosses
/// `dyn Store`: see [`Store::write`](crate::Store).
pub struct Work {
    input: Box<Input>,
    body: Box<Body>,
}

impl Work {
    /// The body on `tx`, with its input.
    pub(crate) fn run<'t>(&'t self, tx: &'t WriteTx<'t>) -> WorkFuture<'t, Answer> {
        (self.body)(tx, &*self.input)
    }
}

/// Runs units of work: each engine.
#[async_trait::async_trait]
pub trait WorkStore: Send + Sync + 'static {
    /// Runs `work` in one transaction; callers use [`Store::write`](crate::Store).
    async fn run_work(&self, work: Work) -> StoreResult<Box<dyn Any + Send>>;
}

fn erased<F>(body: F) -> Box<Body>
where
    F: for<'t> Fn(&'t WriteTx<'t>, &'t Input) -> WorkFuture<'t, Answer> + Send + Sync + 'static,
{
    Box::new(body)
}

impl dyn Store {
    /// Runs `body` with `input` in one transaction: what it changes is stored
    /// if it answers `Ok`, nothing if it answers an error (see the module).
    pub async fn write<I, R, F>(&self, input: I, body: F) -> StoreResult<R>
    where
        I: Send + Sync + 'static,
        R: Send + 'static,
        F: for<'t> Fn(&'t WriteTx<'t>, &'t I) -> WorkFuture<'t, R> + Send + Sync + 'static,
    {
        let body = erased(move |tx, input| {
            let input = input
                .downcast_ref::<I>()
                .expect("a unit of work's body gets its own input");
            let answer = body(tx, input);
            Box::pin(async move { Ok(Box::new(answer.await?) as Answer) })
        });
        let work = Work {
            input: Box::new(input),
            body,
        };
        let answer = self.run_work(work).await?;
        Ok(*answer
            .downcast::<R>()
            .expect("a unit of work answers its own type"))
    }
}

/// `$call` with `$tx` bound to the engine's own transaction, on whichever
/// engine `tx` runs.
macro_rules! on_engine {
    ($work:expr, |$tx:ident| $call:expr) => {
        match $work.on {
            On::Sqlite => crate::sqlite::on_writer(|conn| {
                let $tx = &crate::sqlite::Lite(conn);
                crate::db::ready($call)
            })
            .map_err(WorkError::from),
            On::Postgres(pg) => {
                let $tx = &crate::postgres::Pg(pg);
                $call.await.map_err(WorkError::from)
            }
        }
    };
}

/// `change`, then its operator-log line, in the caller's transaction.
async fn then_log<T: crate::db::Tx, R>(
    tx: &T,
    change: impl Future<Output = Result<R, T::Error>>,
    line: &NewLogEntry,
) -> Result<R, T::Error> {
    let answer = change.await?;
    operators::append(tx, line).await?;
    Ok(answer)
}

/// The changes a unit of work may compose, each a public function of a
/// [`WriteTx`] calling its area's function (written once for both engines).
macro_rules! changes {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = |$tx:ident| $call:expr;
    )*) => {$(
        $(#[$meta])*
        pub async fn $name(tx: &WriteTx<'_>, $($arg: $ty),*) -> Result<$ret, WorkError> {
            on_engine!(tx, |$tx| $call)
        }
    )*};
}

changes! {
    /// A line in the operator log.
    fn log(entry: &NewLogEntry) -> () = |tx| operators::append(tx, entry);

    /// The owner's edits of the brand in place of the last; answers the
    /// document before (`BrandStore`).
    fn save_brand(edits: &billpay_domain::brand::BrandEdits) -> String
        = |tx| brand::save(tx, edits);

    /// An operator's credit once per reference (as `WalletStore::credit`);
    /// its line, with the balance before and after, only when it applied.
    fn credit_logged(account: AccountId, amount: Kobo, reference: &str, log: &NewLogEntry)
        -> Credit = |tx| wallet::credit_logged(tx, account, amount, reference, log);
    /// An operator's debit of `amount` (positive) once per reference: a
    /// `debit` ledger entry with the operator's reference and no purchase;
    /// refused below zero. A reference is one operator move on the wallet,
    /// credit or debit.
    fn debit_logged(account: AccountId, amount: Kobo, reference: &str, log: &NewLogEntry)
        -> Credit = |tx| wallet::debit(tx, account, amount, reference, log);

    /// The line's `before` is the status before (read under the row's lock).
    fn set_account_status_logged(account: AccountId, status: AccountStatus, log: &NewLogEntry)
        -> () = |tx| accounts::set_status_logged(tx, account, status, log);
    /// An operator turns an account's developer access on or off; the
    /// line's `before` is what it was.
    fn set_developer_access_logged(account: AccountId, on: bool, log: &NewLogEntry)
        -> () = |tx| developer_access::set_logged(tx, account, on, log);
    /// An operator makes a price tier an API tier or not; the line's
    /// `before` is what it was.
    fn set_tier_developer_access_logged(tier: &str, on: bool, log: &NewLogEntry)
        -> () = |tx| developer_access::set_tier_logged(tx, tier, on, log);
    /// An operator pauses every active schedule of an account (`reason`
    /// said on each); how many, with its line.
    fn pause_schedules_logged(account: AccountId, reason: &str, line: &NewLogEntry) -> u64
        = |tx| then_log(tx, schedules::pause_all(tx, account, reason), line);
    /// `AccountStore::create_account`.
    fn create_account(new: &NewAccount) -> Account = |tx| accounts::create(tx, new);

    /// `KeyStore::create_api_key`.
    fn create_api_key(new: &NewApiKey) -> ApiKey = |tx| keys::create(tx, new);
    /// `KeyStore::update_api_key`.
    fn update_api_key(id: KeyId, change: &KeyChange) -> ApiKey
        = |tx| keys::update(tx, id, change);

    /// `CatalogueStore::replace_catalogue`.
    fn replace_catalogue(catalogue: &Catalogue) -> () = |tx| catalogue::replace(tx, catalogue);
    /// `CatalogueStore::set_catalogue_active`: what changed, and the on-sale
    /// state before (`on sale` or `off sale`).
    fn set_catalogue_active(target: &str, active: bool) -> (String, String)
        = |tx| catalogue::set_active(tx, target, active);

    /// `PricingStore::create_tier`.
    fn create_tier(name: &str) -> () = |tx| pricing::create_tier(tx, name);

    /// [`create_api_key`] with its line.
    fn create_api_key_logged(new: &NewApiKey, line: &NewLogEntry) -> ApiKey
        = |tx| then_log(tx, keys::create(tx, new), line);
    /// [`update_api_key`] with its line.
    fn update_api_key_logged(id: KeyId, change: &KeyChange, line: &NewLogEntry) -> ApiKey
        = |tx| then_log(tx, keys::update(tx, id, change), line);
    /// [`replace_catalogue`] with its line (a supplier sync applied, a list price set).
    fn replace_catalogue_logged(catalogue: &Catalogue, line: &NewLogEntry) -> ()
        = |tx| then_log(tx, catalogue::replace(tx, catalogue), line);
    /// [`create_tier`] with its line.
    fn create_tier_logged(name: &str, line: &NewLogEntry) -> ()
        = |tx| then_log(tx, pricing::create_tier(tx, name), line);
    /// `PricingStore::set_price_rule`: whether it changed anything.
    fn set_price_rule(tier: &str, scope: &Scope, rule: Option<Rule>) -> bool
        = |tx| pricing::set_rule(tx, tier, scope, rule);
    /// `PricingStore::set_account_tier`: the tier before.
    fn set_account_tier(account: AccountId, tier: Option<&str>) -> String
        = |tx| pricing::set_account_tier(tx, account, tier);

    /// The owner offers a tier for a fee (replacing its offer); the line's
    /// `before` is the offer before. An unknown tier or `default` is `Invalid`.
    fn set_tier_offer_logged(offer: &TierOffer, log: &NewLogEntry) -> ()
        = |tx| upgrades::set_offer(tx, offer, log);
    /// Withdraws a tier's offer; `false` (and no line) when there was none.
    fn remove_tier_offer_logged(tier: &str, log: &NewLogEntry) -> bool
        = |tx| upgrades::remove_offer(tx, tier, log);
    /// A customer buys the offer of `tier` once per reference (see
    /// `areas/upgrades.rs`): the fee debited and the upgrade recorded when
    /// `Bought`, after which the caller sets the tier in this transaction.
    fn buy_upgrade(account: AccountId, tier: &str, reference: &str) -> UpgradeOutcome
        = |tx| upgrades::buy(tx, account, tier, reference);
    /// The account's referral code, made now if it has none
    /// (`areas/referrals.rs`).
    fn ensure_referral_code(account: AccountId) -> String
        = |tx| referrals::ensure_code(tx, account);
    /// Sets (`Some((hundredths of a percent, days))`) or removes the
    /// commission on a product; the line's `before` is the rate before.
    fn set_referral_rate_logged(product: billpay_domain::Product, rate: Option<(i64, Option<i64>)>,
        log: &NewLogEntry) -> () = |tx| referrals::set_rate(tx, product, rate, log);
    /// Replaces the referral settings; the line's `before` is what they were.
    fn set_referral_settings_logged(settings: &ReferralSettings, log: &NewLogEntry) -> ()
        = |tx| referrals::set_settings(tx, settings, log);
    /// Voids a referee's referral with the owner's reason (`false`: none,
    /// or voided already; no line then).
    fn void_referral_logged(referee: AccountId, reason: &str, log: &NewLogEntry) -> bool
        = |tx| referrals::void(tx, referee, reason, log);
    /// Moves a bonus balance to the wallet once per (account, reference).
    fn withdraw_bonus(account: AccountId, amount: Kobo, reference: &str) -> Withdrawal
        = |tx| referrals::withdraw(tx, account, amount, reference);
    /// Records a referral for an account that exists (the code's owner
    /// referred it); nothing when it was referred already.
    fn refer(referee: AccountId, code: &str) -> Option<Referral>
        = |tx| referrals::refer(tx, referee, code);

    /// The upgrade that put the account on its tier, its fee not given back.
    fn refundable_upgrade(account: AccountId) -> Option<Upgrade>
        = |tx| upgrades::refundable(tx, account);
    /// Gives an upgrade's fee back once (an operator's credit), with its
    /// line; `None` when it was given back already.
    fn refund_upgrade_logged(upgrade: &Upgrade, log: &NewLogEntry) -> Option<Credit>
        = |tx| upgrades::refund(tx, upgrade, log);

    /// Sets the level and how it was reached; the line's `before` is the level before.
    fn set_kyc_logged(account: AccountId, change: &KycChange, log: &NewLogEntry) -> Kyc
        = |tx| limits::set_kyc(tx, account, change, log);
    /// [`set_kyc_logged`] only while the account is at level `from`
    /// (checked by the level's own update, under the row's lock): a
    /// customer's check that passed never lowers a level an owner raised
    /// while the gateway answered. `None`, and nothing written, otherwise.
    fn raise_kyc_logged(account: AccountId, from: u8, change: &KycChange, log: &NewLogEntry)
        -> Option<Kyc> = |tx| limits::raise_kyc(tx, account, from, change, log);
    /// Replaces a level's limits (`None`: no limit).
    fn set_level_limits_logged(level: u8, limits: &Limits, log: &NewLogEntry) -> LevelLimits
        = |tx| limits::set_level_limits(tx, level, limits, log);
    /// Renames a level (1 to [`crate::limits::LEVEL_NAME_MAX`] characters,
    /// not blank, else `Invalid`; an unknown level is `NotFound`); the
    /// line's `before` is the old name.
    fn rename_level_logged(level: u8, name: &str, log: &NewLogEntry) -> LevelLimits
        = |tx| limits::rename_level(tx, level, name, log);
    /// Replaces an account's own limits (`None`: its level's).
    fn set_account_limits_logged(account: AccountId, limits: &Limits, log: &NewLogEntry)
        -> AccountLimits = |tx| limits::set_account_limits(tx, account, limits, log);
    /// `false` (and no line) when the entry is there already.
    fn block_logged(entry: &BlockEntry, log: &NewLogEntry) -> bool
        = |tx| limits::block(tx, entry, log);
    /// `false` (and no line) when there was no such entry.
    fn unblock_logged(kind: BlockKind, value: &str, log: &NewLogEntry) -> bool
        = |tx| limits::unblock(tx, kind, value, log);
    /// Sends a held purchase on to the supplier (the fulfilment claim takes
    /// it next); `false` (and no line) when it is not held any more.
    fn release_held_logged(code: &str, log: &NewLogEntry) -> bool
        = |tx| limits::release(tx, code, log);

    /// A customer's own identity check, counted before the gateway is asked
    /// in the throttles' table (scope [`crate::limits::IDENTITY_CHECKS`], the
    /// Lagos day starting at `since`, RFC 3339): with fewer than `most` that
    /// day, `log` is written as a line [`crate::limits::IDENTITY_CHECK`] and
    /// the checks left after it are answered; else `None` and nothing is
    /// written. Concurrent checks of one account, on any node, count each
    /// other (one conditional UPSERT).
    fn start_identity_check(account: AccountId, since: &str, most: u32, log: &NewLogEntry)
        -> Option<u32> = |tx| limits::start_identity_check(tx, account, since, most, log);

    /// Credits an unmatched payment to `account`, less `fee`, with the
    /// operator's line; refused unless it is unmatched (so it is credited once).
    fn assign_funding(id: &str, account: AccountId, fee: Kobo, note: &str, log: &NewLogEntry)
        -> FundingEvent = |tx| funding::assign(tx, id, account, fee, note, log);
    /// Queues a notice for one more send now (the outbox's requeue), with
    /// the operator's line; `false` while a send holds it.
    fn resend_notice(id: &str, log: &NewLogEntry) -> bool = |tx| notice_admin::resend(tx, id, log);
    /// A new operator with its line; `StoreError::EmailTaken` when another
    /// operator has the address (in any case).
    fn create_operator(new: &NewOperator, log: &NewLogEntry) -> Operator
        = |tx| operators::create(tx, new, log);
    /// With its line; disabling or a new password ends the operator's sessions.
    fn update_operator(id: i64, change: &OperatorChange, log: &NewLogEntry) -> Operator
        = |tx| operators::update(tx, id, change, log);

    /// An operator ends a transaction-PIN lock (and the run of wrong tries);
    /// `false` (and no line) when none was on.
    fn clear_pin_lock_logged(account: AccountId, log: &NewLogEntry) -> bool
        = |tx| pins::clear_lock(tx, account, crate::clock::now_ms(), log);
    /// Closes an account whose wallet is empty and has no purchase in
    /// flight: suspended for good, its sessions ended. Anything else is
    /// `StoreError::Invalid` saying why.
    fn close_account_logged(account: AccountId, log: &NewLogEntry) -> Closure
        = |tx| privacy::close(tx, account, log);
    /// Erases a closed account's personal data (see `areas/privacy.rs`). An
    /// open or already erased account is `StoreError::Invalid`.
    fn erase_account_logged(account: AccountId, log: &NewLogEntry) -> Erasure
        = |tx| privacy::erase(tx, account, log);
}

/// [`create_account`] with its line, whose subject is the new account's id.
pub async fn create_account_logged(
    tx: &WriteTx<'_>,
    new: &NewAccount,
    line: &NewLogEntry,
) -> Result<Account, WorkError> {
    let account = create_account(tx, new).await?;
    let line = NewLogEntry {
        subject: account.id.to_string(),
        ..line.clone()
    };
    log(tx, &line).await?;
    Ok(account)
}

/// [`set_catalogue_active`] with its line, whose `before` is the on-sale
/// state before; answers what changed.
pub async fn set_catalogue_active_logged(
    tx: &WriteTx<'_>,
    target: &str,
    active: bool,
    line: &NewLogEntry,
) -> Result<String, WorkError> {
    let (what, before) = set_catalogue_active(tx, target, active).await?;
    log(tx, &line.clone().with_before(&before)).await?;
    Ok(what)
}

/// [`save_brand`] with its line, the document before as its `before`.
pub async fn set_brand_logged(
    tx: &WriteTx<'_>,
    edits: &billpay_domain::brand::BrandEdits,
    line: &NewLogEntry,
) -> Result<(), WorkError> {
    let before = save_brand(tx, edits).await?;
    log(tx, &line.clone().with_before(&before)).await
}

/// [`set_price_rule`] with its line, written only when the rule changed (a
/// removal that removed nothing is not logged).
pub async fn set_price_rule_logged(
    tx: &WriteTx<'_>,
    tier: &str,
    scope: &Scope,
    rule: Option<Rule>,
    line: &NewLogEntry,
) -> Result<bool, WorkError> {
    let changed = set_price_rule(tx, tier, scope, rule).await?;
    if changed {
        log(tx, line).await?;
    }
    Ok(changed)
}

/// [`set_account_tier`] with its line, whose `before` is the tier before.
pub async fn set_account_tier_logged(
    tx: &WriteTx<'_>,
    account: AccountId,
    tier: Option<&str>,
    line: &NewLogEntry,
) -> Result<(), WorkError> {
    let before = set_account_tier(tx, account, tier).await?;
    log(tx, &line.clone().with_before(&before)).await
}

/// `FulfilmentStore::finalize` by an operator, with its line (written only
/// if it changed something); the result and webhook payload sealed.
pub async fn finalize_logged(
    tx: &WriteTx<'_>,
    code: &str,
    fin: &Finalization,
    log: &NewLogEntry,
) -> Result<bool, WorkError> {
    let fin = tx.sealed(fin)?;
    on_engine!(tx, |tx| fulfilment::finalize_logged(tx, code, &fin, log))
}

/// Fails a held purchase with its refund, webhook and notice (the normal
/// failure path, once); `false` (and no line) when it is not held any more.
pub async fn reject_held_logged(
    tx: &WriteTx<'_>,
    code: &str,
    fin: &Finalization,
    log: &NewLogEntry,
) -> Result<bool, WorkError> {
    let fin = tx.sealed(fin)?;
    on_engine!(tx, |tx| limits::reject(tx, code, &fin, log))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On SQLite a body runs inside the writer's batch, polled once: one that
    /// waits on anything but its statements is an error, and what it changed
    /// before waiting is rolled back.
    #[tokio::test]
    async fn a_body_that_waits_on_something_else_stores_nothing_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("w.db").display());
        let store = crate::open(&url).await.unwrap();
        let account = AccountId::new();
        let subject = account.to_string();
        let entry = NewLogEntry {
            actor: "operator".into(),
            action: "test.wait".into(),
            subject: subject.clone(),
            ..NewLogEntry::default()
        };
        let waited = store
            .write(entry, |tx, entry| {
                Box::pin(async move {
                    log(tx, entry).await?;
                    // Waits once, as anything that is not a statement may.
                    let mut first = true;
                    std::future::poll_fn(|cx| {
                        if std::mem::take(&mut first) {
                            cx.waker().wake_by_ref();
                            return std::task::Poll::Pending;
                        }
                        std::task::Poll::Ready(())
                    })
                    .await;
                    Ok(())
                })
            })
            .await;
        let error = waited.expect_err("a wait inside a SQLite unit of work");
        assert!(error.to_string().contains("waited"), "{error}");
        let filter = LogFilter {
            subject: Some(subject),
            limit: 10,
            ..LogFilter::default()
        };
        assert!(store.operator_log(filter).await.unwrap().is_empty());
    }
}
