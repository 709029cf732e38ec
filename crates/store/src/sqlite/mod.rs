//! The embedded SQLite backend of [`Store`].

pub mod backup;
mod engine;
mod rows;

use crate::clock::{new_code, now_ms, now_rfc3339, rfc3339};
use crate::*;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::{AccountId, KeyId, Kobo, Product, TxStatus};
use engine::Engine;
use rows::*;
use rusqlite::{Connection, OptionalExtension, params};
use std::time::Duration;

pub use engine::path_from_url;

pub struct SqliteStore {
    engine: Engine,
}

impl SqliteStore {
    /// Opens (creating and migrating) the database, and seeds the default
    /// catalogue on first start.
    pub async fn open(url: &str) -> StoreResult<SqliteStore> {
        let path = path_from_url(url)?;
        let engine = tokio::task::spawn_blocking(move || Engine::open(path))
            .await
            .map_err(|e| StoreError::Backend(e.to_string()))??;
        let store = SqliteStore { engine };
        store
            .engine
            .write(|conn| {
                let has: bool =
                    query_row(conn, "SELECT EXISTS(SELECT 1 FROM catalogue)", [], |r| {
                        r.get(0)
                    })?;
                if !has {
                    let default = Catalogue::from_toml(Catalogue::default_toml())
                        .map_err(StoreError::Invalid)?;
                    save_catalogue(conn, &default)?;
                }
                Ok(())
            })
            .await?;
        Ok(store)
    }
}

fn save_catalogue(conn: &Connection, catalogue: &Catalogue) -> StoreResult<()> {
    let document =
        serde_json::to_string(catalogue).map_err(|e| StoreError::Backend(e.to_string()))?;
    execute(
        conn,
        "INSERT INTO catalogue (id, version, document) VALUES (1, 1, ?1)
         ON CONFLICT (id) DO UPDATE SET version = version + 1, document = excluded.document",
        [document],
    )?;
    Ok(())
}

fn load_catalogue(conn: &Connection) -> StoreResult<(i64, Catalogue)> {
    let (version, document): (i64, String) = query_row(
        conn,
        "SELECT version, document FROM catalogue WHERE id = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let catalogue =
        serde_json::from_str(&document).map_err(|e| StoreError::Backend(e.to_string()))?;
    Ok((version, catalogue))
}

fn balance_of(conn: &Connection, account: AccountId) -> StoreResult<Kobo> {
    query_row(
        conn,
        "SELECT balance FROM accounts WHERE id = ?1",
        [account.to_string()],
        |r| r.get(0),
    )
    .optional()?
    .map(Kobo)
    .ok_or(StoreError::NotFound("account"))
}

/// Moves a wallet by `amount` (signed) and appends the matching ledger entry.
fn post_ledger(
    conn: &Connection,
    account: AccountId,
    amount: Kobo,
    kind: &str,
    transaction_code: Option<&str>,
    credit_reference: Option<&str>,
) -> StoreResult<Kobo> {
    let balance_after: Option<i64> = query_row(conn,
            "UPDATE accounts SET balance = balance + ?1 WHERE id = ?2 AND balance + ?1 >= 0 RETURNING balance",
            params![amount.0, account.to_string()],
            |r| r.get(0),
        )
        .optional()?;
    let balance_after = balance_after.ok_or(Refusal::InsufficientBalance)?;
    execute(
        conn,
        &format!("INSERT INTO ledger ({LEDGER_COLUMNS}) VALUES (NULL, ?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
        params![
            account.to_string(),
            amount.0,
            kind,
            balance_after,
            transaction_code,
            credit_reference,
            now_rfc3339()
        ],
    )?;
    Ok(Kobo(balance_after))
}

fn reference_used(conn: &Connection, account: AccountId, reference: &str) -> StoreResult<bool> {
    Ok(query_row(
        conn,
        "SELECT EXISTS(SELECT 1 FROM transactions WHERE account_id = ?1 AND reference = ?2)",
        params![account.to_string(), reference],
        |r| r.get(0),
    )?)
}

fn get_transaction(conn: &Connection, code: &str) -> StoreResult<Transaction> {
    query_row(
        conn,
        &format!("SELECT {TX_COLUMNS} FROM transactions WHERE code = ?1"),
        [code],
        transaction,
    )
    .optional()?
    .ok_or(StoreError::NotFound("transaction"))
}

fn get_api_key(conn: &Connection, id: KeyId) -> StoreResult<Option<ApiKey>> {
    Ok(query_row(
        conn,
        &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
        [id.to_string()],
        api_key,
    )
    .optional()?)
}

/// `Connection::execute` through the connection's statement cache.
fn execute(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

/// `Connection::query_row` through the connection's statement cache.
fn query_row<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: impl FnOnce(&rusqlite::Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached(sql)?.query_row(params, map)
}

fn collect<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: fn(&rusqlite::Row) -> rusqlite::Result<T>,
) -> StoreResult<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params, map)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A queue the workers claim from: rows in `status` whose time has come.
struct WorkQueue {
    table: &'static str,
    id: &'static str,
    status: &'static str,
    columns: &'static str,
}

const CLAIM_FULFILMENTS: WorkQueue = WorkQueue {
    table: "transactions",
    id: "code",
    status: "processing",
    columns: TX_COLUMNS,
};
const CLAIM_EVENTS: WorkQueue = WorkQueue {
    table: "events",
    id: "id",
    status: "pending",
    columns: EVENT_COLUMNS,
};

/// Leases up to `limit` due, unleased rows of a work queue, oldest due
/// first, none of the keys in `skip_keys`.
fn claim_due<T>(
    conn: &Connection,
    queue: &WorkQueue,
    (limit, lease): (u32, Duration),
    skip_keys: &[KeyId],
    map: fn(&rusqlite::Row) -> rusqlite::Result<T>,
) -> StoreResult<Vec<T>> {
    let WorkQueue {
        table,
        id,
        status,
        columns,
    } = queue;
    let now = now_ms();
    let skip: Vec<String> = skip_keys.iter().map(KeyId::to_string).collect();
    let skip = serde_json::to_string(&skip).map_err(|e| StoreError::Backend(e.to_string()))?;
    collect(
        conn,
        &format!(
            "UPDATE {table} SET lease_until = ?1
             WHERE {id} IN (SELECT {id} FROM {table} WHERE status = '{status}'
                 AND next_attempt_at <= ?2 AND lease_until <= ?2
                 AND key_id NOT IN (SELECT value FROM json_each(?4))
                 ORDER BY next_attempt_at LIMIT ?3)
             RETURNING {columns}"
        ),
        params![now + lease.as_millis() as i64, now, limit, skip],
        map,
    )
}

#[async_trait]
impl Store for SqliteStore {
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account> {
        self.engine
            .write(move |conn| {
                let id = AccountId::new();
                let inserted = execute(
                    conn,
                    "INSERT INTO accounts (id, name, email, password_hash, status, created_at)
                     VALUES (?1, ?2, ?3, ?4, 'active', ?5) ON CONFLICT (email) DO NOTHING",
                    params![
                        id.to_string(),
                        new.name,
                        new.email,
                        new.password_hash,
                        now_rfc3339()
                    ],
                )?;
                if inserted == 0 {
                    return Err(StoreError::Invalid(format!(
                        "an account with email {} exists",
                        new.email
                    )));
                }
                Ok(query_row(
                    conn,
                    &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1"),
                    [id.to_string()],
                    account,
                )?)
            })
            .await
    }

    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        self.engine
            .read(move |conn| {
                Ok(query_row(
                    conn,
                    &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1"),
                    [id.to_string()],
                    account,
                )
                .optional()?)
            })
            .await
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        let email = email.to_owned();
        self.engine
            .read(move |conn| {
                Ok(query_row(
                    conn,
                    &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE email = ?1"),
                    [email],
                    account,
                )
                .optional()?)
            })
            .await
    }

    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()> {
        self.engine
            .write(move |conn| {
                match execute(
                    conn,
                    "UPDATE accounts SET status = ?1 WHERE id = ?2",
                    params![status.as_str(), id.to_string()],
                )? {
                    0 => Err(StoreError::NotFound("account")),
                    _ if status == AccountStatus::Suspended => end_sessions(conn, id),
                    _ => Ok(()),
                }
            })
            .await
    }

    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()> {
        self.engine
            .write(move |conn| {
                match execute(
                    conn,
                    "UPDATE accounts SET password_hash = ?1 WHERE id = ?2",
                    params![password_hash, id.to_string()],
                )? {
                    0 => Err(StoreError::NotFound("account")),
                    _ => end_sessions(conn, id),
                }
            })
            .await
    }

    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey> {
        self.engine
            .write(move |conn| {
                balance_of(conn, new.account_id)?; // the account must exist
                let id = KeyId::new();
                execute(conn,
                    "INSERT INTO api_keys (id, account_id, name, key_hash, display_prefix, status, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6)",
                    params![id.to_string(), new.account_id.to_string(), new.name, new.key_hash, new.display_prefix, now_rfc3339()],
                )?;
                get_api_key(conn, id)?.ok_or(StoreError::NotFound("API key"))
            })
            .await
    }

    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        self.engine.read(move |conn| get_api_key(conn, id)).await
    }

    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        self.engine
            .read(move |conn| {
                collect(
                    conn,
                    &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY created_at"),
                    [account.to_string()],
                    api_key,
                )
            })
            .await
    }

    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>> {
        let found = self.engine.read_here(|conn| {
                static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
                    format!(
                        "SELECT {}, a.status FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?1",
                        KEY_COLUMNS.split(", ").map(|c| format!("k.{c}")).collect::<Vec<_>>().join(", ")
                    )
                });
                Ok(query_row(conn, &SQL, [key_hash], |row| {
                        let status: String = row.get(12)?;
                        Ok((api_key(row)?, status))
                    })
                    .optional()?)
            })?;
        let Some((key, status)) = found else {
            return Ok(None);
        };
        let status = status.parse().map_err(StoreError::Backend)?;
        Ok(Some((key, status)))
    }

    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey> {
        self.engine
            .write(move |conn| {
                let key = id.to_string();
                let changed = match change {
                    KeyChange::Status(status) => {
                        // Revocation is final.
                        execute(
                            conn,
                            "UPDATE api_keys SET status = ?1 WHERE id = ?2 AND status != 'revoked'",
                            params![status.as_str(), key],
                        )?
                    }
                    KeyChange::RateLimit(limit) => execute(
                        conn,
                        "UPDATE api_keys SET rate_per_second = ?1, rate_burst = ?2 WHERE id = ?3",
                        params![limit.map(|l| l.per_second), limit.map(|l| l.burst), key],
                    )?,
                    KeyChange::WebhookUrl(url) => execute(
                        conn,
                        "UPDATE api_keys SET webhook_url = ?1 WHERE id = ?2",
                        params![url, key],
                    )?,
                    KeyChange::WebhookSecretSealed(sealed) => execute(
                        conn,
                        "UPDATE api_keys SET webhook_secret_sealed = ?1 WHERE id = ?2",
                        params![sealed, key],
                    )?,
                    KeyChange::WebhookRetries(on) => execute(
                        conn,
                        "UPDATE api_keys SET webhook_retries = ?1 WHERE id = ?2",
                        params![on, key],
                    )?,
                };
                let found = get_api_key(conn, id)?.ok_or(StoreError::NotFound("API key"))?;
                if changed == 0 {
                    return Err(StoreError::Invalid(
                        "a revoked key cannot be changed".into(),
                    ));
                }
                Ok(found)
            })
            .await
    }

    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()> {
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2",
                    params![now_rfc3339(), id.to_string()],
                )?;
                Ok(())
            })
            .await
    }

    async fn balance(&self, account: AccountId) -> StoreResult<Kobo> {
        self.engine.read_here(|conn| balance_of(conn, account))
    }

    async fn credit(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
    ) -> StoreResult<Credit> {
        let reference = reference.to_owned();
        self.engine
            .write(move |conn| {
                let balance = balance_of(conn, account)?;
                let seen: bool = query_row(conn,
                    "SELECT EXISTS(SELECT 1 FROM ledger WHERE account_id = ?1 AND credit_reference = ?2)",
                    params![account.to_string(), reference],
                    |r| r.get(0),
                )?;
                if seen {
                    return Ok(Credit { balance, applied: false });
                }
                let balance = post_ledger(conn, account, amount, "credit", None, Some(&reference))?;
                Ok(Credit { balance, applied: true })
            })
            .await
    }

    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>> {
        self.engine
            .read(move |conn| {
                collect(
                    conn,
                    &format!("SELECT {LEDGER_COLUMNS} FROM ledger WHERE account_id = ?1 ORDER BY id DESC LIMIT ?2"),
                    params![account.to_string(), limit],
                    ledger_entry,
                )
            })
            .await
    }

    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo> {
        self.engine
            .read(move |conn| {
                Ok(Kobo(query_row(
                    conn,
                    "SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = ?1",
                    [account.to_string()],
                    |r| r.get(0),
                )?))
            })
            .await
    }

    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>> {
        let code = code.to_owned();
        self.engine
            .read(move |conn| {
                collect(
                    conn,
                    &format!("SELECT {LEDGER_COLUMNS} FROM ledger WHERE transaction_code = ?1 ORDER BY id"),
                    [code],
                    ledger_entry,
                )
            })
            .await
    }

    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)> {
        self.engine.read(load_catalogue).await
    }

    async fn catalogue_version(&self) -> StoreResult<i64> {
        self.engine.read_here(|conn| {
            Ok(query_row(
                conn,
                "SELECT version FROM catalogue WHERE id = 1",
                [],
                |r| r.get(0),
            )?)
        })
    }

    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()> {
        catalogue.validate().map_err(StoreError::Invalid)?;
        let catalogue = catalogue.clone();
        self.engine
            .write(move |conn| save_catalogue(conn, &catalogue))
            .await
    }

    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String> {
        let target = target.to_owned();
        self.engine
            .write(move |conn| {
                let (_, mut catalogue) = load_catalogue(conn)?;
                let what = catalogue
                    .set_active(&target, active)
                    .ok_or(StoreError::NotFound("provider or plan"))?;
                save_catalogue(conn, &catalogue)?;
                Ok(what)
            })
            .await
    }

    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo> {
        self.engine.read_here(|conn| {
            let balance = balance_of(conn, account)?;
            if reference_used(conn, account, reference)? {
                return Err(Refusal::DuplicateReference.into());
            }
            if balance < amount {
                return Err(Refusal::InsufficientBalance.into());
            }
            Ok(balance)
        })
    }

    async fn place_purchase(&self, new: NewPurchase) -> StoreResult<Transaction> {
        self.engine
            .write(move |conn| {
                if reference_used(conn, new.account_id, &new.reference)? {
                    return Err(Refusal::DuplicateReference.into());
                }
                let code = new_code("BP");
                let balance_before = balance_of(conn, new.account_id)?;
                let balance_after = post_ledger(conn, new.account_id, Kobo(-new.amount.0), "debit", Some(&code), None)?;
                let batch_id = new.details.get("batch_id").and_then(|b| b.as_str()).map(str::to_owned);
                let now = now_ms();
                execute(conn,
                    "INSERT INTO transactions (code, account_id, key_id, reference, product, provider, plan_id, label,
                       recipient, amount, details, batch_id, status, message, balance_before, balance_after,
                       next_attempt_at, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'processing',
                       'Transaction is processing', ?13, ?14, ?15, ?16)",
                    params![
                        code,
                        new.account_id.to_string(),
                        new.key_id.to_string(),
                        new.reference,
                        new.product.service(),
                        new.provider,
                        new.plan_id,
                        new.label,
                        new.recipient,
                        new.amount.0,
                        new.details.to_string(),
                        batch_id,
                        balance_before.0,
                        balance_after.0,
                        now,
                        rfc3339(now),
                    ],
                )?;
                get_transaction(conn, &code)
            })
            .await
    }

    async fn transaction(
        &self,
        account: Option<AccountId>,
        lookup: TxLookup,
    ) -> StoreResult<Option<Transaction>> {
        self.engine
            .read(move |conn| {
                let (column, value) = match lookup {
                    TxLookup::Code(code) => ("code", code),
                    TxLookup::Reference(reference) => ("reference", reference),
                    TxLookup::BatchId(batch) => ("batch_id", batch),
                };
                // Two statements, not `?2 IS NULL OR …`: with it SQLite cannot
                // use the (account_id, reference) index and scans every row.
                let found = match account {
                    Some(account) => query_row(
                        conn,
                        &format!("SELECT {TX_COLUMNS} FROM transactions WHERE account_id = ?2 AND {column} = ?1"),
                        params![value, account.to_string()],
                        transaction,
                    ),
                    // The operator's lookup across accounts (a scan for a reference).
                    None => query_row(
                        conn,
                        &format!("SELECT {TX_COLUMNS} FROM transactions WHERE {column} = ?1 ORDER BY created_at LIMIT 1"),
                        [value],
                        transaction,
                    ),
                };
                Ok(found.optional()?)
            })
            .await
    }

    async fn transactions(&self, filter: TxFilter) -> StoreResult<Vec<Transaction>> {
        self.engine
            .read(move |conn| {
                collect(
                    conn,
                    &format!(
                        "SELECT {TX_COLUMNS} FROM transactions WHERE (?1 IS NULL OR account_id = ?1)
                         AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR product = ?3)
                         AND (?4 IS NULL OR created_at >= ?4) AND (?5 IS NULL OR created_at < ?5)
                         AND (?6 IS NULL OR instr(reference, ?6) > 0 OR instr(code, ?6) > 0)
                         ORDER BY created_at DESC, code DESC LIMIT ?7 OFFSET ?8"
                    ),
                    params![
                        filter.account_id.map(|a| a.to_string()),
                        filter.status.map(TxStatus::as_str),
                        filter.product.map(Product::service),
                        filter.created_from,
                        filter.created_until,
                        filter.search,
                        filter.limit.max(1),
                        filter.offset,
                    ],
                    transaction,
                )
            })
            .await
    }

    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>> {
        let since = since.to_owned();
        self.engine
            .read(move |conn| {
                collect(
                    conn,
                    "SELECT substr(created_at, 1, 10) AS day, product, COUNT(*), SUM(amount) FROM transactions
                     WHERE account_id = ?1 AND created_at >= ?2 AND status != 'failed'
                     GROUP BY day, product ORDER BY day, product",
                    params![account.to_string(), since],
                    daily_spend_row,
                )
            })
            .await
    }

    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.engine
            .write(move |conn| {
                execute(conn, "DELETE FROM sessions WHERE expires_at < ?1", [now_ms()])?;
                execute(conn,
                    "INSERT INTO sessions (token_hash, account_id, expires_at, created_at) VALUES (?1, ?2, ?3, ?4)",
                    params![token_hash, account.to_string(), expires_at_ms, now_rfc3339()],
                )?;
                Ok(())
            })
            .await
    }

    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>> {
        let token_hash = token_hash.to_owned();
        self.engine
            .read(move |conn| {
                Ok(query_row(conn,
                        "SELECT account_id, expires_at FROM sessions WHERE token_hash = ?1 AND expires_at > ?2",
                        params![token_hash, now_ms()],
                        |row| {
                            let account: String = row.get(0)?;
                            Ok((account, row.get::<_, i64>(1)?))
                        },
                    )
                    .optional()?
                    .and_then(|(account, expires_at_ms)| {
                        Some(Session { account_id: account.parse().ok()?, expires_at_ms })
                    }))
            })
            .await
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "DELETE FROM sessions WHERE token_hash = ?1",
                    [token_hash],
                )?;
                Ok(())
            })
            .await
    }

    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        self.engine
            .write(move |conn| {
                claim_due(conn, &CLAIM_FULFILMENTS, (limit, lease), &[], transaction)
            })
            .await
    }

    async fn renew_fulfilment_leases(
        &self,
        codes: Vec<String>,
        lease: Duration,
    ) -> StoreResult<()> {
        if codes.is_empty() {
            return Ok(());
        }
        let codes =
            serde_json::to_string(&codes).map_err(|e| StoreError::Backend(e.to_string()))?;
        self.engine
            .write(move |conn| {
                // `lease_until > 0`: a transaction rescheduled or finalized in
                // the meantime has released its lease; never take it back.
                execute(
                    conn,
                    "UPDATE transactions SET lease_until = ?1
                     WHERE code IN (SELECT value FROM json_each(?2))
                       AND status = 'processing' AND lease_until > 0",
                    params![now_ms() + lease.as_millis() as i64, codes],
                )?;
                Ok(())
            })
            .await
    }

    async fn mark_submitted(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        let (code, supplier) = (code.to_owned(), supplier.to_owned());
        let supplier_reference = supplier_reference.map(str::to_owned);
        self.engine
            .write(move |conn| {
                execute(conn,
                    "UPDATE transactions SET submitted = 1, supplier = ?2, supplier_reference = ?3 WHERE code = ?1",
                    params![code, supplier, supplier_reference],
                )?;
                Ok(())
            })
            .await
    }

    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()> {
        let (code, note) = (code.to_owned(), note.to_owned());
        self.engine
            .write(move |conn| {
                execute(conn,
                    "UPDATE transactions SET attempts = attempts + 1, next_attempt_at = ?1, lease_until = 0,
                       result = json_set(result, '$.last_note', ?2)
                     WHERE code = ?3 AND status = 'processing'",
                    params![now_ms() + delay.as_millis() as i64, note, code],
                )?;
                Ok(())
            })
            .await
    }

    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        let code = code.to_owned();
        self.engine
            .write(move |conn| {
                let tx = get_transaction(conn, &code)?;
                if !fin.applies_to(tx.status) {
                    return Ok(false);
                }
                execute(conn,
                    "UPDATE transactions SET status = ?1, message = ?2, result = ?3, completed_at = ?4,
                       attempts = attempts + 1, lease_until = 0 WHERE code = ?5",
                    params![fin.status.as_str(), fin.message, fin.result.to_string(), rfc3339(fin.completed_at_ms), code],
                )?;
                if fin.status == TxStatus::Failed {
                    post_ledger(conn, tx.account_id, tx.amount, "refund", Some(&code), None)?;
                }
                execute(conn,
                    &format!("INSERT INTO events ({EVENT_COLUMNS}, next_attempt_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?7, ?8) {RESEND_ON_REVERSAL}"),
                    params![
                        new_code("EV"),
                        code,
                        tx.account_id.to_string(),
                        tx.key_id.to_string(),
                        tx.product.event(),
                        fin.event_payload,
                        rfc3339(fin.completed_at_ms),
                        fin.completed_at_ms,
                    ],
                )?;
                Ok(true)
            })
            .await
    }

    async fn claim_events(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        self.engine
            .write(move |conn| claim_due(conn, &CLAIM_EVENTS, (limit, lease), &skip_keys, event))
            .await
    }

    async fn record_delivery(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.engine
            .write(move |conn| {
                execute(conn,
                    "INSERT INTO webhook_attempts (event_id, url, http_status, error, latency_ms, response_excerpt, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![event_id, attempt.url, attempt.http_status, attempt.error, attempt.latency_ms, attempt.response_excerpt, now_rfc3339()],
                )?;
                let (status, next_at) = match next {
                    EventNext::Delivered => (EventStatus::Delivered, 0),
                    EventNext::Failed => (EventStatus::Failed, 0),
                    EventNext::Skipped => (EventStatus::Skipped, 0),
                    EventNext::RetryAtMs(at) => (EventStatus::Pending, at),
                };
                execute(conn,
                    "UPDATE events SET status = ?1, next_attempt_at = ?2, lease_until = 0, attempts = attempts + 1 WHERE id = ?3",
                    params![status.as_str(), next_at, event_id],
                )?;
                Ok(())
            })
            .await
    }

    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>> {
        self.engine
            .read(move |conn| {
                collect(
                    conn,
                    &format!(
                        "SELECT {EVENT_COLUMNS} FROM events WHERE (?1 IS NULL OR account_id = ?1)
                         AND (?2 = 0 OR status = 'failed') AND (?4 IS NULL OR key_id = ?4)
                         ORDER BY created_at DESC LIMIT ?3"
                    ),
                    params![
                        filter.account_id.map(|a| a.to_string()),
                        filter.failed_only,
                        filter.limit.max(1),
                        filter.key_id.map(|k| k.to_string())
                    ],
                    event,
                )
            })
            .await
    }

    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>> {
        let key = id_or_code.to_owned();
        self.engine
            .read(move |conn| {
                Ok(query_row(
                    conn,
                    &format!(
                        "SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1 OR transaction_code = ?1"
                    ),
                    [key],
                    event,
                )
                .optional()?)
            })
            .await
    }

    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>> {
        let event_id = event_id.to_owned();
        self.engine
            .read(move |conn| {
                collect(
                    conn,
                    "SELECT id, event_id, url, http_status, error, latency_ms, response_excerpt, created_at
                     FROM webhook_attempts WHERE event_id = ?1 ORDER BY id",
                    [event_id],
                    attempt,
                )
            })
            .await
    }

    async fn requeue_event(&self, event_id: &str) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.engine
            .write(move |conn| {
                // Not while a delivery holds the event: that would send it twice at once.
                let now = now_ms();
                let queued = execute(conn,
                    "UPDATE events SET status = 'pending', next_attempt_at = ?1 WHERE id = ?2 AND lease_until <= ?1",
                    params![now, event_id],
                )?;
                let exists: bool = query_row(conn,
                    "SELECT EXISTS(SELECT 1 FROM events WHERE id = ?1)",
                    [&event_id],
                    |r| r.get(0),
                )?;
                match (queued, exists) {
                    (0, false) => Err(StoreError::NotFound("event")),
                    (0, true) => Err(StoreError::Invalid(crate::DELIVERY_IN_PROGRESS.into())),
                    _ => Ok(()),
                }
            })
            .await
    }

    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        self.engine
            .read(|conn| {
                Ok(query_row(conn, crate::BACKLOG, [], |r| {
                    Ok(Backlog {
                        processing: r.get::<_, i64>(0)? as u64,
                        oldest_created_at: r.get(1)?,
                    })
                })?)
            })
            .await
    }

    async fn audit(&self) -> StoreResult<Vec<audit::CheckOutcome>> {
        self.engine
            .read(|conn| {
                let snapshot = conn.unchecked_transaction()?;
                let outcomes = audit::CHECKS
                    .iter()
                    .map(|check| {
                        Ok(audit::CheckOutcome {
                            name: check.name,
                            rule: check.rule,
                            violations: audit_rows(&snapshot, check.sql)?,
                        })
                    })
                    .collect::<StoreResult<_>>()?;
                snapshot.commit()?;
                Ok(outcomes)
            })
            .await
    }
}

/// The rows of an audit query, every column read as text.
fn audit_rows(conn: &Connection, sql: &str) -> StoreResult<Vec<audit::AuditRow>> {
    let mut stmt = conn.prepare(sql)?;
    let names: Vec<String> = stmt.column_names().into_iter().map(String::from).collect();
    let rows = stmt.query_map([], |row| {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| Ok((name.clone(), row.get(i)?)))
            .collect()
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A password change or a suspension signs the account out everywhere.
fn end_sessions(conn: &rusqlite::Connection, id: AccountId) -> StoreResult<()> {
    execute(
        conn,
        "DELETE FROM sessions WHERE account_id = ?1",
        [id.to_string()],
    )?;
    Ok(())
}
