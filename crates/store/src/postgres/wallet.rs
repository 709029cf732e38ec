//! Wallets: the balance, credits (once per reference), the ledger.

use super::PostgresStore;
use super::connection::{Params, PgTx, map_rows, query, query_one, query_opt};
use super::error::PgResult;
use super::rows::{get, ledger_entry};
use crate::clock::now_rfc3339;
use crate::columns::LEDGER_COLUMNS;
use crate::*;
use async_trait::async_trait;
use billpay_domain::{AccountId, Kobo};
use deadpool_postgres::GenericClient;

#[async_trait]
impl WalletStore for PostgresStore {
    async fn balance(&self, account: AccountId) -> StoreResult<Kobo> {
        self.autocommit(|c| Box::pin(balance_of(c, account, false)))
            .await
    }

    async fn credit_from(
        &self,
        account: AccountId,
        amount: Kobo,
        source: CreditSource,
        reference: &str,
    ) -> StoreResult<Credit> {
        let reference = reference.to_owned();
        self.write(move |tx| {
            let reference = reference.clone();
            Box::pin(async move { credit_in(tx, account, amount, source, &reference).await })
        })
        .await
    }

    /// Newest first.
    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>> {
        self
            .autocommit(|c| {
                Box::pin(async move {
                    let sql = format!(
                        "SELECT {LEDGER_COLUMNS} FROM ledger WHERE account_id = $1 ORDER BY id DESC LIMIT $2"
                    );
                    let rows = query(c, &sql, &[&account.to_string(), &i64::from(limit)]).await?;
                    map_rows(rows, ledger_entry)
                })
            })
            .await
    }

    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo> {
        self.autocommit(|c| {
            Box::pin(async move {
                let sql =
                    "SELECT COALESCE(SUM(amount), 0)::BIGINT FROM ledger WHERE account_id = $1";
                let row = query_one(c, sql, &[&account.to_string()]).await?;
                Ok(Kobo(get(&row, 0)?))
            })
        })
        .await
    }

    /// The entries of one transaction: its debit, and its refund if any.
    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>> {
        let code = code.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {LEDGER_COLUMNS} FROM ledger WHERE transaction_code = $1 ORDER BY id"
                );
                map_rows(query(c, &sql, &[&code]).await?, ledger_entry)
            })
        })
        .await
    }
}

/// A credit once per (account, source, reference), inside the caller's transaction.
pub(super) async fn credit_in(
    tx: &PgTx<'_>,
    account: AccountId,
    amount: Kobo,
    source: CreditSource,
    reference: &str,
) -> PgResult<Credit> {
    // The wallet's row lock orders credits of one account, so the
    // check below sees every credit committed before ours.
    let balance = balance_of(tx, account, true).await?;
    if reference_seen(tx, account, source, reference).await? {
        return Ok(Credit {
            balance,
            applied: false,
        });
    }
    let balance = post_entry(tx, account, amount, LedgerKind::Credit, source, reference).await?;
    Ok(Credit {
        balance,
        applied: true,
    })
}

/// Whether `account` has a ledger entry with this source's `reference`
/// (callers hold the wallet's row lock).
pub(super) async fn reference_seen(
    tx: &PgTx<'_>,
    account: AccountId,
    source: CreditSource,
    reference: &str,
) -> PgResult<bool> {
    let sql = format!(
        "SELECT 1 FROM ledger WHERE account_id = $1
         AND {CREDIT_SOURCE_OR_OPERATOR} = $2 AND credit_reference = $3"
    );
    let params: Params = &[&account.to_string(), &source.as_str(), &reference];
    Ok(query_opt(tx, &sql, params).await?.is_some())
}

/// The wallet's balance; `lock` takes its row lock until the transaction ends.
pub(super) async fn balance_of<C: GenericClient>(
    c: &C,
    account: AccountId,
    lock: bool,
) -> PgResult<Kobo> {
    let sql = if lock {
        "SELECT balance FROM accounts WHERE id = $1 FOR UPDATE"
    } else {
        "SELECT balance FROM accounts WHERE id = $1"
    };
    match query_opt(c, sql, &[&account.to_string()]).await? {
        Some(row) => Ok(Kobo(get(&row, 0)?)),
        None => Err(StoreError::NotFound("account").into()),
    }
}

/// Moves a wallet by `amount` (signed) and appends the entry of a move by
/// reference (a credit, an operator's debit), in one statement
/// (`sql/post_ledger.sql`, refused below zero).
pub(super) async fn post_entry(
    tx: &PgTx<'_>,
    account: AccountId,
    amount: Kobo,
    kind: LedgerKind,
    source: CreditSource,
    reference: &str,
) -> PgResult<Kobo> {
    let transaction_code: Option<&str> = None;
    let params: Params = &[
        &amount.0,
        &account.to_string(),
        &kind.as_str(),
        &transaction_code,
        &reference,
        &now_rfc3339(),
        &source.as_str(),
    ];
    match query_opt(tx, include_str!("sql/post_ledger.sql"), params).await? {
        Some(row) => Ok(Kobo(get(&row, 0)?)),
        None => Err(Refusal::InsufficientBalance.into()),
    }
}
