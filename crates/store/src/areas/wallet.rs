//! Wallets: the balance, credits (once per reference), the ledger; and the
//! one way a wallet moves (`post_ledger`), which purchases, refunds, funding
//! and the operator's debits share.

use crate::clock::now_rfc3339;
use crate::columns::LEDGER_COLUMNS;
use crate::db::{
    Engine, ManyRows, Param, PerEngine, ReadTx, Statements, Tx, col, for_both_engines, values,
};
use crate::operators::applied_balance_before;
use crate::rows::ledger_entry;
use crate::*;
use billpay_domain::{AccountId, Kobo};
use std::sync::LazyLock;

for_both_engines! {
    pub trait WalletStore {
        /// A point read on the request path.
        fn balance(account: AccountId) -> Kobo = here |tx| balance_of(tx, account);
        /// The buyer's home, read at once on the request path in one read
        /// (a few rows by indexed keys): the unexpired session's account
        /// with its balance, the `recent` latest purchases, the accounts
        /// reserved to fund the wallet.
        fn session_home(token_hash: &str, recent: u32) -> Option<SessionHome>
            = here opened |tx| session_home(tx, &token_hash, recent);
        /// An operator's credit (`billpay wallet credit`): [`Self::credit_from`]
        /// with [`CreditSource::Operator`].
        fn credit(account: AccountId, amount: Kobo, reference: &str) -> Credit
            = write |tx| credit(tx, account, amount, &CreditSource::Operator, &reference);
        /// Credits once per (account, source, reference); a repeat is `applied: false`.
        fn credit_from(account: AccountId, amount: Kobo, source: CreditSource, reference: &str)
            -> Credit = write |tx| credit(tx, account, amount, &source, &reference);
        /// Newest first.
        fn ledger(account: AccountId, limit: u32) -> Vec<LedgerEntry>
            = read |tx| ledger(tx, account, limit);
        fn ledger_sum(account: AccountId) -> Kobo = read |tx| ledger_sum(tx, account);
        /// The entries of one transaction (its debit, and its refund if any).
        fn ledger_for_transaction(code: &str) -> Vec<LedgerEntry>
            = read |tx| of_transaction(tx, &code);
    }
}

/// The account's balance (`NotFound` when there is no such account).
pub(crate) async fn balance_of<T: ReadTx>(tx: &T, account: AccountId) -> Result<Kobo, T::Error> {
    balance(tx, account, "SELECT balance FROM accounts WHERE id = ?1").await
}

async fn session_home<T: ReadTx>(
    tx: &T,
    token_hash: &str,
    recent: u32,
) -> Result<Option<SessionHome>, T::Error> {
    let Some(account) = super::sessions::account_of(tx, token_hash).await? else {
        return Ok(None);
    };
    let latest = TxFilter {
        account_id: Some(account.id),
        limit: recent,
        ..TxFilter::default()
    };
    let wallet = WalletView {
        recent: super::purchases::list(tx, &latest).await?,
        reserved: super::funding::reserved(tx, Some(account.id)).await?,
    };
    Ok(Some(SessionHome { account, wallet }))
}

/// [`balance_of`], the row locked until the transaction ends: PostgreSQL's
/// `FOR UPDATE`; SQLite's one writer holds every row already.
pub(crate) async fn balance_locked<T: Tx>(tx: &T, account: AccountId) -> Result<Kobo, T::Error> {
    balance(tx, account, BALANCE_LOCKED.sql(T::ENGINE)).await
}

/// The balance, its row locked until the transaction ends.
static BALANCE_LOCKED: PerEngine = PerEngine::new(|engine| {
    format!(
        "SELECT balance FROM accounts WHERE id = ?1{}",
        engine.for_update()
    )
});

async fn balance<T: ReadTx>(tx: &T, account: AccountId, sql: &str) -> Result<Kobo, T::Error> {
    const COLUMNS: &str = "balance";
    let found = tx
        .query_opt(sql, &[&account.to_string()], |row| row.get(col!("balance")))
        .await?;
    Ok(found.ok_or(StoreError::NotFound("account"))?)
}

/// A credit once per (account, source, reference), inside the caller's transaction.
pub(crate) async fn credit<T: Tx>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    source: &CreditSource,
    reference: &str,
) -> Result<Credit, T::Error> {
    // The wallet's row lock orders credits of one account, so the check
    // below sees every credit committed before ours.
    let balance = balance_locked(tx, account).await?;
    if reference_seen(tx, account, source, reference).await? {
        return Ok(Credit {
            balance,
            applied: false,
        });
    }
    let balance = post_ledger(tx, account, amount, Entry::Credit(source, reference)).await?;
    Ok(Credit {
        balance,
        applied: true,
    })
}

/// An operator's debit once per reference, with its log line (the balances
/// before and after), inside the caller's transaction.
pub(crate) async fn debit<T: Tx>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    reference: &str,
    log: &NewLogEntry,
) -> Result<Credit, T::Error> {
    let balance = balance_locked(tx, account).await?;
    if reference_seen(tx, account, &CreditSource::Operator, reference).await? {
        return Ok(Credit {
            balance,
            applied: false,
        });
    }
    let moved = Kobo(-amount.0);
    let after = post_ledger(tx, account, moved, Entry::OperatorDebit(reference)).await?;
    super::operators::append(tx, &log.clone().with_balances(balance, after)).await?;
    Ok(Credit {
        balance: after,
        applied: true,
    })
}

/// Whether `account` has a ledger entry with this source's `reference`
/// (PostgreSQL: callers hold the wallet's row lock).
pub(crate) async fn reference_seen<T: Tx>(
    tx: &T,
    account: AccountId,
    source: &CreditSource,
    reference: &str,
) -> Result<bool, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT EXISTS(SELECT 1 FROM ledger WHERE account_id = ?1
             AND {CREDIT_SOURCE_OR_OPERATOR} = ?2 AND credit_reference = ?3) AS found"
        )
    });
    const COLUMNS: &str = "found";
    let params: [&dyn Param; 3] = [&account.to_string(), &source.as_str(), &reference];
    tx.query_one(&SQL, &params, |row| row.get(col!("found")))
        .await
}

/// Why a wallet moves, and what the ledger entry refers to.
pub(crate) enum Entry<'a> {
    /// A credit, by its source and reference.
    Credit(&'a CreditSource, &'a str),
    /// A purchase's debit, by the transaction's code.
    Debit(&'a str),
    /// A failed purchase's refund, by the transaction's code.
    Refund(&'a str),
    /// A bank transfer's payment, by its gateway reference and funding event.
    Funding {
        source: &'a CreditSource,
        reference: &'a str,
        funding_id: &'a str,
    },
    /// The operator's fee on a funding (a negative amount), by its event.
    Fee(&'a str),
    /// An operator's debit, by the operator's reference (no purchase).
    OperatorDebit(&'a str),
    /// A self-service upgrade's fee (a negative amount), by the customer's
    /// reference (source `upgrade`: once per account and reference).
    UpgradeFee(&'a str),
}

/// Moves a wallet by `amount` (signed) and appends the matching ledger
/// entry; refused below zero.
pub(crate) async fn post_ledger<T: Tx>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    entry: Entry<'_>,
) -> Result<Kobo, T::Error> {
    let moved = move_balance(tx, account, amount, entry).await?;
    Ok(moved.ok_or(Refusal::InsufficientBalance)?)
}

/// Gives a failed purchase's `amount` back to its wallet, with its ledger
/// entry: a credit never refuses, so a guarded write's change may make it.
pub(crate) async fn refund<T: Statements>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    code: &str,
) -> Result<Kobo, T::Error> {
    let moved = move_balance(tx, account, amount, Entry::Refund(code)).await?;
    moved.ok_or_else(|| {
        BackendError::new(format!("a refund to {account} left it below zero")).into()
    })
}

/// The wallet moved and its entry appended; its balance after, or `None`
/// (nothing changed) where the move would leave it below zero.
async fn move_balance<T: Statements>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    entry: Entry<'_>,
) -> Result<Option<Kobo>, T::Error> {
    const COLUMNS: &str = "balance";
    // Read back, not `RETURNING` (docs/decisions.md, "No temporary B-tree on a
    // purchase's path").
    let moved = "UPDATE accounts SET balance = balance + ?1 WHERE id = ?2 AND balance + ?1 >= 0";
    let account = account.to_string();
    if tx.execute(moved, &[&amount.0, &account]).await? == 0 {
        return Ok(None);
    }
    let balance = "SELECT balance FROM accounts WHERE id = ?1";
    let balance_after: i64 = tx
        .query_one(balance, &[&account], |row| row.get(col!("balance")))
        .await?;
    let moved = Moved {
        amount,
        balance_after: Kobo(balance_after),
        created_at: &now_rfc3339(),
    };
    append_entry(tx, &account, moved, entry).await?;
    Ok(Some(Kobo(balance_after)))
}

/// A wallet's move, as its ledger entry records it.
pub(crate) struct Moved<'a> {
    pub amount: Kobo,
    pub balance_after: Kobo,
    pub created_at: &'a str,
}

/// Appends the ledger entry of a move already made (`post_ledger`).
pub(crate) async fn append_entry<T: Statements>(
    tx: &T,
    account: &str,
    moved: Moved<'_>,
    entry: Entry<'_>,
) -> Result<(), T::Error> {
    let row = LedgerRow::new(account, moved, entry);
    LEDGER.execute(tx, &row.params()).await?;
    Ok(())
}

/// Appends the ledger entries of moves already made (a placement's orders,
/// their wallets debited once each), in order: one statement for all.
pub(crate) async fn append_entries<T: Statements>(
    tx: &T,
    rows: &[LedgerRow<'_>],
) -> Result<(), T::Error> {
    let params: Vec<&dyn Param> = rows.iter().flat_map(LedgerRow::params).collect();
    LEDGER.execute(tx, &params).await?;
    Ok(())
}

/// The ledger's `INSERT`, of one entry or of many ([`LedgerRow::params`]).
static LEDGER: ManyRows = ManyRows::new(9, |width, rows| {
    let head = "INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, \
                credit_reference, created_at, credit_source, funding_id) VALUES";
    values(
        head,
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        "",
        width,
        rows,
    )
});

/// A ledger entry as its row is written.
pub(crate) struct LedgerRow<'a> {
    account: &'a str,
    amount: i64,
    kind: &'static str,
    balance_after: i64,
    transaction_code: Option<&'a str>,
    credit_reference: Option<&'a str>,
    credit_source: Option<&'a str>,
    created_at: &'a str,
    funding_id: Option<&'a str>,
}

impl<'a> LedgerRow<'a> {
    pub(crate) fn new(account: &'a str, moved: Moved<'a>, entry: Entry<'a>) -> Self {
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
                Some((&CreditSource::Operator, reference)),
                None,
            ),
            Entry::UpgradeFee(reference) => (
                LedgerKind::Debit,
                None,
                Some((&CreditSource::Upgrade, reference)),
                None,
            ),
        };
        LedgerRow {
            account,
            amount: moved.amount.0,
            kind: kind.as_str(),
            balance_after: moved.balance_after.0,
            transaction_code,
            credit_reference: credit.map(|(_, reference)| reference),
            credit_source: credit.map(|(source, _)| source.as_str()),
            created_at: moved.created_at,
            funding_id,
        }
    }

    /// Its values, in [`LEDGER`]'s order.
    fn params(&self) -> [&dyn Param; 9] {
        [
            &self.account,
            &self.amount,
            &self.kind,
            &self.balance_after,
            &self.transaction_code,
            &self.credit_reference,
            &self.created_at,
            &self.credit_source,
            &self.funding_id,
        ]
    }
}

/// [`debit_checked`]'s statement: `?1` a wallet, `?2` its total, and so on,
/// one `CASE` arm each.
pub(crate) static DEBITS: ManyRows = ManyRows::new(2, |_, rows| {
    let total: String = (0..rows)
        .map(|n| format!(" WHEN ?{} THEN CAST(?{} AS BIGINT)", 2 * n + 1, 2 * n + 2))
        .collect();
    let ids: Vec<String> = (0..rows).map(|n| format!("?{}", 2 * n + 1)).collect();
    format!(
        "UPDATE accounts SET balance = balance - CASE id{total} END
         WHERE id IN ({}) AND balance - CASE id{total} END >= 0",
        ids.join(", ")
    )
});

/// Debits each wallet of `totals` by its total, the sum of the purchases a
/// placement checked against the balance it read under the wallet's lock,
/// in one statement (a few for many wallets, [`ManyRows`]): a wallet that
/// moved under that lock is a broken invariant, and fails the transaction.
/// The wallets are distinct.
pub(crate) async fn debit_checked<T: Statements>(
    tx: &T,
    totals: &[(AccountId, Kobo)],
) -> Result<(), T::Error> {
    let ids: Vec<String> = totals
        .iter()
        .map(|(account, _)| account.to_string())
        .collect();
    let params: Vec<&dyn Param> = ids
        .iter()
        .zip(totals)
        .flat_map(|(id, (_, total))| [id as &dyn Param, &total.0])
        .collect();
    if DEBITS.execute(tx, &params).await? == totals.len() as u64 {
        return Ok(());
    }
    let ids = ids.join(", ");
    Err(BackendError::new(format!("one of the wallets {ids} moved under its lock")).into())
}

/// Locks the wallets of `accounts` (sorted: every placement takes them in
/// that order, so placements never deadlock) until the transaction ends:
/// PostgreSQL's `FOR UPDATE`, the statements sent together; SQLite's one
/// writer holds every row already.
pub(crate) async fn lock_all<T: ReadTx>(tx: &T, accounts: &[AccountId]) -> Result<(), T::Error> {
    if T::ENGINE == Engine::Sqlite {
        return Ok(());
    }
    let sql = BALANCE_LOCKED.sql(T::ENGINE);
    // Prepared first, so the locks are sent, and taken, in order.
    tx.prepare(sql).await?;
    let locks = accounts.iter().map(|account| {
        let account = account.to_string();
        async move { tx.query_opt(sql, &[&account], |_| Ok(())).await }
    });
    futures_util::future::try_join_all(locks).await?;
    Ok(())
}

async fn ledger<T: ReadTx>(
    tx: &T,
    account: AccountId,
    limit: u32,
) -> Result<Vec<LedgerEntry>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {LEDGER_COLUMNS} FROM ledger WHERE account_id = ?1 ORDER BY id DESC LIMIT CAST(?2 AS BIGINT)"
        )
    });
    let params: [&dyn Param; 2] = [&account.to_string(), &i64::from(limit)];
    tx.query_all(&SQL, &params, ledger_entry).await
}

async fn ledger_sum<T: ReadTx>(tx: &T, account: AccountId) -> Result<Kobo, T::Error> {
    const COLUMNS: &str = "total";
    let sql = "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS total FROM ledger
               WHERE account_id = ?1";
    tx.query_one(sql, &[&account.to_string()], |row| row.get(col!("total")))
        .await
}

async fn of_transaction<T: ReadTx>(tx: &T, code: &str) -> Result<Vec<LedgerEntry>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT {LEDGER_COLUMNS} FROM ledger WHERE transaction_code = ?1 ORDER BY id")
    });
    tx.query_all(&SQL, &[&code], ledger_entry).await
}

/// An operator's credit; its line only when it applied.
pub(crate) async fn credit_logged<T: Tx>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    reference: &str,
    log: &NewLogEntry,
) -> Result<Credit, T::Error> {
    let credit = credit(tx, account, amount, &CreditSource::Operator, reference).await?;
    if credit.applied {
        let before = applied_balance_before(&credit, amount);
        let log = log.clone().with_balances(before, credit.balance);
        super::operators::append(tx, &log).await?;
    }
    Ok(credit)
}
