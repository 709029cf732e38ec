//! Purchases: placing them (one path for both engines: [`place`]), the
//! test-mode check and reading them back. Only what carries a placement to
//! [`place`] differs by engine: SQLite places each order alone, a job of the
//! writer's group commit ([`place_alone`], the `guarded` kind); PostgreSQL
//! in per-wallet lanes, a batch per transaction (`postgres/purchases.rs`).

use super::limits::{self, Passed, PurchaseReads, RecipientState, Spent, WalletState};
use super::wallet::{self, Entry, LedgerRow, Moved};
use crate::clock::{new_code, now_ms, rfc3339};
use crate::columns::TX_COLUMNS;
use crate::db::{
    Changing, Engine, Guarded, ManyRows, Param, PerEngine, ReadTx, Reading, Statements, Tx,
    for_both_engines, values,
};
use crate::listing::{Filters, Listing};
use crate::rows::{daily_spend_row, transaction};
use crate::*;
use billpay_domain::{AccountId, Kobo, TxStatus};
use futures_util::future::try_join_all;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

for_both_engines! {
    pub trait PurchaseStore {
        /// Test mode: the checks of a live purchase, changing nothing, as a point read on the
        /// request path; returns the balance. The recipient is checked against the blocklist and
        /// its daily limit.
        fn check_purchase(account: AccountId, reference: &str, recipient: &str, amount: Kobo)
            -> Kobo = here |tx| limits::check_purchase(tx, account, &reference, &recipient, amount);
        /// One atomic write: the reference, the blocklist, limits and velocity rules, the debit,
        /// the transaction row (`processing`, or held for review when a rule says so), its ledger
        /// entry and its usage.
        fn place_purchase(new: NewPurchase => new) -> Transaction
            = guarded opened |tx| place_alone(tx, new),
            postgres |store| store.place_purchase_here(new);
        fn transaction(account: Option<AccountId>, lookup: TxLookup) -> Option<Transaction>
            = read opened |tx| look_up(tx, account, lookup);
        /// Newest first, filtered, paginated with `limit`/`offset`.
        fn transactions(filter: TxFilter) -> Vec<Transaction> = read opened |tx| list(tx, &filter);
        /// Spend per UTC day and product since `since` (RFC 3339), failed purchases excluded.
        fn daily_spend(account: AccountId, since: &str) -> Vec<DailySpend>
            = read |tx| daily_spend(tx, account, &since);
    }
}

/// A purchase to place: its code drawn, its details as stored (JSON text),
/// its time.
pub(crate) struct Order {
    pub(crate) new: NewPurchase,
    pub(crate) code: String,
    details: String,
    now_ms: i64,
    created_at: String,
}

impl Order {
    pub(crate) fn new(new: NewPurchase) -> Order {
        let now_ms = now_ms();
        Order {
            code: new_code("BP"),
            details: new.details.to_json(),
            created_at: rfc3339(now_ms),
            now_ms,
            new,
        }
    }

    /// Two purchases drew the same code (same millisecond, same 48 random
    /// bits): this one draws again.
    pub(crate) fn draw_code_again(&mut self) {
        self.code = new_code("BP");
    }
}

/// One order placed on its own: SQLite's, a job of the writer's group
/// commit (its one writer orders every debit, so limits cannot be raced).
async fn place_alone<'a, T: Tx + 'a>(
    tx: Guarded<'a, T>,
    new: NewPurchase,
) -> Result<Transaction, T::Error> {
    let order = Order::new(new);
    let mut placed = place(tx, &[&order]).await?;
    Ok(placed.pop().expect("one outcome per order")?)
}

/// Places `orders` (sorted by account: wallets are locked in that order)
/// inside `tx`; what each came to, placed or refused exactly as it would be
/// alone after the ones before it. Each wallet is locked and read once, each
/// order then checked against its wallet as the orders before it left it
/// (the reference, the blocklist, the limits and velocity rules, the
/// balance), and only then is anything written: a guarded write
/// ([`Guarded`]), every refusal in its decision. The statements of each
/// step are sent together (one round trip on PostgreSQL), so a batch of any
/// size costs four; an error fails the whole transaction.
pub(crate) async fn place<'a, 'o, T: Tx + 'a>(
    tx: impl Into<Guarded<'a, T>>,
    orders: &[&'o Order],
) -> Result<Vec<StoreResult<Transaction>>, T::Error> {
    let today = limits::Today::now();
    let today = &today;
    let decide = |tx: Reading<'a, T>| async move { decide_all(&tx, orders, today).await };
    let change = |tx: Changing<'a, T>, (outcomes, placed): Decided<'o>| async move {
        placed.write(&tx, today).await?;
        Ok(outcomes)
    };
    tx.into().run(decide, change).await
}

/// A placement's decision: each order's outcome, and what to write.
type Decided<'o> = (Vec<StoreResult<Transaction>>, Placements<'o>);

/// What each order comes to, and the placements to write.
async fn decide_all<'o, T: ReadTx>(
    tx: &T,
    orders: &[&'o Order],
    today: &limits::Today,
) -> Result<Decided<'o>, T::Error> {
    let mut accounts: Vec<AccountId> = orders.iter().map(|o| o.new.account_id).collect();
    accounts.dedup();
    // Locked before anything is read, so every read sees the purchases
    // committed before this transaction took the wallet.
    wallet::lock_all(tx, &accounts).await?;
    let states = try_join_all(accounts.iter().map(|a| limits::wallet_state(tx, *a, today)));
    let wallets: HashMap<AccountId, Wallet> = accounts
        .iter()
        .zip(states.await?)
        .filter_map(|(account, state)| Some((*account, Wallet::new(state?))))
        .collect();
    let reads = orders.iter().map(|order| {
        let new = &order.new;
        let reads = wallets
            .get(&new.account_id)
            .map(|w| w.reads)
            .unwrap_or_default();
        let purchase = (
            new.account_id,
            new.reference.as_str(),
            new.recipient.as_str(),
        );
        limits::purchase_reads(tx, purchase, today, reads)
    });
    let reads = try_join_all(reads).await?;
    let mut placed = Placements::new(wallets);
    let outcomes = orders
        .iter()
        .zip(reads)
        .map(|(order, read)| placed.decide(order, read))
        .collect();
    Ok((outcomes, placed))
}

/// A wallet as a placement's orders leave it.
struct Wallet {
    state: crate::limits::LimitState,
    reads: limits::RecipientReads,
    /// Each recipient's side as read, then as the orders leave it.
    recipients: HashMap<String, RecipientState>,
    spent: Spent,
}

impl Wallet {
    fn new(read: WalletState) -> Wallet {
        Wallet {
            state: read.state,
            reads: read.reads,
            recipients: HashMap::new(),
            spent: Spent::default(),
        }
    }
}

/// The orders a placement accepted, to be written together, and their
/// wallets as those orders leave them.
struct Placements<'o> {
    rows: Vec<(&'o Order, Kobo, Kobo, Option<&'static str>)>,
    references: HashSet<(AccountId, &'o str)>,
    wallets: HashMap<AccountId, Wallet>,
}

impl<'o> Placements<'o> {
    fn new(wallets: HashMap<AccountId, Wallet>) -> Self {
        Placements {
            rows: Vec::new(),
            references: HashSet::new(),
            wallets,
        }
    }

    /// Checks `order` against its wallet as the orders before it left it;
    /// placed, it is added to the wallet and to what is written.
    fn decide(&mut self, order: &'o Order, read: PurchaseReads) -> StoreResult<Transaction> {
        let new = &order.new;
        let wallet = self
            .wallets
            .get_mut(&new.account_id)
            .ok_or(StoreError::NotFound("account"))?;
        let reference = (new.account_id, new.reference.as_str());
        if read.taken || self.references.contains(&reference) {
            return Err(Refusal::DuplicateReference.into());
        }
        let recipient = wallet
            .recipients
            .entry(new.recipient.clone())
            .or_insert(read.recipient);
        let state = limits::with_recipient(&wallet.state, *recipient);
        let passed: Passed = limits::check(&state, new.amount)?;
        let before = crate::rules::check_purchase(state.balance, false, new.amount)?;
        let after = Kobo(before.0 - new.amount.0);
        let spent = (new.amount, new.recipient.as_str());
        passed.spend(spent, &mut wallet.state, recipient, &mut wallet.spent);
        self.references.insert(reference);
        self.rows.push((order, before, after, passed.hold));
        Placed {
            new,
            code: &order.code,
            details: &order.details,
            created_at: &order.created_at,
            balance_before: before,
            balance_after: after,
            held_for: passed.hold.map(str::to_owned),
        }
        .transaction()
    }

    /// Every row of the accepted orders, in one round: the transactions, their
    /// ledger entries (in order, so each wallet's entries run), the wallets'
    /// debits and their usage, each table's rows in one statement
    /// ([`ManyRows`]).
    async fn write<T: Statements>(&self, tx: &T, today: &limits::Today) -> Result<(), T::Error> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let rows: Vec<TransactionRow> = self
            .rows
            .iter()
            .map(|row| TransactionRow::new(*row))
            .collect();
        let placed: Vec<&dyn Param> = rows.iter().flat_map(TransactionRow::params).collect();
        let entries: Vec<_> = self
            .rows
            .iter()
            .zip(&rows)
            .map(|((order, _, after, _), row)| {
                let moved = Moved {
                    amount: Kobo(-order.new.amount.0),
                    balance_after: *after,
                    created_at: &order.created_at,
                };
                LedgerRow::new(&row.account, moved, Entry::Debit(&order.code))
            })
            .collect();
        let spent: Vec<(AccountId, &Spent)> = self
            .wallets
            .iter()
            .filter(|(_, w)| w.spent.count > 0)
            .map(|(account, w)| (*account, &w.spent))
            .collect();
        let totals: Vec<(AccountId, Kobo)> = spent.iter().map(|(a, s)| (*a, s.value)).collect();
        futures_util::try_join!(
            TRANSACTIONS.execute(tx, &placed),
            wallet::append_entries(tx, &entries),
            wallet::debit_checked(tx, &totals),
            limits::record_usage(tx, &spent, today)
        )?;
        Ok(())
    }
}

/// The transactions' `INSERT`, of one placed order or of a batch's.
static TRANSACTIONS: ManyRows = ManyRows::new(20, |width, rows| {
    let head = "INSERT INTO transactions (code, account_id, key_id, reference, product, provider, \
                plan_id, label, recipient, amount, details, batch_id, status, message, \
                balance_before, balance_after, next_attempt_at, created_at, face_value, tier, \
                held_for) VALUES";
    let row = "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'processing', ?20, ?13, ?14, \
               ?15, ?16, ?17, ?18, ?19)";
    values(head, row, "", width, rows)
});

/// A placed order's transaction row, due now unless it is held.
struct TransactionRow<'o> {
    order: &'o Order,
    account: String,
    key: String,
    service: &'static str,
    batch_id: Option<String>,
    before: i64,
    after: i64,
    due: i64,
    held_for: Option<&'static str>,
}

impl<'o> TransactionRow<'o> {
    fn new(
        (order, before, after, held_for): (&'o Order, Kobo, Kobo, Option<&'static str>),
    ) -> Self {
        let new = &order.new;
        TransactionRow {
            account: new.account_id.to_string(),
            key: new.key_id.to_string(),
            service: new.product.service(),
            batch_id: new.batch_id(),
            before: before.0,
            after: after.0,
            // A held purchase is not due until an owner releases it.
            due: if held_for.is_some() {
                limits::HELD_UNTIL_MS
            } else {
                order.now_ms
            },
            held_for,
            order,
        }
    }

    /// Its values, in [`TRANSACTIONS`]' order.
    fn params(&self) -> [&dyn Param; 20] {
        let (order, new) = (self.order, &self.order.new);
        [
            &order.code,
            &self.account,
            &self.key,
            &new.reference,
            &self.service,
            &new.provider,
            &new.plan_id,
            &new.label,
            &new.recipient,
            &new.amount.0,
            &order.details,
            &self.batch_id,
            &self.before,
            &self.after,
            &self.due,
            &order.created_at,
            &new.face_value.0,
            &new.tier,
            &self.held_for,
            &PROCESSING,
        ]
    }
}

/// Whose transactions a lookup searches.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    Account,
    All,
}

/// Two statements, not `?2 IS NULL OR …`: with that SQLite cannot use the
/// (account_id, reference) index and scans every row.
pub(crate) async fn look_up<T: ReadTx>(
    tx: &T,
    account: Option<AccountId>,
    lookup: TxLookup,
) -> Result<Option<Transaction>, T::Error> {
    let (column, value) = lookup.column_and_value();
    match account {
        Some(account) => {
            let sql = lookup_sql(column, Scope::Account);
            tx.query_opt(sql, &[&value, &account.to_string()], transaction)
                .await
        }
        // The operator's lookup across accounts (a scan for a reference).
        None => {
            tx.query_opt(lookup_sql(column, Scope::All), &[&value], transaction)
                .await
        }
    }
}

/// A placed purchase's message until it is final.
pub(crate) const PROCESSING: &str = "Transaction is processing";

/// A purchase just placed: both engines answer a placement with the
/// transaction built from it, exactly as reading its row back would give it,
/// instead of reading it back.
pub(crate) struct Placed<'a> {
    pub new: &'a NewPurchase,
    pub code: &'a str,
    /// The details as stored (JSON text).
    pub details: &'a str,
    pub created_at: &'a str,
    pub balance_before: Kobo,
    pub balance_after: Kobo,
    pub held_for: Option<String>,
}

impl Placed<'_> {
    pub(crate) fn transaction(self) -> StoreResult<Transaction> {
        let new = self.new;
        Ok(Transaction {
            code: self.code.to_owned(),
            account_id: new.account_id,
            key_id: new.key_id,
            reference: new.reference.clone(),
            product: new.product,
            provider: new.provider.clone(),
            plan_id: new.plan_id.clone(),
            label: new.label.clone(),
            recipient: new.recipient.clone(),
            amount: new.amount,
            face_value: new.face_value,
            cost: None,
            tier: new.tier.clone(),
            details: serde_json::from_str(self.details).map_err(StoreError::caused)?,
            status: TxStatus::Processing,
            message: PROCESSING.into(),
            balance_before: self.balance_before,
            balance_after: self.balance_after,
            result: serde_json::json!({}),
            attempts: 0,
            submitted: false,
            created_at: self.created_at.to_owned(),
            completed_at: None,
            supplier: None,
            supplier_reference: None,
            held_for: self.held_for,
            review_requested_at: None,
        })
    }
}

/// The statement looking a transaction up by `column` (one of
/// `TxLookup::column_and_value`'s) in `scope`, formatted once, not per
/// request.
fn lookup_sql(column: &str, scope: Scope) -> &'static str {
    static STATEMENTS: LazyLock<Vec<(&str, Scope, String)>> = LazyLock::new(|| {
        let by = |column| {
            let select = format!("SELECT {TX_COLUMNS} FROM transactions");
            [
                (
                    column,
                    Scope::Account,
                    format!("{select} WHERE account_id = ?2 AND {column} = ?1"),
                ),
                (
                    column,
                    Scope::All,
                    format!("{select} WHERE {column} = ?1 ORDER BY created_at LIMIT 1"),
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

/// The listing, newest first.
pub(crate) async fn list<T: ReadTx>(
    tx: &T,
    filter: &TxFilter,
) -> Result<Vec<Transaction>, T::Error> {
    let listing = listing(T::ENGINE, filter);
    tx.query_all(&listing.sql, &listing.params(), transaction)
        .await
}

/// The listing's statement: an account's page reads the account's index,
/// the needs-review list the processing rows' partial index (the status
/// and the product written out as their own text), every purchase the
/// creation-time index.
pub(crate) fn listing(engine: Engine, filter: &TxFilter) -> Listing {
    // An account's processing page keeps to the account's index.
    let table = match (filter.status, filter.account_id) {
        (Some(TxStatus::Processing), None) => processing_rows(engine),
        _ => "transactions",
    };
    let instr = match engine {
        Engine::Sqlite => "instr",
        Engine::Postgres => "strpos",
    };
    let search = format!("({instr}(reference, ?) > 0 OR {instr}(code, ?) > 0)");
    Filters::default()
        .and("account_id = ?", filter.account_id.map(|a| a.to_string()))
        .and("created_at >= ?", filter.created_from.clone())
        .and("created_at < ?", filter.created_until.clone())
        .and(
            "(created_at < ? OR review_requested_at IS NOT NULL)",
            filter.review_due_before.clone(),
        )
        .and(&search, filter.search.clone())
        .and("provider = ?", filter.provider.clone())
        .and("supplier = ?", filter.supplier.clone())
        .and(
            &format!("{instr}(recipient, ?) > 0"),
            filter.recipient.clone(),
        )
        .and_sql(filter.status.map(|s| format!("status = '{}'", s.as_str())))
        .and_sql(
            filter
                .product
                .map(|p| format!("product = '{}'", p.service())),
        )
        .and_sql(
            filter
                .review_requested
                .then(|| "review_requested_at IS NOT NULL".into()),
        )
        .and_sql(filter.not_held.then(|| "held_for IS NULL".into()))
        .page(
            &format!("SELECT {TX_COLUMNS} FROM {table}"),
            "ORDER BY created_at DESC, code DESC",
            filter.limit.max(1),
            Some(filter.offset),
        )
}

/// The processing rows, the backlog, read through their partial index
/// (`transactions_due`): SQLite's planner keeps no statistics and would
/// rather read every purchase in the creation-time index's order than sort
/// the few processing ones.
pub(crate) fn processing_rows(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "transactions INDEXED BY transactions_due",
        Engine::Postgres => "transactions",
    }
}

/// Spend per Lagos day (UTC+1 all year: `clock::LAGOS`) and product.
async fn daily_spend<T: ReadTx>(
    tx: &T,
    account: AccountId,
    since: &str,
) -> Result<Vec<DailySpend>, T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| {
        // The Lagos day of a stored UTC time: date arithmetic is each engine's own.
        let day = match engine {
            Engine::Sqlite => "date(created_at, '+1 hour')",
            Engine::Postgres => {
                "to_char((created_at::timestamptz AT TIME ZONE 'UTC') + INTERVAL '1 hour',
                         'YYYY-MM-DD')"
            }
        };
        format!(
            "SELECT {day} AS day, product,
                 COUNT(*) AS purchases, CAST(SUM(amount) AS BIGINT) AS spent
             FROM transactions WHERE account_id = ?1 AND created_at >= ?2 AND status != 'failed'
             GROUP BY day, product ORDER BY day, product"
        )
    });
    let sql = SQL.sql(T::ENGINE);
    tx.query_all(sql, &[&account.to_string(), &since], daily_spend_row)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::to_dollar_placeholders;
    use crate::postgres::PostgresStore;
    use crate::postgres::scratch::ScratchDatabase;

    /// `accounts` accounts with ₦1,000,000 and a key each, and `each` orders
    /// of ₦100 airtime by each, sorted by account as a lane sorts them.
    async fn orders_of(store: &dyn Store, accounts: usize, each: usize) -> Vec<Order> {
        let mut orders = Vec::new();
        for n in 0..accounts {
            let account = NewAccount {
                name: "Many".into(),
                email: format!("many{n}@example.com"),
                password_hash: None,
                kyc_level: crate::limits::OPERATOR_CREATED_LEVEL,
            };
            let account = store.create_account(account).await.unwrap();
            let key = NewApiKey {
                account_id: account.id,
                name: None,
                key_hash: format!("many{n}"),
                display_prefix: "bp".into(),
                announce: false,
            };
            let key = store.create_api_key(key).await.unwrap();
            let funds = Kobo::from_naira(1_000_000);
            store.credit(account.id, funds, "fund").await.unwrap();
            let purchase = |n| crate::sqlite::purchase_path::purchase(account.id, key.id, n);
            orders.extend((0..each as u32).map(|n| Order::new(purchase(n))));
        }
        orders.sort_by_key(|o| o.new.account_id);
        orders
    }

    /// Each wallet of `orders` debited by its orders alone, their ledger
    /// entries in the orders' order (each balance after the one before less
    /// ₦100), its purchases and its usage today counted.
    async fn check_written(store: &dyn Store, orders: &[Order]) {
        let mut accounts: Vec<AccountId> = orders.iter().map(|o| o.new.account_id).collect();
        accounts.dedup();
        for account in accounts {
            let codes: Vec<&str> = orders
                .iter()
                .filter(|o| o.new.account_id == account)
                .map(|o| o.code.as_str())
                .collect();
            let spent = 100 * codes.len() as i64;
            let balance = store.balance(account).await.unwrap();
            assert_eq!(balance, Kobo::from_naira(1_000_000 - spent));
            let mut debits = store.ledger(account, 1_000).await.unwrap();
            debits.retain(|e| e.kind == LedgerKind::Debit);
            debits.reverse();
            let debited: Vec<&str> = debits
                .iter()
                .map(|e| e.transaction_code.as_deref().unwrap())
                .collect();
            assert_eq!(debited, codes, "in the orders' order");
            for (n, entry) in debits.iter().enumerate() {
                assert_eq!(entry.amount, Kobo(-10_000));
                assert_eq!(entry.balance_after.0, 100_000_000 - 10_000 * (n as i64 + 1));
            }
            let filter = TxFilter {
                account_id: Some(account),
                limit: 1_000,
                ..TxFilter::default()
            };
            assert_eq!(store.transactions(filter).await.unwrap().len(), codes.len());
            let usage = store.account_limits(account).await.unwrap().usage;
            let counted = (usage.daily_value, usage.daily_count);
            assert_eq!(counted, (Kobo::from_naira(spent), codes.len() as i64));
        }
    }

    /// A lane's batch larger than one statement's rows ([`ManyRows::MOST`]):
    /// 72 orders of 36 wallets, placed at once on both engines, are every
    /// purchase's row, each wallet's debit and usage, and its ledger entries
    /// in the orders' order, exactly as if placed one by one (three
    /// statements for the transactions, two for the debits).
    #[tokio::test]
    async fn a_batch_of_orders_is_written_a_statement_a_table_in_order_on_both_engines() {
        const WALLETS: usize = 36;
        const { assert!(WALLETS > ManyRows::MOST) };
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("many.db").display());
        let lite = crate::sqlite::SqliteStore::open(&url).await.unwrap();
        let orders = std::sync::Arc::new(orders_of(&lite, WALLETS, 2).await);
        let placing = orders.clone();
        let placed = lite
            .engine
            .write(move |conn| {
                let orders: Vec<&Order> = placing.iter().collect();
                crate::db::ready(place(&crate::sqlite::Lite(conn), &orders))
            })
            .await
            .unwrap();
        assert!(placed.iter().all(Result::is_ok));
        check_written(&lite, &orders).await;

        let Some(db) = ScratchDatabase::for_test().await else {
            return;
        };
        let pg = PostgresStore::open(&db.url).await.unwrap();
        let orders = std::sync::Arc::new(orders_of(&pg, WALLETS, 2).await);
        let placing = orders.clone();
        let placed = pg
            .write(move |t| {
                let orders = placing.clone();
                Box::pin(async move {
                    let orders: Vec<&Order> = orders.iter().collect();
                    place(&crate::postgres::Pg(t), &orders).await
                })
            })
            .await
            .unwrap();
        assert!(placed.iter().all(Result::is_ok));
        check_written(&pg, &orders).await;
        // The debit of 16 wallets reads the accounts' primary key, even as
        // a generic plan (a prepared statement's after five runs).
        let plan = pg
            .write(|t| {
                Box::pin(async move {
                    let sql = to_dollar_placeholders(wallet::DEBITS.sql(16));
                    t.batch_execute("SET LOCAL plan_cache_mode = force_generic_plan")
                        .await?;
                    t.batch_execute(&format!("PREPARE debits AS {sql}")).await?;
                    let args: Vec<String> = (0..16).map(|n| format!("'w{n}', 1")).collect();
                    let explain = format!("EXPLAIN EXECUTE debits({})", args.join(", "));
                    let rows = t.query(&explain, &[]).await?;
                    t.batch_execute("DEALLOCATE debits").await?;
                    Ok(rows
                        .iter()
                        .map(|r| r.get::<_, String>(0))
                        .collect::<Vec<_>>())
                })
            })
            .await
            .unwrap()
            .join("\n");
        assert!(plan.contains("accounts_pkey"), "{plan}");
    }

    /// PostgreSQL indexes the batch ids alone (migration 047): 20,000
    /// purchases, one in a hundred an e-pin's with a batch id, make an index
    /// of two pages (all 20,000, as the column's UNIQUE indexed them, took
    /// 152 kB); a lookup by batch id still walks it, and a purchase under a
    /// batch id already taken is still refused.
    #[tokio::test]
    async fn the_postgres_batch_id_index_holds_the_batch_ids_alone() {
        let Some(db) = ScratchDatabase::for_test().await else {
            return;
        };
        let store = PostgresStore::open(&db.url).await.unwrap();
        // Purchases `prefix || g` for each `g` of `rows`, every hundredth
        // with batch id `B || g`.
        let insert = |prefix: &str, rows: &str| {
            format!(
                "SET LOCAL session_replication_role = replica;
                 INSERT INTO transactions (code, account_id, key_id, reference, product,
                    provider, label, recipient, amount, details, batch_id, status, message,
                    balance_before, balance_after, next_attempt_at, created_at)
                 SELECT '{prefix}' || g, 'a', 'k', '{prefix}' || g, 'epin', 'mtn', 'MTN',
                    '08030000000', 100, '{{}}', CASE WHEN g % 100 = 0 THEN 'B' || g END,
                    'successful', '', 0, 0, g, '2026-12-01T00:00:00Z'
                 FROM {rows};
                 ANALYZE transactions"
            )
        };
        let run = |sql: String| {
            store.write(move |t| {
                let sql = sql.clone();
                Box::pin(async move { Ok(t.batch_execute(&sql).await?) })
            })
        };
        run(insert("T", "generate_series(1, 20000) g"))
            .await
            .unwrap();
        let (size, plan) = store
            .autocommit(|c| {
                Box::pin(async move {
                    let size = "SELECT pg_relation_size('transactions_batch_id')";
                    let size: i64 = c.query_one(size, &[]).await?.get(0);
                    let lookup = to_dollar_placeholders(lookup_sql("batch_id", Scope::All));
                    let rows = c.query(&format!("EXPLAIN {lookup}"), &[&"B100"]).await?;
                    let plan: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
                    Ok((size, plan.join("\n")))
                })
            })
            .await
            .unwrap();
        assert!(size <= 2 * 8192, "the index takes {size} bytes");
        assert!(plan.contains("transactions_batch_id"), "{plan}");
        // A purchase of a new code and reference, under batch id B100.
        let again = run(insert("U", "(VALUES (100)) AS v (g)")).await;
        let refused = again.unwrap_err().to_string();
        assert!(refused.contains("transactions_batch_id"), "{refused}");
    }
}
