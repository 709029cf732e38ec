//! Operators, their console sessions, the append-only operator log, and the
//! console's reads.

use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{ACCOUNT_COLUMNS, qualified};
use crate::db::{
    Column, Engine, One, Param, PerEngine, ReadTx, RowRead, Tx, col, for_both_engines, json_list,
    json_values,
};
use crate::listing::{Filters, Listing};
use crate::operators::{
    LAST_PLAN_COSTS, LOG_COLUMNS, OPERATOR_COLUMNS, SUPPLIER_OUTCOMES, first_per_plan,
};
use crate::rows::account;
use crate::*;
use billpay_domain::AccountId;
use std::collections::HashMap;
use std::sync::LazyLock;

for_both_engines! {
    /// Operators (not customers), their console sessions, the append-only
    /// operator log, and the reads only the console makes.
    pub trait OperatorStore {
        fn operator(id: i64) -> Option<Operator> = read |tx| by_id(tx, id);
        /// Case-insensitive.
        fn operator_by_email(email: &str) -> Option<Operator> = read |tx| by_email(tx, &email);
        fn operators() -> Vec<Operator> = read |tx| all(tx);
        /// Stores a session, dropping the expired ones first.
        fn create_operator_session(token_hash: &str, operator: i64, expires_at_ms: i64) -> ()
            = write |tx| create_session(tx, &token_hash, operator, expires_at_ms);
        /// The unexpired session with this token hash (idle or not: the caller decides).
        fn operator_session(token_hash: &str) -> Option<OperatorSession>
            = read |tx| session(tx, &token_hash);
        /// Records a request on the session now (the idle timeout restarts).
        fn touch_operator_session(token_hash: &str) -> () = statement |tx| touch(tx, &token_hash);
        fn delete_operator_session(token_hash: &str) -> ()
            = statement |tx| delete_session(tx, &token_hash);
        /// Takes TOTP time step `step` for `operator` if it is later than the
        /// last one taken: true once per step, whichever node asks.
        fn claim_totp_step(operator: i64, step: u64) -> bool
            = statement |tx| claim_totp_step(tx, operator, step);
        /// A log line for an action whose change the store makes elsewhere.
        fn append_log(log: NewLogEntry) -> () = statement |tx| append(tx, &log);
        /// Newest first.
        fn operator_log(filter: LogFilter) -> Vec<LogEntry> = read |tx| log(tx, &filter);
        /// Accounts whose id, key prefix, virtual (funding) account number, or
        /// purchase's reference or code is `query`, whose phone (given or
        /// proven) is `query` in any spelling (`0803…`, spaces, `+234…`,
        /// `234…`), or whose name or email contains it (case-insensitive);
        /// newest first.
        fn search_accounts(query: &str, limit: u32) -> Vec<Account>
            = read |tx| search_accounts(tx, query.trim(), limit);
        /// The names of the accounts among `ids` (one query, however many ids;
        /// an id with no account is left out): the console shows names, not ids.
        fn account_names(ids: &[AccountId]) -> HashMap<AccountId, String>
            = read |tx| account_names(tx, &ids);
        /// Per data or cable plan, the supplier cost of its most recent successful
        /// purchase whose cost is known (docs/pricing.md, "Supplier cost").
        fn last_plan_costs() -> Vec<PlanCost> = read |tx| last_plan_costs(tx);
        /// Purchases placed since `since` (RFC 3339, an hour's start), by
        /// outcome: the final ones from the sales rollup.
        fn sales_summary(since: &str) -> SalesSummary = read |tx| super::sales_rollup::summary(tx, &since);
        /// Purchases placed since `since` (RFC 3339), by supplier and outcome.
        fn supplier_outcomes(since: &str) -> Vec<SupplierOutcome>
            = read |tx| supplier_outcomes(tx, &since);
    }
}

fn operator_row(row: &dyn RowRead) -> StoreResult<Operator> {
    const COLUMNS: &str = OPERATOR_COLUMNS;
    Ok(Operator {
        id: row.get(col!("id"))?,
        email: row.get(col!("email"))?,
        role: row.parsed(col!("role"))?,
        status: row.parsed(col!("status"))?,
        password_hash: row.get(col!("password_hash"))?,
        totp_secret_sealed: row.get(col!("totp_secret_sealed"))?,
        created_at: row.get(col!("created_at"))?,
    })
}

fn log_row(row: &dyn RowRead) -> StoreResult<LogEntry> {
    const COLUMNS: &str = LOG_COLUMNS;
    Ok(LogEntry {
        id: row.get(col!("id"))?,
        at: row.get(col!("at"))?,
        actor: row.get(col!("actor"))?,
        operator_id: row.get(col!("operator_id"))?,
        operator_email: row.get(col!("operator_email"))?,
        action: row.get(col!("action"))?,
        subject: row.get(col!("subject"))?,
        before: row.get(col!("before_state"))?,
        after: row.get(col!("after_state"))?,
        reason: row.get(col!("reason"))?,
    })
}

pub(crate) async fn create<T: Tx>(
    tx: &T,
    new: &NewOperator,
    log: &NewLogEntry,
) -> Result<Operator, T::Error> {
    let sql = "INSERT INTO operators (email, role, status, password_hash, created_at)
               VALUES (?1, ?2, 'active', ?3, ?4) ON CONFLICT DO NOTHING RETURNING id";
    let params: [&dyn Param; 4] = [
        &new.email,
        &new.role.as_str(),
        &new.password_hash,
        &now_rfc3339(),
    ];
    let id = tx
        .query_opt(sql, &params, |row| row.get::<i64>(col!("id", "id")))
        .await?;
    let id = id.ok_or_else(|| rules::email_taken(&new.email))?;
    append(tx, log).await?;
    Ok(by_id(tx, id)
        .await?
        .ok_or(StoreError::NotFound("operator"))?)
}

async fn by_id<T: ReadTx>(tx: &T, id: i64) -> Result<Option<Operator>, T::Error> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {OPERATOR_COLUMNS} FROM operators WHERE id = ?1"));
    tx.query_opt(&SQL, &[&id], operator_row).await
}

async fn by_email<T: ReadTx>(tx: &T, email: &str) -> Result<Option<Operator>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT {OPERATOR_COLUMNS} FROM operators WHERE lower(email) = lower(?1)")
    });
    tx.query_opt(&SQL, &[&email], operator_row).await
}

async fn all<T: ReadTx>(tx: &T) -> Result<Vec<Operator>, T::Error> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {OPERATOR_COLUMNS} FROM operators ORDER BY id"));
    tx.query_all(&SQL, &[], operator_row).await
}

/// With its log line; disabling or a new password ends the operator's sessions.
pub(crate) async fn update<T: Tx>(
    tx: &T,
    id: i64,
    change: &OperatorChange,
    log: &NewLogEntry,
) -> Result<Operator, T::Error> {
    let (sql, value, ends_sessions) = match change {
        OperatorChange::Status(status) => (
            "UPDATE operators SET status = ?1 WHERE id = ?2",
            Some(status.as_str().to_owned()),
            *status == OperatorStatus::Disabled,
        ),
        OperatorChange::PasswordHash(hash) => (
            "UPDATE operators SET password_hash = ?1 WHERE id = ?2",
            Some(hash.clone()),
            true,
        ),
        OperatorChange::TotpSecretSealed(sealed) => (
            "UPDATE operators SET totp_secret_sealed = ?1 WHERE id = ?2",
            sealed.clone(),
            false,
        ),
    };
    if tx.execute(sql, &[&value, &id]).await? == 0 {
        return Err(StoreError::NotFound("operator").into());
    }
    if ends_sessions {
        let end = "DELETE FROM operator_sessions WHERE operator_id = ?1";
        tx.execute(end, &[&id]).await?;
    }
    append(tx, log).await?;
    Ok(by_id(tx, id)
        .await?
        .ok_or(StoreError::NotFound("operator"))?)
}

async fn create_session<T: Tx>(
    tx: &T,
    token_hash: &str,
    operator: i64,
    expires_at_ms: i64,
) -> Result<(), T::Error> {
    let now = now_ms();
    let expired = "DELETE FROM operator_sessions WHERE expires_at < ?1";
    tx.execute(expired, &[&now]).await?;
    let insert = "INSERT INTO operator_sessions
                      (token_hash, operator_id, expires_at, last_seen_at, created_at)
                  VALUES (?1, ?2, ?3, ?4, ?5)";
    let params: [&dyn Param; 5] = [&token_hash, &operator, &expires_at_ms, &now, &now_rfc3339()];
    tx.execute(insert, &params).await?;
    Ok(())
}

async fn session<T: ReadTx>(tx: &T, token_hash: &str) -> Result<Option<OperatorSession>, T::Error> {
    const COLUMNS: &str = "operator_id, expires_at, last_seen_at";
    let sql = "SELECT operator_id, expires_at, last_seen_at FROM operator_sessions
               WHERE token_hash = ?1 AND expires_at > ?2";
    tx.query_opt(sql, &[&token_hash, &now_ms()], |row| {
        Ok(OperatorSession {
            operator_id: row.get(col!("operator_id"))?,
            expires_at_ms: row.get(col!("expires_at"))?,
            last_seen_ms: row.get(col!("last_seen_at"))?,
        })
    })
    .await
}

async fn touch<T: Tx>(tx: One<'_, T>, token_hash: &str) -> Result<(), T::Error> {
    let sql = "UPDATE operator_sessions SET last_seen_at = ?1 WHERE token_hash = ?2";
    tx.execute(sql, &[&now_ms(), &token_hash]).await?;
    Ok(())
}

async fn delete_session<T: Tx>(tx: One<'_, T>, token_hash: &str) -> Result<(), T::Error> {
    let sql = "DELETE FROM operator_sessions WHERE token_hash = ?1";
    tx.execute(sql, &[&token_hash]).await?;
    Ok(())
}

async fn claim_totp_step<T: Tx>(
    tx: One<'_, T>,
    operator: i64,
    step: u64,
) -> Result<bool, T::Error> {
    let step = i64::try_from(step).map_err(|_| StoreError::Invalid("TOTP step".into()))?;
    let sql = "UPDATE operators SET totp_step = ?1
               WHERE id = ?2 AND (totp_step IS NULL OR totp_step < ?1)";
    Ok(tx.execute(sql, &[&step, &operator]).await? == 1)
}

async fn log<T: ReadTx>(tx: &T, filter: &LogFilter) -> Result<Vec<LogEntry>, T::Error> {
    let listing = log_listing(filter);
    tx.query_all(&listing.sql, &listing.params(), log_row).await
}

/// The listing's statement: only the filters set (`crate::listing`).
pub(crate) fn log_listing(filter: &LogFilter) -> Listing {
    Filters::default()
        .and("subject = ?", filter.subject.clone())
        .and("operator_id = ?", filter.operator_id)
        .page(
            &format!("SELECT {LOG_COLUMNS} FROM operator_log"),
            "ORDER BY id DESC",
            filter.limit,
            Some(filter.offset),
        )
}

/// Accounts by id, key prefix, funding account number, a purchase's
/// reference or code (each through the account's own index), phone, or
/// whose name or e-mail contains `query` in any case; the engines spell
/// "contains" and "starts with" their own way. A customer who calls is
/// found by the number they call from, however it is written: the query
/// read as a phone gives the stored forms (`0803…` on the account,
/// `234…` for a proven one).
async fn search_accounts<T: ReadTx>(
    tx: &T,
    query: &str,
    limit: u32,
) -> Result<Vec<Account>, T::Error> {
    fn sql(contains: &str, prefix: &str) -> String {
        format!(
            "SELECT {} FROM accounts a WHERE a.id = ?1
               OR {contains}(lower(a.name), lower(?1)) > 0
               OR {contains}(lower(a.email), lower(?1)) > 0
               OR (?3 <> '' AND a.phone = ?3)
               OR EXISTS (SELECT 1 FROM notice_preferences p WHERE p.account_id = a.id
                          AND ?4 <> '' AND p.phone = ?4)
               OR EXISTS (SELECT 1 FROM api_keys k WHERE k.account_id = a.id
                          AND ?1 <> '' AND {prefix} = ?1)
               OR EXISTS (SELECT 1 FROM funding_accounts f WHERE f.account_id = a.id
                          AND f.account_number = ?1)
               OR EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = a.id
                          AND t.reference = ?1)
               OR EXISTS (SELECT 1 FROM transactions t WHERE t.code = ?1
                          AND t.account_id = a.id)
             ORDER BY a.created_at DESC, a.id LIMIT CAST(?2 AS BIGINT)",
            qualified(ACCOUNT_COLUMNS, "a")
        )
    }
    static SQL: PerEngine = PerEngine::new(|engine| match engine {
        Engine::Sqlite => sql("instr", "substr(k.display_prefix, 1, length(?1))"),
        Engine::Postgres => sql("strpos", "left(k.display_prefix, length(?1))"),
    });
    let sql = SQL.sql(T::ENGINE);
    let phone = billpay_domain::phone::Phone::parse(query).map(|p| p.as_str().to_owned());
    let local = phone.clone().unwrap_or_default();
    let international = phone.map(|p| format!("234{}", &p[1..])).unwrap_or_default();
    let params: [&dyn Param; 4] = [&query, &i64::from(limit), &local, &international];
    tx.query_all(sql, &params, account).await
}

/// The names of the accounts among `ids`, in one query: the ids go as one
/// JSON list (`db::json_values`: each engine reads one its own way).
async fn account_names<T: ReadTx>(
    tx: &T,
    ids: &[AccountId],
) -> Result<HashMap<AccountId, String>, T::Error> {
    let mut ids: Vec<String> = ids.iter().map(AccountId::to_string).collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    static SQL: PerEngine = PerEngine::new(|engine| {
        let ids = json_values(engine, "?1");
        format!("SELECT id, name FROM accounts WHERE id IN ({ids})")
    });
    let list = json_list(&ids)?;
    const COLUMNS: &str = "id, name";
    let rows = tx
        .query_all(SQL.sql(T::ENGINE), &[&list], |row| {
            Ok((
                row.get::<String>(col!("id"))?,
                row.get::<String>(col!("name"))?,
            ))
        })
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, name)| Some((id.parse().ok()?, name)))
        .collect())
}

async fn last_plan_costs<T: ReadTx>(tx: &T) -> Result<Vec<PlanCost>, T::Error> {
    const COLUMNS: &str = "provider, plan_id, cost, completed_at";
    let rows = tx
        .query_all(LAST_PLAN_COSTS, &[], |row| {
            Ok(PlanCost {
                provider: row.get(col!("provider"))?,
                plan_id: row.get(col!("plan_id"))?,
                cost: row.get(col!("cost"))?,
                at: row.get(col!("completed_at"))?,
            })
        })
        .await?;
    Ok(first_per_plan(rows))
}

/// The engines compute a purchase's time to its final status their own way.
async fn supplier_outcomes<T: ReadTx>(
    tx: &T,
    since: &str,
) -> Result<Vec<SupplierOutcome>, T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| {
        let final_ms = match engine {
            Engine::Sqlite => "(julianday(completed_at) - julianday(created_at)) * 86400000.0",
            Engine::Postgres => {
                "EXTRACT(EPOCH FROM (completed_at::timestamptz - created_at::timestamptz)) * 1000"
            }
        };
        SUPPLIER_OUTCOMES.replace("{final_ms}", final_ms)
    });
    let sql = SQL.sql(T::ENGINE);
    tx.query_all(sql, &[&since], |row| {
        Ok(SupplierOutcome {
            supplier: row.get(Column::nth(0))?,
            status: row.parsed(Column::nth(1))?,
            count: row.get(Column::nth(2))?,
            mean_final_ms: row.get(Column::nth(3))?,
        })
    })
    .await
}

/// Appends a log line inside the caller's transaction.
pub(crate) async fn append<'a, T: Tx + 'a>(
    tx: impl Into<One<'a, T>>,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    let tx: One<'a, T> = tx.into();
    let sql = "INSERT INTO operator_log (at, actor, operator_id, operator_email, action, subject,
                   before_state, after_state, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    let params: [&dyn Param; 9] = [
        &now_rfc3339(),
        &log.actor,
        &log.operator_id,
        &log.operator_email,
        &log.action,
        &log.subject,
        &log.before,
        &log.after,
        &log.reason,
    ];
    tx.execute(sql, &params).await?;
    Ok(())
}
