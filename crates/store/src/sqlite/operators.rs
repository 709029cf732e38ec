//! Operators, their console sessions, the append-only operator log, the
//! console's reads, and the operator's changes logged in their own transaction.

use super::SqliteStore;
use super::accounts::set_status_in;
use super::fulfilment::finalize_in;
use super::rows::account;
use super::statements::{collect, execute, query_row};
use super::wallet::{Entry, balance_of, credit_in, post_ledger, reference_seen};
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{ACCOUNT_COLUMNS, qualified};
use crate::operators::{LOG_COLUMNS, OPERATOR_COLUMNS, applied_balance_before, bad_column};
use crate::*;
use async_trait::async_trait;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::{Rule, Scope};
use billpay_domain::{AccountId, Kobo};
use rusqlite::{Connection, OptionalExtension, Row, params};

fn operator_row(row: &Row) -> rusqlite::Result<Operator> {
    let text = |column: &str| row.get::<_, String>(column);
    let conversion = |column: &str, e: String| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            bad_column(column, e).into(),
        )
    };
    Ok(Operator {
        id: row.get("id")?,
        email: text("email")?,
        role: text("role")?.parse().map_err(|e| conversion("role", e))?,
        status: text("status")?
            .parse()
            .map_err(|e| conversion("status", e))?,
        password_hash: text("password_hash")?,
        totp_secret_sealed: row.get("totp_secret_sealed")?,
        created_at: text("created_at")?,
    })
}

fn log_row(row: &Row) -> rusqlite::Result<LogEntry> {
    Ok(LogEntry {
        id: row.get("id")?,
        at: row.get("at")?,
        actor: row.get("actor")?,
        operator_id: row.get("operator_id")?,
        operator_email: row.get("operator_email")?,
        action: row.get("action")?,
        subject: row.get("subject")?,
        before: row.get("before_state")?,
        after: row.get("after_state")?,
        reason: row.get("reason")?,
    })
}

/// Appends a log line inside the caller's transaction.
pub(super) fn append_in(conn: &Connection, log: &NewLogEntry) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO operator_log (at, actor, operator_id, operator_email, action, subject,
             before_state, after_state, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            now_rfc3339(),
            log.actor,
            log.operator_id,
            log.operator_email,
            log.action,
            log.subject,
            log.before,
            log.after,
            log.reason
        ],
    )?;
    Ok(())
}

fn operator_in(conn: &Connection, id: i64) -> StoreResult<Option<Operator>> {
    let sql = format!("SELECT {OPERATOR_COLUMNS} FROM operators WHERE id = ?1");
    Ok(query_row(conn, &sql, [id], operator_row).optional()?)
}

#[async_trait]
impl OperatorStore for SqliteStore {
    async fn create_operator(&self, new: NewOperator, log: NewLogEntry) -> StoreResult<Operator> {
        self.engine
            .write(move |conn| {
                let id: Option<i64> = query_row(
                    conn,
                    "INSERT INTO operators (email, role, status, password_hash, created_at)
                     VALUES (?1, ?2, 'active', ?3, ?4) ON CONFLICT DO NOTHING RETURNING id",
                    params![
                        new.email,
                        new.role.as_str(),
                        new.password_hash,
                        now_rfc3339()
                    ],
                    |r| r.get(0),
                )
                .optional()?;
                let id = id.ok_or_else(|| rules::email_taken(&new.email))?;
                append_in(conn, &log)?;
                operator_in(conn, id)?.ok_or(StoreError::NotFound("operator"))
            })
            .await
    }

    async fn operator(&self, id: i64) -> StoreResult<Option<Operator>> {
        self.engine.read(move |conn| operator_in(conn, id)).await
    }

    async fn operator_by_email(&self, email: &str) -> StoreResult<Option<Operator>> {
        let email = email.to_owned();
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {OPERATOR_COLUMNS} FROM operators WHERE lower(email) = lower(?1)"
                );
                Ok(query_row(conn, &sql, [email], operator_row).optional()?)
            })
            .await
    }

    async fn operators(&self) -> StoreResult<Vec<Operator>> {
        self.engine
            .read(|conn| {
                let sql = format!("SELECT {OPERATOR_COLUMNS} FROM operators ORDER BY id");
                collect(conn, &sql, [], operator_row)
            })
            .await
    }

    async fn update_operator(
        &self,
        id: i64,
        change: OperatorChange,
        log: NewLogEntry,
    ) -> StoreResult<Operator> {
        self.engine
            .write(move |conn| {
                let (sql, value, ends_sessions) = match &change {
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
                if execute(conn, sql, params![value, id])? == 0 {
                    return Err(StoreError::NotFound("operator"));
                }
                if ends_sessions {
                    execute(
                        conn,
                        "DELETE FROM operator_sessions WHERE operator_id = ?1",
                        [id],
                    )?;
                }
                append_in(conn, &log)?;
                operator_in(conn, id)?.ok_or(StoreError::NotFound("operator"))
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
        self.engine
            .write(move |conn| {
                let now = now_ms();
                execute(conn, "DELETE FROM operator_sessions WHERE expires_at < ?1", [now])?;
                execute(
                    conn,
                    "INSERT INTO operator_sessions (token_hash, operator_id, expires_at, last_seen_at, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![token_hash, operator, expires_at_ms, now, now_rfc3339()],
                )?;
                Ok(())
            })
            .await
    }

    async fn operator_session(&self, token_hash: &str) -> StoreResult<Option<OperatorSession>> {
        let token_hash = token_hash.to_owned();
        self.engine
            .read(move |conn| {
                let sql = "SELECT operator_id, expires_at, last_seen_at FROM operator_sessions
                           WHERE token_hash = ?1 AND expires_at > ?2";
                let row = |r: &Row| {
                    Ok(OperatorSession {
                        operator_id: r.get(0)?,
                        expires_at_ms: r.get(1)?,
                        last_seen_ms: r.get(2)?,
                    })
                };
                Ok(query_row(conn, sql, params![token_hash, now_ms()], row).optional()?)
            })
            .await
    }

    async fn touch_operator_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.engine
            .write(move |conn| {
                let sql = "UPDATE operator_sessions SET last_seen_at = ?1 WHERE token_hash = ?2";
                execute(conn, sql, params![now_ms(), token_hash])?;
                Ok(())
            })
            .await
    }

    async fn claim_totp_step(&self, operator: i64, step: u64) -> StoreResult<bool> {
        let step = i64::try_from(step).map_err(|_| StoreError::Invalid("TOTP step".into()))?;
        self.engine
            .write(move |conn| {
                let sql = "UPDATE operators SET totp_step = ?1
                           WHERE id = ?2 AND (totp_step IS NULL OR totp_step < ?1)";
                Ok(execute(conn, sql, params![step, operator])? == 1)
            })
            .await
    }

    async fn delete_operator_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "DELETE FROM operator_sessions WHERE token_hash = ?1",
                    [token_hash],
                )?;
                Ok(())
            })
            .await
    }

    async fn append_log(&self, log: NewLogEntry) -> StoreResult<()> {
        self.engine.write(move |conn| append_in(conn, &log)).await
    }

    async fn operator_log(&self, filter: LogFilter) -> StoreResult<Vec<LogEntry>> {
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {LOG_COLUMNS} FROM operator_log
                     WHERE (?1 IS NULL OR subject = ?1) AND (?2 IS NULL OR operator_id = ?2)
                     ORDER BY id DESC LIMIT ?3 OFFSET ?4"
                );
                let params = params![
                    filter.subject,
                    filter.operator_id,
                    filter.limit,
                    filter.offset
                ];
                collect(conn, &sql, params, log_row)
            })
            .await
    }

    async fn search_accounts(&self, query: &str, limit: u32) -> StoreResult<Vec<Account>> {
        let query = query.trim().to_owned();
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {} FROM accounts a WHERE a.id = ?1
                       OR instr(lower(a.name), lower(?1)) > 0
                       OR instr(lower(a.email), lower(?1)) > 0
                       OR EXISTS (SELECT 1 FROM api_keys k WHERE k.account_id = a.id
                                  AND ?1 <> '' AND substr(k.display_prefix, 1, length(?1)) = ?1)
                       OR EXISTS (SELECT 1 FROM funding_accounts f WHERE f.account_id = a.id
                                  AND f.account_number = ?1)
                     ORDER BY a.created_at DESC, a.id LIMIT ?2",
                    qualified(ACCOUNT_COLUMNS, "a")
                );
                collect(conn, &sql, params![query, limit], account)
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
        self.engine
            .read(move |conn| {
                let marks = vec!["?"; ids.len()].join(", ");
                let sql = format!("SELECT id, name FROM accounts WHERE id IN ({marks})");
                let rows = collect(conn, &sql, rusqlite::params_from_iter(&ids), |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })?;
                Ok(rows
                    .into_iter()
                    .filter_map(|(id, name)| Some((id.parse().ok()?, name)))
                    .collect())
            })
            .await
    }

    async fn last_plan_costs(&self) -> StoreResult<Vec<PlanCost>> {
        self.engine
            .read(move |conn| {
                let rows = collect(conn, crate::operators::LAST_PLAN_COSTS, [], |r| {
                    Ok(PlanCost {
                        provider: r.get(0)?,
                        plan_id: r.get(1)?,
                        cost: Kobo(r.get(2)?),
                        at: r.get(3)?,
                    })
                })?;
                Ok(crate::operators::first_per_plan(rows))
            })
            .await
    }

    async fn sales_summary(&self, since: &str) -> StoreResult<SalesSummary> {
        let since = since.to_owned();
        self.engine
            .read(move |conn| {
                Ok(query_row(
                    conn,
                    crate::operators::SALES_SUMMARY,
                    [since],
                    |r| {
                        Ok(SalesSummary {
                            successful_count: r.get::<_, i64>(0)? as u64,
                            successful_value: r.get(1)?,
                            failed_count: r.get::<_, i64>(2)? as u64,
                            refunded_value: r.get(3)?,
                            processing_count: r.get::<_, i64>(4)? as u64,
                        })
                    },
                )?)
            })
            .await
    }

    async fn supplier_outcomes(&self, since: &str) -> StoreResult<Vec<SupplierOutcome>> {
        static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            let final_ms = "(julianday(completed_at) - julianday(created_at)) * 86400000.0";
            crate::operators::SUPPLIER_OUTCOMES.replace("{final_ms}", final_ms)
        });
        let since = since.to_owned();
        self.engine
            .read(move |conn| collect(conn, &SQL, [since], supplier_outcome))
            .await
    }
}

fn supplier_outcome(r: &Row) -> rusqlite::Result<SupplierOutcome> {
    let status: String = r.get(1)?;
    Ok(SupplierOutcome {
        supplier: r.get(0)?,
        status: status.parse().map_err(|_| {
            let e = bad_column("status", status.clone());
            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, e.into())
        })?,
        count: r.get::<_, i64>(2)? as u64,
        mean_final_ms: r.get(3)?,
    })
}

#[async_trait]
impl LoggedStore for SqliteStore {
    async fn credit_logged(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
        log: NewLogEntry,
    ) -> StoreResult<Credit> {
        let reference = reference.to_owned();
        self.engine
            .write(move |conn| {
                let source = CreditSource::Operator;
                let credit = credit_in(conn, account, amount, source, &reference)?;
                if credit.applied {
                    let before = applied_balance_before(&credit, amount);
                    append_in(conn, &log.clone().with_balances(before, credit.balance))?;
                }
                Ok(credit)
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
        self.engine
            .write(move |conn| {
                let balance = balance_of(conn, account)?;
                if reference_seen(conn, account, CreditSource::Operator, &reference)? {
                    return Ok(Credit {
                        balance,
                        applied: false,
                    });
                }
                let moved = Kobo(-amount.0);
                let after = post_ledger(conn, account, moved, Entry::OperatorDebit(&reference))?;
                append_in(conn, &log.clone().with_balances(balance, after))?;
                Ok(Credit {
                    balance: after,
                    applied: true,
                })
            })
            .await
    }

    async fn set_account_status_logged(
        &self,
        account: AccountId,
        status: AccountStatus,
        log: NewLogEntry,
    ) -> StoreResult<()> {
        self.engine
            .write(move |conn| {
                let sql = "SELECT status FROM accounts WHERE id = ?1";
                let before: Option<String> =
                    query_row(conn, sql, [account.to_string()], |r| r.get(0)).optional()?;
                let before = before.ok_or(StoreError::NotFound("account"))?;
                set_status_in(conn, account, status)?;
                append_in(conn, &log.clone().with_before(&before))
            })
            .await
    }

    async fn finalize_logged(
        &self,
        code: &str,
        fin: Finalization,
        log: NewLogEntry,
    ) -> StoreResult<bool> {
        let code = code.to_owned();
        self.engine
            .write(move |conn| {
                let changed = finalize_in(conn, &code, &fin)?;
                if changed {
                    append_in(conn, &log)?;
                }
                Ok(changed)
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
