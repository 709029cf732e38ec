//! Stored data: a wallet's history of purchases written straight into the
//! database (as billpay would have written them, with the sales rollup built
//! by the store's own backfill, so `billpay audit` passes), how long
//! `billpay audit` takes over it, and how fast the console's overview loads.

use super::*;

/// Writes `count` successful ₦50 purchases of `key` into the database, as
/// billpay would have: transaction, debit (the running balance kept), webhook
/// event, and the wallet's balance lowered by their sum.
pub(crate) async fn seed_purchases(database_url: &str, key: &Key, count: u64) {
    if billpay_store::is_postgres_url(database_url) {
        seed_postgres(database_url, key, count).await;
    } else {
        seed_sqlite(database_url, key, count);
    }
}

fn seed_sqlite(database_url: &str, key: &Key, count: u64) {
    let path = billpay_store::sqlite::path_from_url(database_url).unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(Duration::from_secs(30)).unwrap();
    let series = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)";
    let sql = format!(
        "BEGIN IMMEDIATE;
         {series} {transactions} SELECT printf('BPSEED%012d', i), ?1, ?2, printf('seed-%d', i), {values} FROM n;
         {rollup};
         {series} {ledger} SELECT ?1, -{PURCHASE_KOBO}, 'debit', {after}, printf('BPSEED%012d', i), {at} FROM n;
         {series} {events} SELECT printf('EVSEED%012d', i), printf('BPSEED%012d', i), ?1, ?2, {event} FROM n;
         UPDATE accounts SET balance = balance - {PURCHASE_KOBO} * ?3 WHERE id = ?1;
         COMMIT;",
        transactions = TRANSACTIONS,
        values = transaction_values("(SELECT balance FROM accounts WHERE id = ?1)", "1", SQLITE_PLACED),
        rollup = billpay_store::sales_rollup_backfill(),
        ledger = LEDGER,
        after = balance_after("(SELECT balance FROM accounts WHERE id = ?1)"),
        at = AT,
        events = EVENTS,
        event = EVENT_VALUES,
    );
    // One statement at a time: execute_batch takes no parameters.
    for statement in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let mut stmt = conn.prepare(statement).unwrap();
        let wanted = stmt.parameter_count();
        let params: [&dyn rusqlite::ToSql; 3] = [&key.account, &key.id, &(count as i64)];
        stmt.execute(&params[..wanted]).unwrap();
    }
    // The 1 GB written here is checkpointed and synced here, not left for the
    // server's first checkpoint: its `fsync` of the database took 311 ms on the
    // writer thread (strace), a stall of every purchase in flight that a
    // server which wrote its rows itself, 1 000 pages at a time, never has.
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
}

async fn seed_postgres(database_url: &str, key: &Key, count: u64) {
    let (mut client, connection) = tokio_postgres::connect(database_url, tokio_postgres::NoTls)
        .await
        .expect("PostgreSQL");
    tokio::spawn(connection);
    let tx = client.transaction().await.unwrap();
    let series = "FROM generate_series(1, $2::BIGINT) AS n(i) ORDER BY i";
    let code = "'BPSEED' || lpad(i::TEXT, 12, '0')";
    let balance = "(SELECT balance FROM accounts WHERE id = $1)";
    let (account, count) = (&key.account, &(count as i64));
    let by_account: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [account, count, &key.id];
    let statements = [
        format!(
            "{TRANSACTIONS} SELECT {code}, $1, $3, 'seed-' || i, {values} {series}",
            values = transaction_values(balance, "TRUE", POSTGRES_PLACED)
        ),
        format!(
            "{EVENTS} SELECT 'EVSEED' || lpad(i::TEXT, 12, '0'), {code}, $1, $3, {EVENT_VALUES} {series}"
        ),
    ];
    for sql in statements {
        tx.execute(&sql, &by_account).await.unwrap();
    }
    tx.execute(&billpay_store::sales_rollup_backfill(), &[])
        .await
        .unwrap();
    let ledger = format!(
        "{LEDGER} SELECT $1, -{PURCHASE_KOBO}, 'debit', {after}, {code}, {AT} {series}",
        after = balance_after(balance)
    );
    tx.execute(&ledger, &by_account[..2]).await.unwrap();
    let spent = format!(
        "UPDATE accounts SET balance = balance - {PURCHASE_KOBO} * $2::BIGINT WHERE id = $1"
    );
    tx.execute(&spent, &by_account[..2]).await.unwrap();
    tx.commit().await.unwrap();
}

const TRANSACTIONS: &str = "INSERT INTO transactions (code, account_id, key_id, reference, product,
    provider, label, recipient, amount, details, status, message, balance_before, balance_after,
    result, attempts, submitted, next_attempt_at, created_at, completed_at, supplier)";
const LEDGER: &str = "INSERT INTO ledger (account_id, amount, kind, balance_after,
    transaction_code, created_at)";
const EVENTS: &str = "INSERT INTO events (id, transaction_code, account_id, key_id, event,
    payload, status, attempts, next_attempt_at, created_at)";
const AT: &str = "'2026-01-01T00:00:00.000+00:00'";
const EVENT_VALUES: &str =
    "'airtime.purchase', '{}', 'skipped', 1, 0, '2026-01-01T00:00:01.000+00:00'";

/// The wallet after the `i`-th seeded purchase, from its balance before them.
fn balance_after(balance: &str) -> String {
    format!("{balance} - {PURCHASE_KOBO} * i")
}

/// A seeded transaction's columns after its reference, the `i`-th purchase,
/// placed (and completed) at `placed`.
fn transaction_values(balance: &str, submitted: &str, placed: &str) -> String {
    format!(
        "'airtime', 'mtn', 'MTN Airtime', '08031234567', {PURCHASE_KOBO}, '{{\"phone\":\"08031234567\"}}',
         'successful', 'Transaction successful', {balance} - {PURCHASE_KOBO} * (i - 1), {after},
         '{{}}', 1, {submitted}, 0, {placed}, {placed}, 'sandbox'",
        after = balance_after(balance)
    )
}

/// The `i`-th seeded purchase was placed 2.4 s × i before now: a million in
/// the last 28 days, so "this month" and the overview's 30 days hold them
/// (stored as billpay writes times: UTC, milliseconds, `+00:00`).
const SQLITE_PLACED: &str =
    "strftime('%Y-%m-%dT%H:%M:%f', 'now', printf('-%.1f seconds', i * 2.4)) || '+00:00'";
const POSTGRES_PLACED: &str = "to_char((now() AT TIME ZONE 'UTC') - i * INTERVAL '2.4 seconds',
    'YYYY-MM-DD\"T\"HH24:MI:SS.MS') || '+00:00'";

/// The console's overview (`GET /admin`, an owner signed in) over a
/// server's stored purchases: loads one at a time, the median and the slowest
/// (the first, with cold caches, among them).
pub(crate) fn overview_row(server: &Billpay, what: &str, stored: &str) -> Row {
    const LOADS: usize = 21;
    let cookie = server.console_session();
    let mut ms = Vec::with_capacity(LOADS);
    let mut errors = 0;
    for _ in 0..LOADS {
        let started = Instant::now();
        let status = server.get_page("/admin", &cookie);
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        errors += u64::from(!status.contains(" 200 "));
    }
    ms.sort_by(f64::total_cmp);
    let (median, slowest) = (ms[LOADS / 2], ms[LOADS - 1]);
    Row {
        what: what.into(),
        rate: 1000.0 / median,
        p50_ms: Some(median),
        p99_ms: None,
        max_ms: Some(slowest),
        errors,
        ceiling: None,
        target: Some("p50 < 100 ms".into()),
        note: format!("{median:.0} ms median of {LOADS} loads one at a time over {stored}"),
    }
}

/// `billpay audit` over a server's database (it keeps running meanwhile), as
/// a row: seconds taken, and whether the audit passed.
pub(crate) fn audit_row(server: &Billpay, what: &str, stored: &str) -> Row {
    let started = Instant::now();
    let out = Command::new(sibling("billpay"))
        .args(["audit", "--json", "--database-url", &server.database_url])
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .output()
        .expect("billpay audit");
    let seconds = started.elapsed().as_secs_f64();
    let passed = out.status.success();
    Row {
        what: what.into(),
        rate: seconds,
        p50_ms: None,
        p99_ms: None,
        max_ms: None,
        errors: u64::from(!passed),
        ceiling: None,
        target: Some("seconds, not hours".into()),
        note: format!(
            "{seconds:.1} s over {stored}; {}",
            if passed {
                "audit passed"
            } else {
                "audit FAILED"
            }
        ),
    }
}

/// `stored` purchases seeded, then `billpay audit` timed: on PostgreSQL when
/// `postgres` names a server, and on SQLite too with `with_sqlite` (the full
/// run times SQLite's in its stored-data run instead).
pub(crate) async fn audit_rows(postgres: Option<&str>, stored: u64, with_sqlite: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    let sqlite = with_sqlite.then_some((None, "SQLite"));
    let postgres = postgres.map(|admin| (Some(admin), "PostgreSQL"));
    for (admin, name) in sqlite.into_iter().chain(postgres) {
        let server = Billpay::start(admin, &["--no-worker"]).await;
        let keys = server.provision_keys(1, 1);
        seed_purchases(&server.database_url, &keys[0], stored).await;
        let what = format!("{name} `billpay audit`, {} stored", count_label(stored));
        rows.push(audit_row(&server, &what, &format!("{stored} purchases")));
        let what = format!("{name} console overview, {} stored", count_label(stored));
        rows.push(overview_row(&server, &what, &format!("{stored} purchases")));
    }
    rows
}

/// 1000000 → "1 M", 50000 → "50 k".
pub(crate) fn count_label(count: u64) -> String {
    match count {
        c if c >= 1_000_000 && c % 1_000_000 == 0 => format!("{} M", c / 1_000_000),
        c if c >= 1_000 && c % 1_000 == 0 => format!("{} k", c / 1_000),
        c => c.to_string(),
    }
}
