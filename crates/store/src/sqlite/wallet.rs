//! Wallets: the balance, credits (once per reference), the ledger.

use super::SqliteStore;
use super::rows::ledger_entry;
use super::statements::{collect, execute, query_row};
use crate::clock::now_rfc3339;
use crate::columns::LEDGER_COLUMNS;
use crate::*;
use async_trait::async_trait;
use billpay_domain::{AccountId, Kobo};
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::LazyLock;

#[async_trait]
impl WalletStore for SqliteStore {
    /// A point read on the request path, so on this thread's own connection.
    async fn balance(&self, account: AccountId) -> StoreResult<Kobo> {
        self.engine.read_here(|conn| balance_of(conn, account))
    }

    async fn credit_from(
        &self,
        account: AccountId,
        amount: Kobo,
        source: CreditSource,
        reference: &str,
    ) -> StoreResult<Credit> {
        let reference = reference.to_owned();
        self.engine
            .write(move |conn| credit_in(conn, account, amount, source, &reference))
            .await
    }

    /// Newest first.
    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>> {
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {LEDGER_COLUMNS} FROM ledger WHERE account_id = ?1 ORDER BY id DESC LIMIT ?2"
                );
                collect(conn, &sql, params![account.to_string(), limit], ledger_entry)
            })
            .await
    }

    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo> {
        self.engine
            .read(move |conn| {
                let sql = "SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = ?1";
                Ok(Kobo(query_row(conn, sql, [account.to_string()], |r| {
                    r.get(0)
                })?))
            })
            .await
    }

    /// The entries of one transaction: its debit, and its refund if any.
    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>> {
        let code = code.to_owned();
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {LEDGER_COLUMNS} FROM ledger WHERE transaction_code = ?1 ORDER BY id"
                );
                collect(conn, &sql, [code], ledger_entry)
            })
            .await
    }
}

pub(super) fn balance_of(conn: &Connection, account: AccountId) -> StoreResult<Kobo> {
    let sql = "SELECT balance FROM accounts WHERE id = ?1";
    query_row(conn, sql, [account.to_string()], |r| r.get(0))
        .optional()?
        .map(Kobo)
        .ok_or(StoreError::NotFound("account"))
}

/// A credit once per (account, source, reference), inside the caller's transaction.
pub(super) fn credit_in(
    conn: &Connection,
    account: AccountId,
    amount: Kobo,
    source: CreditSource,
    reference: &str,
) -> StoreResult<Credit> {
    let balance = balance_of(conn, account)?;
    if reference_seen(conn, account, source, reference)? {
        return Ok(Credit {
            balance,
            applied: false,
        });
    }
    let balance = post_ledger(conn, account, amount, Entry::Credit(source, reference))?;
    Ok(Credit {
        balance,
        applied: true,
    })
}

/// Whether `account` has a ledger entry with this source's `reference`.
pub(super) fn reference_seen(
    conn: &Connection,
    account: AccountId,
    source: CreditSource,
    reference: &str,
) -> StoreResult<bool> {
    let sql = format!(
        "SELECT EXISTS(SELECT 1 FROM ledger WHERE account_id = ?1
         AND {CREDIT_SOURCE_OR_OPERATOR} = ?2 AND credit_reference = ?3)"
    );
    let params = params![account.to_string(), source.as_str(), reference];
    Ok(query_row(conn, &sql, params, |r| r.get(0))?)
}

/// Why a wallet moves, and what the ledger entry refers to.
pub(super) enum Entry<'a> {
    /// A credit, by its source and reference.
    Credit(CreditSource, &'a str),
    /// A purchase's debit, by the transaction's code.
    Debit(&'a str),
    /// A failed purchase's refund, by the transaction's code.
    Refund(&'a str),
    /// A bank transfer's payment, by its gateway reference and funding event.
    Funding {
        source: CreditSource,
        reference: &'a str,
        funding_id: &'a str,
    },
    /// The operator's fee on a funding (a negative amount), by its event.
    Fee(&'a str),
    /// An operator's debit, by the operator's reference (no purchase).
    OperatorDebit(&'a str),
}

/// Moves a wallet by `amount` (signed) and appends the matching ledger
/// entry; refused below zero.
pub(super) fn post_ledger(
    conn: &Connection,
    account: AccountId,
    amount: Kobo,
    entry: Entry,
) -> StoreResult<Kobo> {
    let balance_after: Option<i64> = query_row(
        conn,
        "UPDATE accounts SET balance = balance + ?1 WHERE id = ?2 AND balance + ?1 >= 0 RETURNING balance",
        params![amount.0, account.to_string()],
        |r| r.get(0),
    )
    .optional()?;
    let balance_after = balance_after.ok_or(Refusal::InsufficientBalance)?;
    let (kind, transaction_code, credit, funding_id) = match entry {
        Entry::Credit(source, reference) => {
            (LedgerKind::Credit, None, Some((source, reference)), None)
        }
        Entry::Debit(code) => (LedgerKind::Debit, Some(code), None, None),
        Entry::Refund(code) => (LedgerKind::Refund, Some(code), None, None),
        Entry::Funding {
            source,
            reference,
            funding_id,
        } => (
            LedgerKind::Credit,
            None,
            Some((source, reference)),
            Some(funding_id),
        ),
        Entry::Fee(funding_id) => (LedgerKind::Fee, None, None, Some(funding_id)),
        Entry::OperatorDebit(reference) => (
            LedgerKind::Debit,
            None,
            Some((CreditSource::Operator, reference)),
            None,
        ),
    };
    // Formatted once: every debit and credit posts here.
    static INSERT: LazyLock<String> = LazyLock::new(|| {
        format!(
            "INSERT INTO ledger ({LEDGER_COLUMNS}, funding_id) VALUES (NULL, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        )
    });
    execute(
        conn,
        &INSERT,
        params![
            account.to_string(),
            amount.0,
            kind.as_str(),
            balance_after,
            transaction_code,
            credit.map(|(_, reference)| reference),
            now_rfc3339(),
            credit.map(|(source, _)| source.as_str()),
            funding_id,
        ],
    )?;
    Ok(Kobo(balance_after))
}
