//! KYC levels, limits and the blocklist (issue 32): what a purchase is
//! checked against ([`state`], one statement), the check itself inside the
//! debit's transaction ([`check`]), the usage a purchase adds
//! ([`record_usage`]), and the operator's changes, each logged in the same
//! transaction. PostgreSQL's placement runs the same check in its one
//! statement (`billpay_place_limited_purchase`, migration 018).

use crate::clock::{lagos_today, now_rfc3339};
use crate::db::{Param, RowRead, Tx, col, for_both_engines};
use crate::limits::*;
use crate::*;
use billpay_domain::{AccountId, Kobo};

for_both_engines! {
    impl LimitStore {
        fn level_limits() -> Vec<LevelLimits> = read |tx| levels(tx);
        fn account_limits(account: AccountId) -> AccountLimits = read |tx| view(tx, account);
        fn blocklist() -> Vec<BlockEntry> = read |tx| blocklist(tx);
        fn set_kyc_logged(account: AccountId, change: KycChange, log: NewLogEntry) -> Kyc
            = write |tx| set_kyc(tx, account, &change, &log);
        fn set_level_limits_logged(level: u8, limits: Limits, log: NewLogEntry) -> LevelLimits
            = write |tx| set_level_limits(tx, level, &limits, &log);
        fn set_account_limits_logged(account: AccountId, limits: Limits, log: NewLogEntry)
            -> AccountLimits = write |tx| set_account_limits(tx, account, &limits, &log);
        fn block_logged(entry: BlockEntry, log: NewLogEntry) -> bool
            = write |tx| block(tx, &entry, &log);
        fn unblock_logged(kind: BlockKind, value: &str, log: NewLogEntry) -> bool
            = write |tx| unblock(tx, kind, &value, &log);
    }
}

const LIMIT_COLUMNS: &str = "max_purchase, daily_value, daily_count, monthly_value, \
                             monthly_count, max_balance, per_recipient_daily";

const STATE_COLUMNS: &str = "balance, level, max_purchase, daily_value, daily_count, \
    monthly_value, monthly_count, max_balance, per_recipient_daily, z_max_purchase, \
    z_daily_value, z_daily_count, z_monthly_value, z_monthly_count, z_per_recipient_daily, \
    day_value, day_count, month_value, month_count, recipient_today, blocked";

/// Everything a purchase of `account` to `recipient` is checked against:
/// ?1 account, ?2 today (Lagos), ?3 the 30-day window's first day, ?4 recipient.
const STATE: &str = "
SELECT a.balance AS balance, a.kyc_level AS level,
    COALESCE(o.max_purchase, k.max_purchase) AS max_purchase,
    COALESCE(o.daily_value, k.daily_value) AS daily_value,
    COALESCE(o.daily_count, k.daily_count) AS daily_count,
    COALESCE(o.monthly_value, k.monthly_value) AS monthly_value,
    COALESCE(o.monthly_count, k.monthly_count) AS monthly_count,
    COALESCE(o.max_balance, k.max_balance) AS max_balance,
    COALESCE(o.per_recipient_daily, k.per_recipient_daily) AS per_recipient_daily,
    z.max_purchase AS z_max_purchase, z.daily_value AS z_daily_value,
    z.daily_count AS z_daily_count, z.monthly_value AS z_monthly_value,
    z.monthly_count AS z_monthly_count, z.per_recipient_daily AS z_per_recipient_daily,
    u.day_value AS day_value, u.day_count AS day_count,
    u.month_value AS month_value, u.month_count AS month_count,
    CAST(COALESCE((SELECT r.value FROM recipient_usage r WHERE r.account_id = a.id
        AND r.recipient = ?4 AND r.day = ?2), 0) AS BIGINT) AS recipient_today,
    (EXISTS (SELECT 1 FROM blocklist b WHERE b.kind = 'account' AND b.value = a.id)
        OR EXISTS (SELECT 1 FROM blocklist b WHERE b.kind = 'recipient' AND b.value = ?4))
        AS blocked
FROM accounts a
JOIN kyc_levels k ON k.level = a.kyc_level
JOIN kyc_levels z ON z.level = 0
LEFT JOIN account_limits o ON o.account_id = a.id
CROSS JOIN (SELECT
    CAST(COALESCE(SUM(CASE WHEN day = ?2 THEN value ELSE 0 END), 0) AS BIGINT) AS day_value,
    CAST(COALESCE(SUM(CASE WHEN day = ?2 THEN count ELSE 0 END), 0) AS BIGINT) AS day_count,
    CAST(COALESCE(SUM(value), 0) AS BIGINT) AS month_value,
    CAST(COALESCE(SUM(count), 0) AS BIGINT) AS month_count
    FROM limit_usage WHERE account_id = ?1 AND day >= ?3) u
WHERE a.id = ?1";

/// The state a purchase to `recipient` today is checked against.
pub(crate) async fn state<T: Tx>(
    tx: &T,
    account: AccountId,
    recipient: &str,
    today: &(String, String),
) -> Result<LimitState, T::Error> {
    let params: [&dyn Param; 4] = [&account.to_string(), &today.0, &today.1, &recipient];
    let found = tx.query_opt(STATE, &params, state_row).await?;
    Ok(found.ok_or(StoreError::NotFound("account"))?)
}

fn state_row(row: &dyn RowRead) -> StoreResult<LimitState> {
    const COLUMNS: &str = STATE_COLUMNS;
    Ok(LimitState {
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
        },
        level0: Limits {
            max_purchase: row.get(col!("z_max_purchase"))?,
            daily_value: row.get(col!("z_daily_value"))?,
            daily_count: row.get(col!("z_daily_count"))?,
            monthly_value: row.get(col!("z_monthly_value"))?,
            monthly_count: row.get(col!("z_monthly_count"))?,
            max_balance: None,
            per_recipient_daily: row.get(col!("z_per_recipient_daily"))?,
        },
        usage: Usage {
            daily_value: row.get(col!("day_value"))?,
            daily_count: row.get(col!("day_count"))?,
            monthly_value: row.get(col!("month_value"))?,
            monthly_count: row.get(col!("month_count"))?,
        },
        recipient_today: row.get(col!("recipient_today"))?,
        blocked: row.get(col!("blocked"))?,
    })
}

/// Today's usage key: (Lagos day, first day of its 30-day window).
pub(crate) fn today() -> (String, String) {
    usage_days(lagos_today())
}

/// Refuses a purchase of `amount` to `recipient` that is blocked or over a
/// limit; answers the balance. Inside the debit's transaction (SQLite's
/// writer holds every row; the test-mode check reads).
pub(crate) async fn check<T: Tx>(
    tx: &T,
    account: AccountId,
    recipient: &str,
    amount: Kobo,
    today: &(String, String),
) -> Result<Kobo, T::Error> {
    let state = state(tx, account, recipient, today).await?;
    if state.blocked {
        return Err(Refusal::Blocked.into());
    }
    if let Some(refusal) = state.refusal(amount) {
        return Err(Refusal::LimitExceeded(refusal).into());
    }
    Ok(state.balance)
}

/// Adds a placed purchase to its day's usage and its recipient's.
pub(crate) async fn record_usage<T: Tx>(
    tx: &T,
    account: AccountId,
    recipient: &str,
    amount: Kobo,
    day: &str,
) -> Result<(), T::Error> {
    let account = account.to_string();
    tx.execute(
        "INSERT INTO limit_usage (account_id, day, value, count) VALUES (?1, ?2, ?3, 1)
         ON CONFLICT (account_id, day) DO UPDATE SET
             value = limit_usage.value + excluded.value, count = limit_usage.count + 1",
        &[&account, &day, &amount.0],
    )
    .await?;
    tx.execute(
        "INSERT INTO recipient_usage (account_id, recipient, day, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (account_id, recipient, day) DO UPDATE SET
             value = recipient_usage.value + excluded.value",
        &[&account, &recipient, &day, &amount.0],
    )
    .await?;
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
    })
}

fn limit_params(limits: &Limits) -> [Option<i64>; 7] {
    [
        limits.max_purchase.map(|k| k.0),
        limits.daily_value.map(|k| k.0),
        limits.daily_count,
        limits.monthly_value.map(|k| k.0),
        limits.monthly_count,
        limits.max_balance.map(|k| k.0),
        limits.per_recipient_daily.map(|k| k.0),
    ]
}

async fn levels<T: Tx>(tx: &T) -> Result<Vec<LevelLimits>, T::Error> {
    let sql = format!("SELECT {LIMIT_COLUMNS}, level, name FROM kyc_levels ORDER BY level");
    tx.query_all(&sql, &[], |row| {
        const COLUMNS: &str = concat!(
            "max_purchase, daily_value, daily_count, monthly_value, ",
            "monthly_count, max_balance, per_recipient_daily, level, name"
        );
        Ok(LevelLimits {
            level: row.get(col!("level"))?,
            name: row.get(col!("name"))?,
            limits: limits_row(row)?,
        })
    })
    .await
}

async fn overrides<T: Tx>(tx: &T, account: AccountId) -> Result<Limits, T::Error> {
    let sql = format!("SELECT {LIMIT_COLUMNS} FROM account_limits WHERE account_id = ?1");
    let found = tx
        .query_opt(&sql, &[&account.to_string()], limits_row)
        .await?;
    Ok(found.unwrap_or_default())
}

async fn kyc<T: Tx>(tx: &T, account: AccountId) -> Result<Kyc, T::Error> {
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

async fn view<T: Tx>(tx: &T, account: AccountId) -> Result<AccountLimits, T::Error> {
    let state = state(tx, account, "", &today()).await?;
    let held = state
        .limits
        .max_balance
        .is_some_and(|cap| state.balance > cap);
    Ok(AccountLimits {
        account_id: account,
        kyc: kyc(tx, account).await?,
        limits: state.limits,
        overrides: overrides(tx, account).await?,
        usage: state.usage,
        held_to_level0: held,
    })
}

async fn blocklist<T: Tx>(tx: &T) -> Result<Vec<BlockEntry>, T::Error> {
    const COLUMNS: &str = "kind, value, reason, added_by, added_at";
    let sql = "SELECT kind, value, reason, added_by, added_at FROM blocklist ORDER BY added_at, kind, value";
    tx.query_all(sql, &[], |row| {
        let kind: String = row.get(col!("kind"))?;
        Ok(BlockEntry {
            kind: BlockKind::parse(&kind)
                .ok_or_else(|| StoreError::Backend(format!("blocklist kind {kind:?}")))?,
            value: row.get(col!("value"))?,
            reason: row.get(col!("reason"))?,
            added_by: row.get(col!("added_by"))?,
            added_at: row.get(col!("added_at"))?,
        })
    })
    .await
}

/// The level and how it was reached; the line's `before` is the level before.
async fn set_kyc<T: Tx>(
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
    let log = log.clone().with_before(&before.level.to_string());
    super::operators::append(tx, &log).await?;
    kyc(tx, account).await
}

async fn set_level_limits<T: Tx>(
    tx: &T,
    level: u8,
    limits: &Limits,
    log: &NewLogEntry,
) -> Result<LevelLimits, T::Error> {
    let values = limit_params(limits);
    let level = i32::from(level);
    let changed = tx
        .execute(
            "UPDATE kyc_levels SET max_purchase = ?2, daily_value = ?3, daily_count = ?4,
                 monthly_value = ?5, monthly_count = ?6, max_balance = ?7,
                 per_recipient_daily = ?8 WHERE level = ?1",
            &[
                &level, &values[0], &values[1], &values[2], &values[3], &values[4], &values[5],
                &values[6],
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

async fn set_account_limits<T: Tx>(
    tx: &T,
    account: AccountId,
    limits: &Limits,
    log: &NewLogEntry,
) -> Result<AccountLimits, T::Error> {
    let values = limit_params(limits);
    tx.execute(
        "INSERT INTO account_limits (account_id, max_purchase, daily_value, daily_count,
             monthly_value, monthly_count, max_balance, per_recipient_daily)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (account_id) DO UPDATE SET max_purchase = excluded.max_purchase,
             daily_value = excluded.daily_value, daily_count = excluded.daily_count,
             monthly_value = excluded.monthly_value, monthly_count = excluded.monthly_count,
             max_balance = excluded.max_balance,
             per_recipient_daily = excluded.per_recipient_daily",
        &[
            &account.to_string(),
            &values[0],
            &values[1],
            &values[2],
            &values[3],
            &values[4],
            &values[5],
            &values[6],
        ],
    )
    .await?;
    super::operators::append(tx, log).await?;
    view(tx, account).await
}

/// `false` when the entry was there already (it is left as it was).
async fn block<T: Tx>(tx: &T, entry: &BlockEntry, log: &NewLogEntry) -> Result<bool, T::Error> {
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
async fn unblock<T: Tx>(
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
/// limits, balance), changing nothing; answers the balance.
pub(crate) async fn check_purchase<T: Tx>(
    tx: &T,
    account: AccountId,
    reference: &str,
    recipient: &str,
    amount: Kobo,
) -> Result<Kobo, T::Error> {
    const COLUMNS: &str = "found";
    let sql = "SELECT EXISTS (SELECT 1 FROM transactions
                   WHERE account_id = ?1 AND reference = ?2) AS found";
    let used: bool = tx
        .query_one(sql, &[&account.to_string(), &reference], |row| {
            row.get(col!("found"))
        })
        .await?;
    if used {
        return Err(Refusal::DuplicateReference.into());
    }
    let balance = check(tx, account, recipient, amount, &today()).await?;
    Ok(rules::check_purchase(balance, false, amount)?)
}
