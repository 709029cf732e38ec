//! KYC levels, limits and the blocklist (issue 32): what a purchase is
//! checked against (its wallet's [`wallet_state`], read once per placement,
//! and its own [`purchase_reads`]), the check itself ([`check`]), the usage
//! placed purchases add ([`Passed::spend`], [`record_usage`]), and the
//! operator's changes, each logged in the same transaction. Placement
//! (`purchases::place`) runs them on both engines.

use crate::clock::{lagos_date_at, now_ms, now_rfc3339, rfc3339};
use crate::columns::TX_COLUMNS;
use crate::db::{
    ManyRows, Param, PerEngine, ReadTx, RowRead, Statements, Tx, col, for_both_engines, values,
};
use crate::limits::*;
use crate::rows::transaction;
use crate::*;
use billpay_domain::{AccountId, Kobo};
use std::sync::LazyLock;

for_both_engines! {
    /// KYC levels, limits and the blocklist (issue 32; the checks run inside the
    /// purchase's own transaction, see `PurchaseStore::place_purchase`).
    pub trait LimitStore {
        /// Every level and its limits, level 0 first.
        fn level_limits() -> Vec<LevelLimits> = read |tx| levels(tx);
        /// An account's level, the limits that apply, its own, and today's and
        /// the last 30 days' usage.
        fn account_limits(account: AccountId) -> AccountLimits = read |tx| view(tx, account);
        fn blocklist() -> Vec<BlockEntry> = read |tx| blocklist(tx);
        /// Purchases held for review by a velocity rule or the largest balance
        /// (`held_for` says which), oldest first.
        fn held_purchases(limit: u32) -> Vec<Transaction> = read opened |tx| held(tx, limit);
        /// Deletes the usage no limit reads any more: the day's and the
        /// recipients' rows of Lagos days before `before_day` (`YYYY-MM-DD`) and
        /// the hourly counts of clock hours (UTC hours since 1970) before
        /// `before_hour` (the notices' hourly counts too, `notice_counts`);
        /// answers the usage rows deleted. `limits::usage_prune_bounds`
        /// gives the bounds that keep what every limit reads.
        fn prune_usage(before_day: &str, before_hour: i64) -> u64
            = write |tx| prune_usage(tx, &before_day, before_hour);
    }
}

const LIMIT_COLUMNS: &str = "max_purchase, daily_value, daily_count, monthly_value, \
    monthly_count, max_balance, per_recipient_daily, recipient_hourly_count, \
    account_hourly_count, first_day_value, recipient_hourly_action, account_hourly_action, \
    first_day_action, over_balance_action";

/// The columns of [`PURCHASE_STATE`].
const STATE_COLUMNS: &str = "balance, level, max_purchase, daily_value, daily_count, \
    monthly_value, monthly_count, max_balance, per_recipient_daily, recipient_hourly_count, \
    account_hourly_count, first_day_value, recipient_hourly_action, account_hourly_action, \
    first_day_action, over_balance_action, day_value, day_count, blocked, created_at";

/// A held purchase's `next_attempt_at` (9999-12-31): the fulfilment claim
/// never reaches it, whatever release claims.
pub(crate) const HELD_UNTIL_MS: i64 = 253_402_300_799_000;

/// What every purchase of a wallet reads, in one statement of primary-key
/// lookups: the balance and level, the account's limits (its own over its
/// level's), today's usage, whether the account is blocked and when it was
/// created. ?1 account, ?2 today (Lagos). The 30-day sums, level 0's limits
/// and this hour's and the first day's spending are read after it, and only
/// when a limit needs them ([`wallet_state`]); the recipient's side with each
/// purchase ([`PURCHASE_READS`]).
const PURCHASE_STATE: &str = "
SELECT a.balance AS balance, a.kyc_level AS level,
    COALESCE(o.max_purchase, k.max_purchase) AS max_purchase,
    COALESCE(o.daily_value, k.daily_value) AS daily_value,
    COALESCE(o.daily_count, k.daily_count) AS daily_count,
    COALESCE(o.monthly_value, k.monthly_value) AS monthly_value,
    COALESCE(o.monthly_count, k.monthly_count) AS monthly_count,
    COALESCE(o.max_balance, k.max_balance) AS max_balance,
    COALESCE(o.per_recipient_daily, k.per_recipient_daily) AS per_recipient_daily,
    COALESCE(o.recipient_hourly_count, k.recipient_hourly_count) AS recipient_hourly_count,
    COALESCE(o.account_hourly_count, k.account_hourly_count) AS account_hourly_count,
    COALESCE(o.first_day_value, k.first_day_value) AS first_day_value,
    COALESCE(o.recipient_hourly_action, k.recipient_hourly_action) AS recipient_hourly_action,
    COALESCE(o.account_hourly_action, k.account_hourly_action) AS account_hourly_action,
    COALESCE(o.first_day_action, k.first_day_action) AS first_day_action,
    COALESCE(o.over_balance_action, k.over_balance_action) AS over_balance_action,
    COALESCE(u.value, 0) AS day_value, COALESCE(u.count, 0) AS day_count,
    EXISTS (SELECT 1 FROM blocklist b WHERE b.kind = 'account' AND b.value = a.id) AS blocked,
    a.created_at AS created_at
FROM accounts a
JOIN kyc_levels k ON k.level = a.kyc_level
LEFT JOIN account_limits o ON o.account_id = a.id
LEFT JOIN limit_usage u ON u.account_id = a.id AND u.day = ?2
WHERE a.id = ?1";

/// What one purchase reads beside its wallet's state, in one statement:
/// whether its reference is taken, whether its recipient is blocked, and
/// the recipient's usage its wallet's rules read ([`RecipientReads`]; zero
/// otherwise). ?1 account, ?2 reference, ?3 recipient, ?4 today (Lagos),
/// ?5 the clock hour, ?6 and ?7 whether to read today's and this hour's.
const PURCHASE_READS: &str = "
SELECT EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = ?1 AND t.reference = ?2)
        AS taken,
    EXISTS (SELECT 1 FROM blocklist b WHERE b.kind = 'recipient' AND b.value = ?3) AS blocked,
    CASE WHEN ?6 THEN COALESCE((SELECT r.value FROM recipient_usage r
        WHERE r.account_id = ?1 AND r.recipient = ?3 AND r.day = ?4), 0) ELSE 0 END AS today,
    CASE WHEN ?7 THEN COALESCE((SELECT h.count FROM hourly_usage h
        WHERE h.account_id = ?1 AND h.hour = ?5 AND h.recipient = ?3), 0) ELSE 0 END AS hour";

/// The Lagos day a purchase counts in.
pub(crate) struct Today {
    date: time::Date,
    /// `YYYY-MM-DD`, the usage rows' key.
    pub(crate) day: String,
    /// The clock hour (UTC hours since 1970): the hourly usage rows' key.
    pub(crate) hour: i64,
    now_ms: i64,
}

/// The last hour's Lagos date and its text: Lagos keeps UTC+1 all year, so
/// its date turns with a UTC hour, and every purchase in that hour reuses
/// them instead of formatting a date.
static THIS_HOUR: std::sync::Mutex<Option<(i64, time::Date, String)>> = std::sync::Mutex::new(None);

impl Today {
    pub(crate) fn now() -> Today {
        let now_ms = now_ms();
        let hour = now_ms / 3_600_000;
        let mut cached = THIS_HOUR.lock().unwrap_or_else(|e| e.into_inner());
        let (_, date, day) = match &*cached {
            Some(entry) if entry.0 == hour => entry,
            _ => {
                let date = lagos_date_at(now_ms);
                cached.insert((hour, date, date.to_string()))
            }
        };
        Today {
            date: *date,
            day: day.clone(),
            hour,
            now_ms,
        }
    }

    /// 24 hours ago (RFC 3339): an account created after it is new. Made
    /// only when a first-day rule applies.
    pub(crate) fn new_since(&self) -> String {
        rfc3339(self.now_ms - 86_400_000)
    }

    /// The day before today: a new account's purchases are in its usage
    /// rows from it on.
    pub(crate) fn yesterday(&self) -> String {
        (self.date - time::Duration::days(1)).to_string()
    }

    /// The first day of the 30-day window ending today.
    pub(crate) fn window_start(&self) -> String {
        usage_days(self.date).1
    }
}

/// How much of the state a read needs: a purchase only what its limits use,
/// the account's page all of its usage.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    ForPurchase,
    Everything,
}

/// A wallet's side of what its purchases are checked against (a
/// [`LimitState`] without the recipient's usage), and which of a
/// recipient's usage they read.
pub(crate) struct WalletState {
    pub(crate) state: LimitState,
    pub(crate) reads: RecipientReads,
}

/// The recipient's usage a wallet's purchases read: what a rule that may
/// apply to one of them needs, its own limits' and, while it is over its
/// largest balance, level 0's (purchases only lower a balance, so no other
/// limits can come to apply).
#[derive(Clone, Copy, Default)]
pub(crate) struct RecipientReads {
    pub(crate) today: bool,
    pub(crate) hour: bool,
}

/// The state of `account`'s wallet today (`None`: no such account). The
/// 30-day sums are read only when a 30-day limit may apply, this hour's
/// count only when an hourly rule may, level 0's limits only when the
/// balance is over the largest balance (left at zero and none otherwise: no
/// limit reads them then).
pub(crate) async fn wallet_state<T: ReadTx>(
    tx: &T,
    account: AccountId,
    today: &Today,
) -> Result<Option<WalletState>, T::Error> {
    read_state(tx, account, today, Read::ForPurchase).await
}

async fn read_state<T: ReadTx>(
    tx: &T,
    account: AccountId,
    today: &Today,
    read: Read,
) -> Result<Option<WalletState>, T::Error> {
    let params: [&dyn Param; 2] = [&account.to_string(), &today.day];
    let Some((mut state, created_at)) = tx.query_opt(PURCHASE_STATE, &params, state_row).await?
    else {
        return Ok(None);
    };
    if state.held_to_level0() {
        state.level0 = level0(tx).await?;
    }
    // Level 0's are all unset unless they may apply.
    let may = [state.limits, state.level0];
    let any = |rule: fn(&Limits) -> bool| may.iter().any(rule);
    if read == Read::Everything || any(|l| l.monthly_value.is_some() || l.monthly_count.is_some()) {
        let (value, count) = window(tx, account, &today.window_start()).await?;
        (state.usage.monthly_value, state.usage.monthly_count) = (value, count);
    }
    if any(|l| l.account_hourly_count.is_some()) {
        state.account_hour = hour_count(tx, account, today.hour).await?;
    }
    // Stored times are fixed-width RFC 3339 in UTC, so they compare as text.
    state.new_account = any(|l| l.first_day_value.is_some()) && created_at > today.new_since();
    if state.new_account {
        // A new account's purchases are all in today's and yesterday's rows.
        state.first_day = window(tx, account, &today.yesterday()).await?.0;
    }
    let reads = RecipientReads {
        today: any(|l| l.per_recipient_daily.is_some()),
        hour: any(|l| l.recipient_hourly_count.is_some()),
    };
    Ok(Some(WalletState { state, reads }))
}

/// Which hourly counts a purchase reads and keeps: only those a rule in
/// force needs.
#[derive(Clone, Copy, Default)]
pub(crate) struct Hourly {
    pub(crate) recipient: bool,
    pub(crate) account: bool,
}

impl Hourly {
    fn of(limits: &Limits) -> Hourly {
        Hourly {
            recipient: limits.recipient_hourly_count.is_some(),
            account: limits.account_hourly_count.is_some(),
        }
    }
}

/// Purchases from `account` this clock hour.
async fn hour_count<T: ReadTx>(tx: &T, account: AccountId, hour: i64) -> Result<i64, T::Error> {
    const COLUMNS: &str = "count";
    let sql = "SELECT count FROM hourly_usage
               WHERE account_id = ?1 AND hour = ?2 AND recipient = ''";
    let params: [&dyn Param; 2] = [&account.to_string(), &hour];
    let found = tx
        .query_opt(sql, &params, |row| row.get(col!("count")))
        .await?;
    Ok(found.unwrap_or(0))
}

/// A purchase's own reads: its reference taken, and its recipient's side of
/// the state.
pub(crate) struct PurchaseReads {
    pub(crate) taken: bool,
    pub(crate) recipient: RecipientState,
}

/// A recipient's side of the state: on the blocklist, spent on today and
/// bought for this hour (each read only when [`RecipientReads`] says).
#[derive(Clone, Copy, Default)]
pub(crate) struct RecipientState {
    pub(crate) blocked: bool,
    pub(crate) today: Kobo,
    pub(crate) hour: i64,
}

/// [`PURCHASE_READS`] for a purchase of `account` under `reference` to `recipient`.
pub(crate) async fn purchase_reads<T: ReadTx>(
    tx: &T,
    (account, reference, recipient): (AccountId, &str, &str),
    today: &Today,
    reads: RecipientReads,
) -> Result<PurchaseReads, T::Error> {
    const COLUMNS: &str = "taken, blocked, today, hour";
    let params: [&dyn Param; 7] = [
        &account.to_string(),
        &reference,
        &recipient,
        &today.day,
        &today.hour,
        &reads.today,
        &reads.hour,
    ];
    tx.query_one(PURCHASE_READS, &params, |row| {
        Ok(PurchaseReads {
            taken: row.get(col!("taken"))?,
            recipient: RecipientState {
                blocked: row.get(col!("blocked"))?,
                today: row.get(col!("today"))?,
                hour: row.get(col!("hour"))?,
            },
        })
    })
    .await
}

/// The state a purchase to `recipient` is checked against: its wallet's,
/// with the recipient's side.
pub(crate) fn with_recipient(wallet: &LimitState, recipient: RecipientState) -> LimitState {
    LimitState {
        blocked: wallet.blocked || recipient.blocked,
        recipient_today: recipient.today,
        recipient_hour: recipient.hour,
        ..wallet.clone()
    }
}

/// The state (its account new or not left to [`state`]) and when the account
/// was created.
fn state_row(row: &dyn RowRead) -> StoreResult<(LimitState, String)> {
    const COLUMNS: &str = STATE_COLUMNS;
    let state = LimitState {
        balance: row.get(col!("balance"))?,
        level: row.get(col!("level"))?,
        limits: Limits {
            max_purchase: row.get(col!("max_purchase"))?,
            daily_value: row.get(col!("daily_value"))?,
            daily_count: row.get(col!("daily_count"))?,
            monthly_value: row.get(col!("monthly_value"))?,
            monthly_count: row.get(col!("monthly_count"))?,
            max_balance: row.get(col!("max_balance"))?,
            per_recipient_daily: row.get(col!("per_recipient_daily"))?,
            recipient_hourly_count: row.get(col!("recipient_hourly_count"))?,
            account_hourly_count: row.get(col!("account_hourly_count"))?,
            first_day_value: row.get(col!("first_day_value"))?,
            recipient_hourly_action: action(row.get(col!("recipient_hourly_action"))?)?,
            account_hourly_action: action(row.get(col!("account_hourly_action"))?)?,
            first_day_action: action(row.get(col!("first_day_action"))?)?,
            over_balance_action: action(row.get(col!("over_balance_action"))?)?,
        },
        level0: Limits::default(),
        usage: Usage {
            daily_value: row.get(col!("day_value"))?,
            daily_count: row.get(col!("day_count"))?,
            monthly_value: Kobo(0),
            monthly_count: 0,
        },
        recipient_today: Kobo(0),
        blocked: row.get(col!("blocked"))?,
        recipient_hour: 0,
        account_hour: 0,
        new_account: false,
        first_day: Kobo(0),
    };
    Ok((state, row.get(col!("created_at"))?))
}

/// A stored rule action (`None`: not set).
fn action(text: Option<String>) -> StoreResult<Option<RuleAction>> {
    text.map(|text| {
        RuleAction::parse(&text)
            .ok_or_else(|| StoreError::backend(format!("unexpected rule action {text:?}")))
    })
    .transpose()
}

/// Level 0's limits, which apply while a wallet is over its largest balance
/// (its own largest balance does not: it is what put it there).
async fn level0<T: ReadTx>(tx: &T) -> Result<Limits, T::Error> {
    let sql = format!("SELECT {LIMIT_COLUMNS} FROM kyc_levels WHERE level = 0");
    let found = tx.query_opt(&sql, &[], limits_row).await?;
    let limits = found.ok_or(StoreError::NotFound("level 0"))?;
    Ok(Limits {
        max_balance: None,
        ..limits
    })
}

/// Value and count spent from `first_day` to today.
async fn window<T: ReadTx>(
    tx: &T,
    account: AccountId,
    first_day: &str,
) -> Result<(Kobo, i64), T::Error> {
    const COLUMNS: &str = "value, count";
    let sql = "SELECT CAST(COALESCE(SUM(value), 0) AS BIGINT) AS value,
                   CAST(COALESCE(SUM(count), 0) AS BIGINT) AS count
               FROM limit_usage WHERE account_id = ?1 AND day >= ?2";
    let params: [&dyn Param; 2] = [&account.to_string(), &first_day];
    tx.query_one(sql, &params, |row| {
        Ok((row.get(col!("value"))?, row.get(col!("count"))?))
    })
    .await
}

/// A purchase that passed its checks: which usage it keeps (the recipient's
/// only while a per-recipient limit applies, the hourly counts only while
/// an hourly rule does), and the rule that holds it for review, if one does.
pub(crate) struct Passed {
    keeps_recipient: bool,
    hourly: Hourly,
    pub(crate) hold: Option<&'static str>,
}

/// Refuses a purchase of `amount` that is blocked or over a limit under
/// `state` (its wallet's with its recipient's, [`with_recipient`]).
pub(crate) fn check(state: &LimitState, amount: Kobo) -> StoreResult<Passed> {
    if state.blocked {
        return Err(Refusal::Blocked.into());
    }
    let hold = match state.decide(amount) {
        Decision::Pass => None,
        Decision::Hold(rule) => Some(rule),
        Decision::Refuse(refusal) => return Err(Refusal::LimitExceeded(refusal).into()),
    };
    let applied = state.applied();
    Ok(Passed {
        keeps_recipient: applied.per_recipient_daily.is_some(),
        hourly: Hourly::of(&applied),
        hold,
    })
}

/// What a wallet's purchases placed in one transaction add to its usage,
/// written by [`record_usage`] in one upsert per row.
#[derive(Default)]
pub(crate) struct Spent {
    /// What the wallet's placed purchases cost in all: its one debit.
    pub(crate) value: Kobo,
    /// How many were placed (none: nothing to write for the wallet).
    pub(crate) count: i64,
    account_hour: i64,
    /// Per recipient: the value its daily usage keeps, the purchases its
    /// hourly count keeps.
    recipients: Vec<(String, Kobo, i64)>,
}

impl Passed {
    /// Adds the placed purchase of `amount` to `to` to what its wallet's
    /// next purchase is checked against (`wallet`, `recipient`) exactly as
    /// [`record_usage`] will store it, and to what that records (`spent`).
    pub(crate) fn spend(
        &self,
        (amount, to): (Kobo, &str),
        wallet: &mut LimitState,
        recipient: &mut RecipientState,
        spent: &mut Spent,
    ) {
        let usage = &mut wallet.usage;
        usage.daily_value.0 += amount.0;
        usage.daily_count += 1;
        usage.monthly_value.0 += amount.0;
        usage.monthly_count += 1;
        wallet.first_day.0 += amount.0;
        wallet.balance.0 -= amount.0;
        spent.value.0 += amount.0;
        spent.count += 1;
        if self.hourly.account {
            wallet.account_hour += 1;
            spent.account_hour += 1;
        }
        let kept_today = if self.keeps_recipient {
            amount
        } else {
            Kobo(0)
        };
        let kept_hour = i64::from(self.hourly.recipient);
        if kept_today.0 == 0 && kept_hour == 0 {
            return;
        }
        recipient.today.0 += kept_today.0;
        recipient.hour += kept_hour;
        match spent.recipients.iter_mut().find(|(r, ..)| r == to) {
            Some((_, value, count)) => {
                (value.0, *count) = (value.0 + kept_today.0, *count + kept_hour)
            }
            None => spent
                .recipients
                .push((to.to_owned(), kept_today, kept_hour)),
        }
    }
}

/// Adds what each wallet's placed purchases spent (`spent`) to its usage:
/// today's row, this hour's count, and each recipient's day and hour it
/// keeps; each table's rows in one upsert ([`ManyRows`]), sent together
/// (one round trip on PostgreSQL). The wallets are distinct.
pub(crate) async fn record_usage<T: Statements>(
    tx: &T,
    spent: &[(AccountId, &Spent)],
    today: &Today,
) -> Result<(), T::Error> {
    static DAYS: ManyRows = ManyRows::new(4, |width, rows| {
        let head = "INSERT INTO limit_usage (account_id, day, value, count) VALUES";
        let tail = "ON CONFLICT (account_id, day) DO UPDATE SET
            value = limit_usage.value + excluded.value,
            count = limit_usage.count + excluded.count";
        values(head, "(?1, ?2, ?3, ?4)", tail, width, rows)
    });
    static HOURS: ManyRows = ManyRows::new(4, |width, rows| {
        let head = "INSERT INTO hourly_usage (account_id, recipient, hour, count) VALUES";
        let tail = "ON CONFLICT (account_id, recipient, hour) DO UPDATE SET
            count = hourly_usage.count + excluded.count";
        values(head, "(?1, ?2, ?3, ?4)", tail, width, rows)
    });
    static RECIPIENT_DAYS: ManyRows = ManyRows::new(4, |width, rows| {
        let head = "INSERT INTO recipient_usage (account_id, recipient, day, value) VALUES";
        let tail = "ON CONFLICT (account_id, recipient, day) DO UPDATE SET
            value = recipient_usage.value + excluded.value";
        values(head, "(?1, ?2, ?3, ?4)", tail, width, rows)
    });
    let accounts: Vec<String> = spent.iter().map(|(a, _)| a.to_string()).collect();
    let (mut days, mut hours, mut recipient_days) = (Vec::new(), Vec::new(), Vec::new());
    for (account, (_, spent)) in accounts.iter().zip(spent) {
        days.extend::<[&dyn Param; 4]>([account, &today.day, &spent.value.0, &spent.count]);
        if spent.account_hour > 0 {
            // The account's own hourly count: the recipient left empty.
            hours.extend::<[&dyn Param; 4]>([account, &"", &today.hour, &spent.account_hour]);
        }
        for (to, value, count) in &spent.recipients {
            if *count > 0 {
                hours.extend::<[&dyn Param; 4]>([account, to, &today.hour, count]);
            }
            if value.0 > 0 {
                recipient_days.extend::<[&dyn Param; 4]>([account, to, &today.day, &value.0]);
            }
        }
    }
    futures_util::try_join!(
        DAYS.execute(tx, &days),
        HOURS.execute(tx, &hours),
        RECIPIENT_DAYS.execute(tx, &recipient_days)
    )?;
    Ok(())
}

fn limits_row(row: &dyn RowRead) -> StoreResult<Limits> {
    const COLUMNS: &str = LIMIT_COLUMNS;
    Ok(Limits {
        max_purchase: row.get(col!("max_purchase"))?,
        daily_value: row.get(col!("daily_value"))?,
        daily_count: row.get(col!("daily_count"))?,
        monthly_value: row.get(col!("monthly_value"))?,
        monthly_count: row.get(col!("monthly_count"))?,
        max_balance: row.get(col!("max_balance"))?,
        per_recipient_daily: row.get(col!("per_recipient_daily"))?,
        recipient_hourly_count: row.get(col!("recipient_hourly_count"))?,
        account_hourly_count: row.get(col!("account_hourly_count"))?,
        first_day_value: row.get(col!("first_day_value"))?,
        recipient_hourly_action: action(row.get(col!("recipient_hourly_action"))?)?,
        account_hourly_action: action(row.get(col!("account_hourly_action"))?)?,
        first_day_action: action(row.get(col!("first_day_action"))?)?,
        over_balance_action: action(row.get(col!("over_balance_action"))?)?,
    })
}

fn limit_params(limits: &Limits) -> [Option<i64>; 10] {
    [
        limits.max_purchase.map(|k| k.0),
        limits.daily_value.map(|k| k.0),
        limits.daily_count,
        limits.monthly_value.map(|k| k.0),
        limits.monthly_count,
        limits.max_balance.map(|k| k.0),
        limits.per_recipient_daily.map(|k| k.0),
        limits.recipient_hourly_count,
        limits.account_hourly_count,
        limits.first_day_value.map(|k| k.0),
    ]
}

/// The four rule actions, as stored (`None`: not set).
fn action_params(limits: &Limits) -> [Option<&'static str>; 4] {
    [
        limits.recipient_hourly_action,
        limits.account_hourly_action,
        limits.first_day_action,
        limits.over_balance_action,
    ]
    .map(|a| a.map(RuleAction::as_str))
}

async fn levels<T: ReadTx>(tx: &T) -> Result<Vec<LevelLimits>, T::Error> {
    let sql = format!("SELECT {LIMIT_COLUMNS}, level, name FROM kyc_levels ORDER BY level");
    tx.query_all(&sql, &[], |row| {
        const COLUMNS: &str = concat!(
            "max_purchase, daily_value, daily_count, monthly_value, ",
            "monthly_count, max_balance, per_recipient_daily, recipient_hourly_count, ",
            "account_hourly_count, first_day_value, recipient_hourly_action, ",
            "account_hourly_action, first_day_action, over_balance_action, level, name"
        );
        Ok(LevelLimits {
            level: row.get(col!("level"))?,
            name: row.get(col!("name"))?,
            limits: limits_row(row)?,
        })
    })
    .await
}

async fn overrides<T: ReadTx>(tx: &T, account: AccountId) -> Result<Limits, T::Error> {
    let sql = format!("SELECT {LIMIT_COLUMNS} FROM account_limits WHERE account_id = ?1");
    let found = tx
        .query_opt(&sql, &[&account.to_string()], limits_row)
        .await?;
    Ok(found.unwrap_or_default())
}

async fn kyc<T: ReadTx>(tx: &T, account: AccountId) -> Result<Kyc, T::Error> {
    const COLUMNS: &str = "level, method, last4, reason, set_by, set_at";
    let sql = "SELECT a.kyc_level AS level, k.method, k.last4, k.reason, k.set_by, k.set_at
               FROM accounts a LEFT JOIN account_kyc k ON k.account_id = a.id WHERE a.id = ?1";
    let found = tx
        .query_opt(sql, &[&account.to_string()], |row| {
            Ok(Kyc {
                level: row.get(col!("level"))?,
                method: row.get(col!("method"))?,
                last4: row.get(col!("last4"))?,
                reason: row.get(col!("reason"))?,
                set_by: row.get(col!("set_by"))?,
                set_at: row.get(col!("set_at"))?,
            })
        })
        .await?;
    Ok(found.ok_or(StoreError::NotFound("account"))?)
}

async fn view<T: ReadTx>(tx: &T, account: AccountId) -> Result<AccountLimits, T::Error> {
    let found = read_state(tx, account, &Today::now(), Read::Everything).await?;
    let state = found.ok_or(StoreError::NotFound("account"))?.state;
    let held = state.held_to_level0();
    Ok(AccountLimits {
        account_id: account,
        kyc: kyc(tx, account).await?,
        limits: state.limits,
        overrides: overrides(tx, account).await?,
        usage: state.usage,
        held_to_level0: held,
    })
}

async fn blocklist<T: ReadTx>(tx: &T) -> Result<Vec<BlockEntry>, T::Error> {
    const COLUMNS: &str = "kind, value, reason, added_by, added_at";
    let sql = "SELECT kind, value, reason, added_by, added_at FROM blocklist ORDER BY added_at, kind, value";
    tx.query_all(sql, &[], |row| {
        let kind: String = row.get(col!("kind"))?;
        Ok(BlockEntry {
            kind: BlockKind::parse(&kind)
                .ok_or_else(|| StoreError::backend(format!("blocklist kind {kind:?}")))?,
            value: row.get(col!("value"))?,
            reason: row.get(col!("reason"))?,
            added_by: row.get(col!("added_by"))?,
            added_at: row.get(col!("added_at"))?,
        })
    })
    .await
}

/// The level and how it was reached; the line's `before` is the level before.
pub(crate) async fn set_kyc<T: Tx>(
    tx: &T,
    account: AccountId,
    change: &KycChange,
    log: &NewLogEntry,
) -> Result<Kyc, T::Error> {
    if !LEVELS.contains(&change.level) {
        return Err(StoreError::Invalid(format!("there is no level {}", change.level)).into());
    }
    let before = kyc(tx, account).await?;
    let id = account.to_string();
    tx.execute(
        "UPDATE accounts SET kyc_level = ?2 WHERE id = ?1",
        &[&id, &i32::from(change.level)],
    )
    .await?;
    record_kyc(tx, account, before.level, change, log).await
}

/// See [`crate::work::raise_kyc_logged`].
pub(crate) async fn raise_kyc<T: Tx>(
    tx: &T,
    account: AccountId,
    from: u8,
    change: &KycChange,
    log: &NewLogEntry,
) -> Result<Option<Kyc>, T::Error> {
    if !LEVELS.contains(&change.level) {
        return Err(StoreError::Invalid(format!("there is no level {}", change.level)).into());
    }
    let id = account.to_string();
    let changed = tx
        .execute(
            "UPDATE accounts SET kyc_level = ?2 WHERE id = ?1 AND kyc_level = ?3",
            &[&id, &i32::from(change.level), &i32::from(from)],
        )
        .await?;
    if changed == 0 {
        return Ok(None);
    }
    record_kyc(tx, account, from, change, log).await.map(Some)
}

/// How a level was reached and its log line (`before`: the level before),
/// after the level's own update.
async fn record_kyc<T: Tx>(
    tx: &T,
    account: AccountId,
    before: u8,
    change: &KycChange,
    log: &NewLogEntry,
) -> Result<Kyc, T::Error> {
    let id = account.to_string();
    tx.execute(
        "INSERT INTO account_kyc (account_id, method, last4, reason, set_by, set_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (account_id) DO UPDATE SET method = excluded.method,
             last4 = excluded.last4, reason = excluded.reason, set_by = excluded.set_by,
             set_at = excluded.set_at",
        &[
            &id,
            &change.method,
            &change.last4,
            &change.reason,
            &change.set_by,
            &now_rfc3339(),
        ],
    )
    .await?;
    let log = log.clone().with_before(&before.to_string());
    super::operators::append(tx, &log).await?;
    kyc(tx, account).await
}

/// See [`crate::work::start_identity_check`]: counted in the throttles'
/// table ([`super::throttles::take`], scope [`IDENTITY_CHECKS`], the
/// account's id, the Lagos day from `since`), every node's.
pub(crate) async fn start_identity_check<T: Tx>(
    tx: &T,
    account: AccountId,
    since: &str,
    most: u32,
    log: &NewLogEntry,
) -> Result<Option<u32>, T::Error> {
    let id = account.to_string();
    let exists = tx
        .query_opt("SELECT id FROM accounts WHERE id = ?1", &[&id], |_| Ok(()))
        .await?;
    if exists.is_none() {
        return Err(StoreError::NotFound("account").into());
    }
    let start = crate::clock::parse_rfc3339_ms(since)
        .ok_or_else(|| StoreError::Invalid(format!("not a time: {since}")))?;
    let end = start + DAY_MS;
    let taken = super::throttles::take(tx, IDENTITY_CHECKS, &id, most, start, end).await?;
    let super::throttles::Taken::Counted { tries } = taken else {
        return Ok(None);
    };
    let mut log = log.clone();
    log.action = IDENTITY_CHECK.to_owned();
    log.subject = id;
    super::operators::append(tx, &log).await?;
    Ok(Some(most.saturating_sub(tries)))
}

/// A Lagos day in ms (no daylight saving).
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

pub(crate) async fn set_level_limits<T: Tx>(
    tx: &T,
    level: u8,
    limits: &Limits,
    log: &NewLogEntry,
) -> Result<LevelLimits, T::Error> {
    let [v0, v1, v2, v3, v4, v5, v6, v7, v8, v9] = limit_params(limits);
    // A level always has an action: unset is refuse.
    let [a0, a1, a2, a3] = action_params(limits).map(|a| a.unwrap_or("refuse"));
    let level = i32::from(level);
    let changed = tx
        .execute(
            "UPDATE kyc_levels SET max_purchase = ?2, daily_value = ?3, daily_count = ?4,
                 monthly_value = ?5, monthly_count = ?6, max_balance = ?7,
                 per_recipient_daily = ?8, recipient_hourly_count = ?9,
                 account_hourly_count = ?10, first_day_value = ?11,
                 recipient_hourly_action = ?12, account_hourly_action = ?13,
                 first_day_action = ?14, over_balance_action = ?15 WHERE level = ?1",
            &[
                &level, &v0, &v1, &v2, &v3, &v4, &v5, &v6, &v7, &v8, &v9, &a0, &a1, &a2, &a3,
            ],
        )
        .await?;
    if changed == 0 {
        return Err(StoreError::Invalid(format!("there is no level {level}")).into());
    }
    super::operators::append(tx, log).await?;
    let all = levels(tx).await?;
    let found = all.into_iter().find(|l| i32::from(l.level) == level);
    Ok(found.ok_or(StoreError::NotFound("level"))?)
}

/// See [`crate::work::rename_level_logged`].
pub(crate) async fn rename_level<T: Tx>(
    tx: &T,
    level: u8,
    name: &str,
    log: &NewLogEntry,
) -> Result<LevelLimits, T::Error> {
    let length = name.chars().count();
    if name.trim().is_empty() || length > LEVEL_NAME_MAX {
        return Err(StoreError::Invalid(format!(
            "a level's name must be 1 to {LEVEL_NAME_MAX} characters"
        ))
        .into());
    }
    let all = levels(tx).await?;
    let before = all
        .into_iter()
        .find(|l| l.level == level)
        .ok_or(StoreError::NotFound("level"))?;
    tx.execute(
        "UPDATE kyc_levels SET name = ?2 WHERE level = ?1",
        &[&i32::from(level), &name],
    )
    .await?;
    let log = log.clone().with_before(&before.name);
    super::operators::append(tx, &log).await?;
    Ok(LevelLimits {
        name: name.to_owned(),
        ..before
    })
}

pub(crate) async fn set_account_limits<T: Tx>(
    tx: &T,
    account: AccountId,
    limits: &Limits,
    log: &NewLogEntry,
) -> Result<AccountLimits, T::Error> {
    let [v0, v1, v2, v3, v4, v5, v6, v7, v8, v9] = limit_params(limits);
    let [a0, a1, a2, a3] = action_params(limits);
    tx.execute(
        "INSERT INTO account_limits (account_id, max_purchase, daily_value, daily_count,
             monthly_value, monthly_count, max_balance, per_recipient_daily,
             recipient_hourly_count, account_hourly_count, first_day_value,
             recipient_hourly_action, account_hourly_action, first_day_action,
             over_balance_action)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
         ON CONFLICT (account_id) DO UPDATE SET max_purchase = excluded.max_purchase,
             daily_value = excluded.daily_value, daily_count = excluded.daily_count,
             monthly_value = excluded.monthly_value, monthly_count = excluded.monthly_count,
             max_balance = excluded.max_balance,
             per_recipient_daily = excluded.per_recipient_daily,
             recipient_hourly_count = excluded.recipient_hourly_count,
             account_hourly_count = excluded.account_hourly_count,
             first_day_value = excluded.first_day_value,
             recipient_hourly_action = excluded.recipient_hourly_action,
             account_hourly_action = excluded.account_hourly_action,
             first_day_action = excluded.first_day_action,
             over_balance_action = excluded.over_balance_action",
        &[
            &account.to_string(),
            &v0,
            &v1,
            &v2,
            &v3,
            &v4,
            &v5,
            &v6,
            &v7,
            &v8,
            &v9,
            &a0,
            &a1,
            &a2,
            &a3,
        ],
    )
    .await?;
    super::operators::append(tx, log).await?;
    view(tx, account).await
}

/// `false` when the entry was there already (it is left as it was).
pub(crate) async fn block<T: Tx>(
    tx: &T,
    entry: &BlockEntry,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let added = tx
        .execute(
            "INSERT INTO blocklist (kind, value, reason, added_by, added_at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (kind, value) DO NOTHING",
            &[
                &entry.kind.as_str(),
                &entry.value,
                &entry.reason,
                &entry.added_by,
                &now_rfc3339(),
            ],
        )
        .await?;
    if added == 1 {
        super::operators::append(tx, log).await?;
    }
    Ok(added == 1)
}

/// `false` when there was no such entry.
pub(crate) async fn unblock<T: Tx>(
    tx: &T,
    kind: BlockKind,
    value: &str,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let removed = tx
        .execute(
            "DELETE FROM blocklist WHERE kind = ?1 AND value = ?2",
            &[&kind.as_str(), &value],
        )
        .await?;
    if removed == 1 {
        super::operators::append(tx, log).await?;
    }
    Ok(removed == 1)
}

/// Test mode: a live purchase's checks in its order (reference, blocklist,
/// limits, balance), changing nothing; answers the balance. The reads and
/// the rules are placement's own (`purchases::place`).
pub(crate) async fn check_purchase<T: ReadTx>(
    tx: &T,
    account: AccountId,
    reference: &str,
    recipient: &str,
    amount: Kobo,
) -> Result<Kobo, T::Error> {
    let today = Today::now();
    let wallet = wallet_state(tx, account, &today).await?;
    let wallet = wallet.ok_or(StoreError::NotFound("account"))?;
    let purchase = (account, reference, recipient);
    let read = purchase_reads(tx, purchase, &today, wallet.reads).await?;
    if read.taken {
        return Err(Refusal::DuplicateReference.into());
    }
    let state = with_recipient(&wallet.state, read.recipient);
    check(&state, amount)?;
    // A purchase a rule would hold passes the check: it would be accepted.
    Ok(rules::check_purchase(state.balance, false, amount)?)
}

/// Held purchases still waiting for an owner, oldest first.
async fn held<T: ReadTx>(tx: &T, limit: u32) -> Result<Vec<Transaction>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {TX_COLUMNS} FROM transactions
             WHERE held_for IS NOT NULL AND status = 'processing'
             ORDER BY created_at LIMIT CAST(?1 AS BIGINT)"
        )
    });
    tx.query_all(&SQL, &[&i64::from(limit)], transaction).await
}

/// The rule holding `code`, its row locked until the transaction ends
/// (PostgreSQL's `FOR UPDATE`; SQLite's one writer holds every row);
/// `None` when it is not a held processing purchase (any more).
async fn still_held<T: Tx>(tx: &T, code: &str) -> Result<Option<String>, T::Error> {
    const COLUMNS: &str = "held_for";
    static SQL: PerEngine = PerEngine::new(|engine| {
        format!(
            "SELECT held_for FROM transactions
             WHERE code = ?1 AND status = 'processing' AND held_for IS NOT NULL{}",
            engine.for_update()
        )
    });
    tx.query_opt(SQL.sql(T::ENGINE), &[&code], |row| {
        row.get(col!("held_for"))
    })
    .await
}

/// Clears the hold and makes the purchase due now; the line's `before` is
/// the rule that held it.
pub(crate) async fn release<T: Tx>(
    tx: &T,
    code: &str,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let Some(rule) = still_held(tx, code).await? else {
        return Ok(false);
    };
    tx.execute(
        "UPDATE transactions SET held_for = NULL, next_attempt_at = ?2, lease_until = 0
         WHERE code = ?1",
        &[&code, &now_ms()],
    )
    .await?;
    super::operators::append(tx, &log.clone().with_before(&rule)).await?;
    super::notices::purchase_released(tx, code).await?;
    Ok(true)
}

/// The normal failure path (status, refund, webhook event, notice) for a
/// purchase still held, in the same transaction as the check and the line.
pub(crate) async fn reject<T: Tx>(
    tx: &T,
    code: &str,
    fin: &Finalization,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let Some(rule) = still_held(tx, code).await? else {
        return Ok(false);
    };
    let log = log.clone().with_before(&rule);
    super::fulfilment::finalize_logged(tx, code, fin, &log).await
}

/// A refunded purchase's usage given back, inside its refund's transaction
/// (the caller's finalize changed the purchase, once): its amount and one
/// count off the usage row of the Lagos day it was placed in, its amount off
/// its recipient's row of that day if there is one, neither below zero.
/// The hourly counts are kept: they count attempts, which the velocity
/// rules watch.
pub(crate) async fn give_back_usage<T: Statements>(
    tx: &T,
    refunded: &super::fulfilment::Finalized,
) -> Result<(), T::Error> {
    let Some(day) = crate::clock::lagos_day_of(&refunded.created_at) else {
        return Err(BackendError::new(format!(
            "unreadable created_at {:?} of {}",
            refunded.created_at, refunded.code
        ))
        .into());
    };
    let (account, day) = (refunded.account_id.to_string(), day.to_string());
    // "Not below zero" as a CASE, which both engines spell alike (SQLite has
    // no GREATEST, PostgreSQL no two-argument MAX).
    let day_sql = "UPDATE limit_usage
         SET value = CASE WHEN value > ?3 THEN value - ?3 ELSE 0 END,
             count = CASE WHEN count > 0 THEN count - 1 ELSE 0 END
         WHERE account_id = ?1 AND day = ?2";
    let recipient_sql = "UPDATE recipient_usage
         SET value = CASE WHEN value > ?4 THEN value - ?4 ELSE 0 END
         WHERE account_id = ?1 AND recipient = ?2 AND day = ?3";
    let amount = refunded.amount.0;
    tx.execute(day_sql, &[&account, &day, &amount]).await?;
    let params: [&dyn Param; 4] = [&account, &refunded.recipient, &day, &amount];
    tx.execute(recipient_sql, &params).await?;
    Ok(())
}

/// See [`LimitStore::prune_usage`]: four deletes in one transaction.
async fn prune_usage<T: Tx>(tx: &T, before_day: &str, before_hour: i64) -> Result<u64, T::Error> {
    let days = tx
        .execute("DELETE FROM limit_usage WHERE day < ?1", &[&before_day])
        .await?;
    let recipients = tx
        .execute("DELETE FROM recipient_usage WHERE day < ?1", &[&before_day])
        .await?;
    let hours = tx
        .execute("DELETE FROM hourly_usage WHERE hour < ?1", &[&before_hour])
        .await?;
    // the notices' hourly counts (`areas/notices.rs`), in the same clock
    // hours; not in the answer, which counts the limits' usage rows
    tx.execute("DELETE FROM notice_counts WHERE hour < ?1", &[&before_hour])
        .await?;
    Ok(days + recipients + hours)
}
