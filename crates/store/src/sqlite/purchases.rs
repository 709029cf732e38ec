//! Purchases: the test-mode check, placing one (one write of the
//! group-commit engine), and reading them back.

use super::SqliteStore;
use super::rows::{daily_spend_row, transaction};
use super::statements::Lite;
use super::statements::{collect, execute, query_row};
use super::wallet::{Entry, post_ledger};
use crate::areas::limits;
use crate::clock::{new_code, now_ms, rfc3339};
use crate::columns::TX_COLUMNS;
use crate::db::ready;
use crate::*;
use async_trait::async_trait;
use billpay_domain::{AccountId, Kobo, Product, TxStatus};
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::LazyLock;

#[async_trait]
impl PurchaseStore for SqliteStore {
    /// A point read on the request path, so on this thread's own connection.
    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        recipient: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo> {
        self.engine.read_here(|conn| {
            let tx = &Lite(conn);
            ready(limits::check_purchase(
                tx, account, reference, recipient, amount,
            ))
        })
    }

    /// The reference, the blocklist, limits and velocity rules, the debit,
    /// the transaction row (held for review when a rule says so), its ledger
    /// entry and its usage, in one savepoint of the next group commit (the
    /// one writer orders every debit, so limits cannot be raced).
    async fn place_purchase(&self, new: NewPurchase) -> StoreResult<Transaction> {
        self.engine
            .write(move |conn| {
                if reference_used(conn, new.account_id, &new.reference)? {
                    return Err(Refusal::DuplicateReference.into());
                }
                let code = new_code("BP");
                let (tx, today) = (&Lite(conn), limits::Today::now());
                let (account, recipient) = (new.account_id, new.recipient.as_str());
                // The guarded debit refuses an amount over the balance.
                let passed = ready(limits::check(tx, account, recipient, new.amount, &today))?;
                let debit = Kobo(-new.amount.0);
                let balance_after = post_ledger(conn, new.account_id, debit, Entry::Debit(&code))?;
                let balances = (passed.balance, balance_after);
                insert(conn, &code, &new, balances, passed.hold)?;
                let kept = passed.keeps_recipient.then_some(recipient);
                let hourly = Some((passed.hourly, recipient));
                ready(limits::record_usage(
                    tx,
                    account,
                    (kept, hourly),
                    new.amount,
                    &today,
                ))?;
                get(conn, &code)
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
                let (column, value) = lookup.column_and_value();
                // Two statements, not `?2 IS NULL OR …`: with it SQLite cannot
                // use the (account_id, reference) index and scans every row.
                let found = match account {
                    Some(account) => query_row(
                        conn,
                        lookup_sql(column, Scope::Account),
                        params![value, account.to_string()],
                        transaction,
                    ),
                    // The operator's lookup across accounts (a scan for a reference).
                    None => query_row(conn, lookup_sql(column, Scope::All), [value], transaction),
                };
                Ok(found.optional()?)
            })
            .await
    }

    async fn transactions(&self, filter: TxFilter) -> StoreResult<Vec<Transaction>> {
        static SQL: LazyLock<String> =
            LazyLock::new(|| include_str!("sql/transactions.sql").replace("{columns}", TX_COLUMNS));
        self.engine
            .read(move |conn| {
                let params = params![
                    filter.account_id.map(|a| a.to_string()),
                    filter.status.map(TxStatus::as_str),
                    filter.product.map(Product::service),
                    filter.created_from,
                    filter.created_until,
                    filter.search,
                    filter.limit.max(1),
                    filter.offset,
                    filter.provider,
                    filter.supplier,
                    filter.recipient,
                    filter.not_held,
                ];
                collect(conn, &SQL, params, transaction)
            })
            .await
    }

    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>> {
        let since = since.to_owned();
        self.engine
            .read(move |conn| {
                let sql = include_str!("sql/daily_spend.sql");
                collect(
                    conn,
                    sql,
                    params![account.to_string(), since],
                    daily_spend_row,
                )
            })
            .await
    }
}

fn insert(
    conn: &Connection,
    code: &str,
    new: &NewPurchase,
    (before, after): (Kobo, Kobo),
    held_for: Option<&str>,
) -> StoreResult<()> {
    let now = now_ms();
    // A held purchase is not due until an owner releases it.
    let due = if held_for.is_some() {
        limits::HELD_UNTIL_MS
    } else {
        now
    };
    execute(
        conn,
        include_str!("sql/insert_transaction.sql"),
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
            new.details.to_json(),
            new.batch_id(),
            before.0,
            after.0,
            due,
            rfc3339(now),
            new.face_value.0,
            new.tier,
            held_for,
        ],
    )?;
    Ok(())
}

fn reference_used(conn: &Connection, account: AccountId, reference: &str) -> StoreResult<bool> {
    let sql = "SELECT EXISTS(SELECT 1 FROM transactions WHERE account_id = ?1 AND reference = ?2)";
    Ok(query_row(
        conn,
        sql,
        params![account.to_string(), reference],
        |r| r.get(0),
    )?)
}

/// Whose transactions a lookup searches.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    Account,
    All,
}

/// The statement looking a transaction up by `column` (one of
/// `TxLookup::column_and_value`'s) in `scope`, formatted once, not per
/// request.
fn lookup_sql(column: &str, scope: Scope) -> &'static str {
    static STATEMENTS: LazyLock<Vec<(&str, Scope, String)>> = LazyLock::new(|| {
        let by = |column| {
            [
                (
                    column,
                    Scope::Account,
                    format!(
                        "SELECT {TX_COLUMNS} FROM transactions WHERE account_id = ?2 AND {column} = ?1"
                    ),
                ),
                (
                    column,
                    Scope::All,
                    format!(
                        "SELECT {TX_COLUMNS} FROM transactions WHERE {column} = ?1 ORDER BY created_at LIMIT 1"
                    ),
                ),
            ]
        };
        ["code", "reference", "batch_id"]
            .into_iter()
            .flat_map(by)
            .collect()
    });
    let found = STATEMENTS
        .iter()
        .find(|(named, searched, _)| *named == column && *searched == scope);
    &found.expect("a column TxLookup names").2
}

pub(super) fn get(conn: &Connection, code: &str) -> StoreResult<Transaction> {
    query_row(conn, lookup_sql("code", Scope::All), [code], transaction)
        .optional()?
        .ok_or(StoreError::NotFound("transaction"))
}
