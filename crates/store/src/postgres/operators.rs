//! Operators, their console sessions, the append-only operator log, the
//! console's reads, and the operator's changes logged in their own transaction.

use super::PostgresStore;
use super::accounts::set_status_in;
use super::connection::{
    Params, PgTx, borrow, execute, map_opt, map_rows, query, query_one, query_opt,
};
use super::error::{PgError, PgResult};
use super::fulfilment::{FINALIZE, finalize_params};
use super::rows::{account, get};
use super::wallet::{balance_of, credit_in, post_entry, reference_seen};
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{ACCOUNT_COLUMNS, qualified};
use crate::operators::{LOG_COLUMNS, OPERATOR_COLUMNS, applied_balance_before, bad_column};
use crate::*;
use async_trait::async_trait;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::{Rule, Scope};
use billpay_domain::{AccountId, Kobo};
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

fn operator_row(row: &Row) -> PgResult<Operator> {
    let role: String = get(row, "role")?;
    let status: String = get(row, "status")?;
    Ok(Operator {
        id: get(row, "id")?,
        email: get(row, "email")?,
        role: role
            .parse()
            .map_err(|e| PgError::Store(bad_column("role", e)))?,
        status: status
            .parse()
            .map_err(|e| PgError::Store(bad_column("status", e)))?,
        password_hash: get(row, "password_hash")?,
        totp_secret_sealed: get(row, "totp_secret_sealed")?,
        created_at: get(row, "created_at")?,
    })
}

fn log_row(row: &Row) -> PgResult<LogEntry> {
    Ok(LogEntry {
        id: get(row, "id")?,
        at: get(row, "at")?,
        actor: get(row, "actor")?,
        operator_id: get(row, "operator_id")?,
        operator_email: get(row, "operator_email")?,
        action: get(row, "action")?,
        subject: get(row, "subject")?,
        before: get(row, "before_state")?,
        after: get(row, "after_state")?,
        reason: get(row, "reason")?,
    })
}

/// Appends a log line inside the caller's transaction.
pub(super) async fn append_in<C: GenericClient>(c: &C, log: &NewLogEntry) -> PgResult<()> {
    let sql = "INSERT INTO operator_log (at, actor, operator_id, operator_email, action, subject,
                   before_state, after_state, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
    let params: Params = &[
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
    execute(c, sql, params).await?;
    Ok(())
}

async fn operator_in<C: GenericClient>(c: &C, id: i64) -> PgResult<Option<Operator>> {
    let sql = format!("SELECT {OPERATOR_COLUMNS} FROM operators WHERE id = $1");
    map_opt(query_opt(c, &sql, &[&id]).await?, operator_row)
}

#[async_trait]
impl OperatorStore for PostgresStore {
    async fn create_operator(&self, new: NewOperator, log: NewLogEntry) -> StoreResult<Operator> {
        self.write(move |tx| {
            let (new, log) = (new.clone(), log.clone());
            Box::pin(async move {
                let sql = "INSERT INTO operators (email, role, status, password_hash, created_at)
                           VALUES ($1, $2, 'active', $3, $4) ON CONFLICT DO NOTHING RETURNING id";
                let params: Params = &[
                    &new.email,
                    &new.role.as_str(),
                    &new.password_hash,
                    &now_rfc3339(),
                ];
                let Some(row) = query_opt(tx, sql, params).await? else {
                    return Err(rules::email_taken(&new.email).into());
                };
                let id: i64 = get(&row, 0)?;
                append_in(tx, &log).await?;
                operator_in(tx, id)
                    .await?
                    .ok_or(StoreError::NotFound("operator").into())
            })
        })
        .await
    }

    async fn operator(&self, id: i64) -> StoreResult<Option<Operator>> {
        self.autocommit(|c| Box::pin(operator_in(c, id))).await
    }

    async fn operator_by_email(&self, email: &str) -> StoreResult<Option<Operator>> {
        let email = email.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {OPERATOR_COLUMNS} FROM operators WHERE lower(email) = lower($1)"
                );
                map_opt(query_opt(c, &sql, &[&email]).await?, operator_row)
            })
        })
        .await
    }

    async fn operators(&self) -> StoreResult<Vec<Operator>> {
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!("SELECT {OPERATOR_COLUMNS} FROM operators ORDER BY id");
                map_rows(query(c, &sql, &[]).await?, operator_row)
            })
        })
        .await
    }

    async fn update_operator(
        &self,
        id: i64,
        change: OperatorChange,
        log: NewLogEntry,
    ) -> StoreResult<Operator> {
        self.write(move |tx| {
            let (change, log) = (change.clone(), log.clone());
            Box::pin(async move {
                let (sql, value, ends_sessions) = match &change {
                    OperatorChange::Status(status) => (
                        "UPDATE operators SET status = $1 WHERE id = $2",
                        Some(status.as_str().to_owned()),
                        *status == OperatorStatus::Disabled,
                    ),
                    OperatorChange::PasswordHash(hash) => (
                        "UPDATE operators SET password_hash = $1 WHERE id = $2",
                        Some(hash.clone()),
                        true,
                    ),
                    OperatorChange::TotpSecretSealed(sealed) => (
                        "UPDATE operators SET totp_secret_sealed = $1 WHERE id = $2",
                        sealed.clone(),
                        false,
                    ),
                };
                if execute(tx, sql, &[&value, &id]).await? == 0 {
                    return Err(StoreError::NotFound("operator").into());
                }
                if ends_sessions {
                    let end = "DELETE FROM operator_sessions WHERE operator_id = $1";
                    execute(tx, end, &[&id]).await?;
                }
                append_in(tx, &log).await?;
                operator_in(tx, id)
                    .await?
                    .ok_or(StoreError::NotFound("operator").into())
            })
        })
        .await
    }

    async fn create_operator_session(
        &self,
        token_hash: &str,
        operator: i64,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.write(move |tx| {
            let token_hash = token_hash.clone();
            Box::pin(async move {
                let now = now_ms();
                let expired = "DELETE FROM operator_sessions WHERE expires_at < $1";
                execute(tx, expired, &[&now]).await?;
                let insert = "INSERT INTO operator_sessions
                                  (token_hash, operator_id, expires_at, last_seen_at, created_at)
                              VALUES ($1, $2, $3, $4, $5)";
                let params: Params =
                    &[&token_hash, &operator, &expires_at_ms, &now, &now_rfc3339()];
                execute(tx, insert, params).await?;
                Ok(())
            })
        })
        .await
    }

    async fn operator_session(&self, token_hash: &str) -> StoreResult<Option<OperatorSession>> {
        let token_hash = token_hash.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "SELECT operator_id, expires_at, last_seen_at FROM operator_sessions
                           WHERE token_hash = $1 AND expires_at > $2";
                let Some(row) = query_opt(c, sql, &[&token_hash, &now_ms()]).await? else {
                    return Ok(None);
                };
                Ok(Some(OperatorSession {
                    operator_id: get(&row, 0)?,
                    expires_at_ms: get(&row, 1)?,
                    last_seen_ms: get(&row, 2)?,
                }))
            })
        })
        .await
    }

    async fn touch_operator_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "UPDATE operator_sessions SET last_seen_at = $1 WHERE token_hash = $2";
                execute(c, sql, &[&now_ms(), &token_hash]).await?;
                Ok(())
            })
        })
        .await
    }

    async fn claim_totp_step(&self, operator: i64, step: u64) -> StoreResult<bool> {
        let step = i64::try_from(step).map_err(|_| StoreError::Invalid("TOTP step".into()))?;
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "UPDATE operators SET totp_step = $1
                           WHERE id = $2 AND (totp_step IS NULL OR totp_step < $1)";
                Ok(execute(c, sql, &[&step, &operator]).await? == 1)
            })
        })
        .await
    }

    async fn delete_operator_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "DELETE FROM operator_sessions WHERE token_hash = $1";
                execute(c, sql, &[&token_hash]).await?;
                Ok(())
            })
        })
        .await
    }

    async fn append_log(&self, log: NewLogEntry) -> StoreResult<()> {
        self.autocommit(|c| Box::pin(async move { append_in(c, &log).await }))
            .await
    }

    async fn operator_log(&self, filter: LogFilter) -> StoreResult<Vec<LogEntry>> {
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {LOG_COLUMNS} FROM operator_log
                     WHERE ($1::TEXT IS NULL OR subject = $1) AND ($2::BIGINT IS NULL OR operator_id = $2)
                     ORDER BY id DESC LIMIT $3 OFFSET $4"
                );
                let (limit, offset) = (i64::from(filter.limit), i64::from(filter.offset));
                let params: Params = &[&filter.subject, &filter.operator_id, &limit, &offset];
                map_rows(query(c, &sql, params).await?, log_row)
            })
        })
        .await
    }

    async fn search_accounts(&self, query_text: &str, limit: u32) -> StoreResult<Vec<Account>> {
        let query_text = query_text.trim().to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {} FROM accounts a WHERE a.id = $1
                       OR strpos(lower(a.name), lower($1)) > 0
                       OR strpos(lower(a.email), lower($1)) > 0
                       OR EXISTS (SELECT 1 FROM api_keys k WHERE k.account_id = a.id
                                  AND $1 <> '' AND left(k.display_prefix, length($1)) = $1)
                       OR EXISTS (SELECT 1 FROM funding_accounts f WHERE f.account_id = a.id
                                  AND f.account_number = $1)
                     ORDER BY a.created_at DESC, a.id LIMIT $2",
                    qualified(ACCOUNT_COLUMNS, "a")
                );
                let rows = query(c, &sql, &[&query_text, &i64::from(limit)]).await?;
                map_rows(rows, account)
            })
        })
        .await
    }

    async fn account_names(
        &self,
        ids: &[AccountId],
    ) -> StoreResult<std::collections::HashMap<AccountId, String>> {
        let mut ids: Vec<String> = ids.iter().map(AccountId::to_string).collect();
        ids.sort();
        ids.dedup();
        if ids.is_empty() {
            return Ok(Default::default());
        }
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "SELECT id, name FROM accounts WHERE id = ANY($1)";
                let rows = query(c, sql, &[&ids]).await?;
                let mut names = std::collections::HashMap::new();
                for row in rows {
                    let id: String = get(&row, 0)?;
                    if let Ok(id) = id.parse() {
                        names.insert(id, get(&row, 1)?);
                    }
                }
                Ok(names)
            })
        })
        .await
    }

    async fn last_plan_costs(&self) -> StoreResult<Vec<PlanCost>> {
        self.autocommit(|c| {
            Box::pin(async move {
                let rows = query(c, crate::operators::LAST_PLAN_COSTS, &[]).await?;
                let costs = map_rows(rows, |row| {
                    Ok(PlanCost {
                        provider: get(row, 0)?,
                        plan_id: get(row, 1)?,
                        cost: Kobo(get(row, 2)?),
                        at: get(row, 3)?,
                    })
                })?;
                Ok(crate::operators::first_per_plan(costs))
            })
        })
        .await
    }

    async fn sales_summary(&self, since: &str) -> StoreResult<SalesSummary> {
        let since = since.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let row = query_one(c, crate::operators::SALES_SUMMARY, &[&since]).await?;
                Ok(SalesSummary {
                    successful_count: get::<i64>(&row, 0)? as u64,
                    successful_value: get(&row, 1)?,
                    failed_count: get::<i64>(&row, 2)? as u64,
                    refunded_value: get(&row, 3)?,
                    processing_count: get::<i64>(&row, 4)? as u64,
                })
            })
        })
        .await
    }

    async fn supplier_outcomes(&self, since: &str) -> StoreResult<Vec<SupplierOutcome>> {
        static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            let final_ms =
                "EXTRACT(EPOCH FROM (completed_at::timestamptz - created_at::timestamptz)) * 1000";
            crate::operators::SUPPLIER_OUTCOMES.replace("{final_ms}", final_ms)
        });
        let since = since.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let rows = query(c, &SQL, &[&since]).await?;
                map_rows(rows, supplier_outcome)
            })
        })
        .await
    }
}

fn supplier_outcome(row: &Row) -> PgResult<SupplierOutcome> {
    let status: String = get(row, 1)?;
    Ok(SupplierOutcome {
        supplier: get(row, 0)?,
        status: status
            .parse()
            .map_err(|_| PgError::Store(bad_column("status", status.clone())))?,
        count: get::<i64>(row, 2)? as u64,
        mean_final_ms: get(row, 3)?,
    })
}

#[async_trait]
impl LoggedStore for PostgresStore {
    async fn credit_logged(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
        log: NewLogEntry,
    ) -> StoreResult<Credit> {
        let reference = reference.to_owned();
        self.write(move |tx| {
            let (reference, log) = (reference.clone(), log.clone());
            Box::pin(async move {
                let source = CreditSource::Operator;
                let credit = credit_in(tx, account, amount, source, &reference).await?;
                if credit.applied {
                    let before = applied_balance_before(&credit, amount);
                    append_in(tx, &log.with_balances(before, credit.balance)).await?;
                }
                Ok(credit)
            })
        })
        .await
    }

    async fn debit_logged(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
        log: NewLogEntry,
    ) -> StoreResult<Credit> {
        let reference = reference.to_owned();
        self.write(move |tx| {
            let (reference, log) = (reference.clone(), log.clone());
            Box::pin(async move { debit_in(tx, account, amount, &reference, log).await })
        })
        .await
    }

    async fn set_account_status_logged(
        &self,
        account: AccountId,
        status: AccountStatus,
        log: NewLogEntry,
    ) -> StoreResult<()> {
        self.write(move |tx| {
            let log = log.clone();
            Box::pin(async move {
                let sql = "SELECT status FROM accounts WHERE id = $1 FOR UPDATE";
                let Some(row) = query_opt(tx, sql, &[&account.to_string()]).await? else {
                    return Err(StoreError::NotFound("account").into());
                };
                let before: String = get(&row, 0)?;
                set_status_in(tx, account, status).await?;
                append_in(tx, &log.with_before(&before)).await
            })
        })
        .await
    }

    /// The worker's one-statement finalize, here in a transaction with the log line.
    async fn finalize_logged(
        &self,
        code: &str,
        fin: Finalization,
        log: NewLogEntry,
    ) -> StoreResult<bool> {
        let code = code.to_owned();
        self.write(move |tx| {
            let (code, fin, log) = (code.clone(), fin.clone(), log.clone());
            Box::pin(async move {
                let params = finalize_params(&code, &fin);
                let row = query_one(tx, &FINALIZE, &borrow(&params)).await?;
                let (found, changed): (bool, i64) = (get(&row, 0)?, get(&row, 1)?);
                if !found {
                    return Err(StoreError::NotFound("transaction").into());
                }
                if changed > 0 {
                    append_in(tx, &log).await?;
                }
                Ok(changed > 0)
            })
        })
        .await
    }

    async fn set_account_tier_logged(
        &self,
        account: AccountId,
        tier: Option<&str>,
        log: NewLogEntry,
    ) -> StoreResult<()> {
        self.set_account_tier_with(account, tier, Some(log)).await
    }

    async fn set_catalogue_active_logged(
        &self,
        target: &str,
        active: bool,
        log: NewLogEntry,
    ) -> StoreResult<String> {
        self.set_catalogue_active_with(target, active, Some(log))
            .await
    }

    async fn create_api_key_logged(&self, new: NewApiKey, log: NewLogEntry) -> StoreResult<ApiKey> {
        self.create_api_key_with(new, Some(log)).await
    }

    async fn update_api_key_logged(
        &self,
        id: KeyId,
        change: KeyChange,
        log: NewLogEntry,
    ) -> StoreResult<ApiKey> {
        self.update_api_key_with(id, change, Some(log)).await
    }

    async fn create_account_logged(
        &self,
        new: NewAccount,
        log: NewLogEntry,
    ) -> StoreResult<Account> {
        self.create_account_with(new, Some(log)).await
    }

    async fn replace_catalogue_logged(
        &self,
        catalogue: &Catalogue,
        log: NewLogEntry,
    ) -> StoreResult<()> {
        self.replace_catalogue_with(catalogue, Some(log)).await
    }

    async fn create_tier_logged(&self, name: &str, log: NewLogEntry) -> StoreResult<()> {
        self.create_tier_with(name, Some(log)).await
    }

    async fn set_price_rule_logged(
        &self,
        tier: &str,
        scope: Scope,
        rule: Option<Rule>,
        log: NewLogEntry,
    ) -> StoreResult<bool> {
        self.set_price_rule_with(tier, scope, rule, Some(log)).await
    }
}

async fn debit_in(
    tx: &PgTx<'_>,
    account: AccountId,
    amount: Kobo,
    reference: &str,
    log: NewLogEntry,
) -> PgResult<Credit> {
    let balance = balance_of(tx, account, true).await?;
    let source = CreditSource::Operator;
    if reference_seen(tx, account, source, reference).await? {
        return Ok(Credit {
            balance,
            applied: false,
        });
    }
    let moved = Kobo(-amount.0);
    let after = post_entry(tx, account, moved, LedgerKind::Debit, source, reference).await?;
    append_in(tx, &log.with_balances(balance, after)).await?;
    Ok(Credit {
        balance: after,
        applied: true,
    })
}
