//! The migrations (`crate::migrations`, one numbering for both engines):
//!
//! - a database migrated step by step (to step k, stopped, then the rest)
//!   ends with the same schema as one migrated in one go, for every k;
//! - that schema at step 22 is today's: `schema/022_*.txt`, dumped by
//!   `schema/*.sql` from databases the per-engine migration files built
//!   before the numbering was shared (SQLite's 001–022, PostgreSQL's 001–021);
//! - a PostgreSQL database recorded in its old numbering is renumbered once
//!   and runs only the steps it lacks (SQLite's numbering did not change).
//!
//! PostgreSQL runs when `BILLPAY_TEST_POSTGRES_URL` names a server; each test
//! makes and drops its own databases. Without it, those tests print that they
//! skipped.

use billpay_store::migrations::{MIGRATIONS, migrate_to};
use billpay_store::postgres::scratch::ScratchDatabase;
use tokio_postgres::NoTls;

/// The step today's schema was at (SQLite `022_limits`, PostgreSQL `021_limits`).
const TODAY: usize = 22;

fn sqlite_url(dir: &tempfile::TempDir, name: &str) -> String {
    format!("sqlite://{}", dir.path().join(name).display())
}

/// `schema/sqlite.sql`'s rows, as `sqlite3` prints them (`|` between fields).
fn sqlite_schema(url: &str) -> String {
    let path = billpay_store::sqlite::path_from_url(url).unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut out = String::new();
    for query in queries(include_str!("schema/sqlite.sql")) {
        let mut statement = conn.prepare(&query).unwrap();
        let width = statement.column_count();
        let mut rows = statement.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let fields: Vec<String> = (0..width)
                .map(|i| match row.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Null => String::new(),
                    rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into(),
                    other => panic!("unexpected {other:?}"),
                })
                .collect();
            out += &(fields.join("|") + "\n");
        }
    }
    out
}

/// `schema/postgres.sql`'s rows, as `psql -At` prints them.
async fn postgres_schema(url: &str) -> String {
    let client = connect(url).await;
    let mut out = String::new();
    for query in queries(include_str!("schema/postgres.sql")) {
        for row in client.query(&query, &[]).await.unwrap() {
            let fields: Vec<String> = (0..row.len())
                .map(|i| row.get::<_, Option<String>>(i).unwrap_or_default())
                .collect();
            out += &(fields.join("|") + "\n");
        }
    }
    out
}

/// The statements of a file of queries (comment lines dropped).
fn queries(file: &str) -> Vec<String> {
    let text: String = file
        .lines()
        .filter(|l| !l.starts_with("--"))
        .map(|l| format!("{l}\n"))
        .collect();
    text.split(';')
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .map(str::to_owned)
        .collect()
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// Whether two dumps agree; if not, the first line where they part.
fn assert_same(got: &str, want: &str, case: &str) {
    let mut lines = got.lines().zip(want.lines()).enumerate();
    if let Some((n, (g, w))) = lines.find(|(_, (g, w))| g != w) {
        panic!("{case}: schema line {} is {g:?}, expected {w:?}", n + 1);
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "{case}: line count"
    );
}

fn sqlite_version(url: &str) -> usize {
    let path = billpay_store::sqlite::path_from_url(url).unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

/// The recorded versions and when each was applied.
async fn postgres_versions(url: &str) -> Vec<(i32, String)> {
    let client = connect(url).await;
    let rows = client
        .query(
            "SELECT version, applied_at FROM billpay_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap();
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

fn postgres_server(test: &str) -> Option<String> {
    match std::env::var("BILLPAY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!("SKIPPED {test}: set BILLPAY_TEST_POSTGRES_URL to run it");
            None
        }
    }
}

#[test]
fn the_numbering_is_the_folders() {
    for (index, step) in MIGRATIONS.iter().enumerate() {
        assert_eq!(
            step.name[..4],
            format!("{:03}_", index + 1),
            "step {} is folder {}",
            index + 1,
            step.name
        );
    }
}

#[tokio::test]
async fn sqlite_today_is_the_schema_the_old_files_built() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir, "today.db");
    migrate_to(&url, TODAY).await.unwrap();
    assert_eq!(sqlite_version(&url), TODAY);
    assert_same(
        &sqlite_schema(&url),
        include_str!("schema/022_sqlite.txt"),
        "today",
    );
}

#[tokio::test]
async fn sqlite_step_by_step_ends_as_migrated_in_one_go() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = sqlite_url(&dir, "fresh.db");
    billpay_store::open(&fresh).await.unwrap();
    assert_eq!(sqlite_version(&fresh), MIGRATIONS.len());
    let expected = sqlite_schema(&fresh);
    for k in 0..=MIGRATIONS.len() {
        let url = sqlite_url(&dir, &format!("to_{k}.db"));
        migrate_to(&url, k).await.unwrap();
        assert_eq!(sqlite_version(&url), k);
        // The rest as a server would: opening the store.
        billpay_store::open(&url).await.unwrap();
        assert_eq!(sqlite_version(&url), MIGRATIONS.len(), "stopped at {k}");
        assert_same(&sqlite_schema(&url), &expected, &format!("stopped at {k}"));
    }
}

#[tokio::test]
async fn sqlite_at_todays_version_runs_nothing_again() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir, "deployed.db");
    migrate_to(&url, TODAY).await.unwrap();
    // A step run again would fail (CREATE TABLE of a table that exists).
    migrate_to(&url, TODAY).await.unwrap();
    billpay_store::open(&url).await.unwrap();
    assert_eq!(sqlite_version(&url), MIGRATIONS.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_today_is_the_schema_the_old_files_built() {
    let Some(server) = postgres_server("postgres_today_is_the_schema_the_old_files_built") else {
        return;
    };
    let db = ScratchDatabase::create(&server).await.unwrap();
    migrate_to(&db.url, TODAY).await.unwrap();
    let versions: Vec<i32> = postgres_versions(&db.url)
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    assert_eq!(versions, (0..=TODAY as i32).collect::<Vec<_>>());
    let want = include_str!("schema/022_postgres.txt");
    assert_same(&postgres_schema(&db.url).await, want, "today");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_step_by_step_ends_as_migrated_in_one_go() {
    let Some(server) = postgres_server("postgres_step_by_step_ends_as_migrated_in_one_go") else {
        return;
    };
    let fresh = ScratchDatabase::create(&server).await.unwrap();
    billpay_store::open(&fresh.url).await.unwrap();
    let expected = postgres_schema(&fresh.url).await;
    for k in 0..=MIGRATIONS.len() {
        let db = ScratchDatabase::create(&server).await.unwrap();
        migrate_to(&db.url, k).await.unwrap();
        let last = postgres_versions(&db.url).await.last().map(|(v, _)| *v);
        assert_eq!(last, Some(k as i32), "stopped at {k}");
        billpay_store::open(&db.url).await.unwrap();
        let versions: Vec<i32> = postgres_versions(&db.url)
            .await
            .into_iter()
            .map(|(v, _)| v)
            .collect();
        assert_eq!(versions, (0..=MIGRATIONS.len() as i32).collect::<Vec<_>>());
        assert_same(
            &postgres_schema(&db.url).await,
            &expected,
            &format!("stopped at {k}"),
        );
    }
}

/// A PostgreSQL database as the old runner left it at its own version `old`
/// (its 1 = steps 1 and 2, its n > 1 = step n + 1), opened by the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_in_the_old_numbering_is_renumbered_and_runs_only_what_it_lacks() {
    let Some(server) =
        postgres_server("postgres_in_the_old_numbering_is_renumbered_and_runs_only_what_it_lacks")
    else {
        return;
    };
    let fresh = ScratchDatabase::create(&server).await.unwrap();
    migrate_to(&fresh.url, MIGRATIONS.len()).await.unwrap();
    let expected = postgres_schema(&fresh.url).await;
    for old in [1, 2, 6, 11, 21] {
        let step = if old == 1 { 2 } else { old + 1 };
        let db = ScratchDatabase::create(&server).await.unwrap();
        migrate_to(&db.url, step).await.unwrap();
        // The old runner's record: versions 1..=old, no version 0.
        let client = connect(&db.url).await;
        client
            .batch_execute("DELETE FROM billpay_migrations")
            .await
            .unwrap();
        for version in 1..=old as i32 {
            let at = format!("old {version}");
            client
                .execute(
                    "INSERT INTO billpay_migrations (version, applied_at) VALUES ($1, $2)",
                    &[&version, &at],
                )
                .await
                .unwrap();
        }
        // A step run again would fail (CREATE TABLE of a table that exists).
        billpay_store::open(&db.url).await.unwrap();
        let versions = postgres_versions(&db.url).await;
        let numbers: Vec<i32> = versions.iter().map(|(v, _)| *v).collect();
        assert_eq!(numbers, (0..=MIGRATIONS.len() as i32).collect::<Vec<_>>());
        // Steps it had keep their old record; step 2 is its old 1's.
        for (version, at) in &versions[1..=step] {
            let was = match *version {
                1 | 2 => 1,
                v => v - 1,
            };
            assert_eq!(at, &format!("old {was}"), "old {old}, step {version}");
        }
        assert!(
            !versions[step + 1..]
                .iter()
                .any(|(_, at)| at.starts_with("old"))
        );
        assert_same(
            &postgres_schema(&db.url).await,
            &expected,
            &format!("old {old}"),
        );
        // Opened again: nothing renumbered twice, nothing run again.
        billpay_store::open(&db.url).await.unwrap();
        assert_eq!(postgres_versions(&db.url).await, versions, "old {old}");
    }
}

/// `028_canonical_recipients`'s step (found by its name: its number may change).
fn canonical_step() -> usize {
    MIGRATIONS
        .iter()
        .position(|m| m.name.ends_with("_canonical_recipients"))
        .expect("the step is listed")
}

/// Rows as the releases before it kept them: the blocklist's recipients
/// trimmed only (or not at all), usage rows keyed by the text as sent.
const BEFORE_CANONICAL: &str = "
    INSERT INTO blocklist (kind, value, reason, added_by, added_at) VALUES
        ('recipient', 'BK556677', 'kept', 'cli', '2026-01-01T00:00:00Z'),
        ('recipient', 'bk556677', 'merged', 'cli', '2026-01-02T00:00:00Z'),
        ('recipient', 'BK556677\u{a0}', 'merged', 'cli', '2026-01-03T00:00:00Z'),
        ('recipient', 'zz 12', 'first', 'cli', '2026-01-04T00:00:00Z'),
        ('recipient', 'Zz12\u{200b}', 'first', 'cli', '2026-01-05T00:00:00Z'),
        ('recipient', '08031234567', 'phone', 'cli', '2026-01-06T00:00:00Z'),
        ('account', 'acc_lower', 'an account', 'cli', '2026-01-07T00:00:00Z');
    INSERT INTO recipient_usage (account_id, recipient, day, value) VALUES
        ('a1', 'BK556677', '2026-01-01', 20000),
        ('a1', ' bk556677', '2026-01-01', 30000),
        ('a1', 'BK556677 ', '2026-01-01', 30000),
        ('a1', 'bk556677', '2026-01-02', 5000),
        ('a2', 'bj-55\u{3000}', '2026-01-01', 700);
    INSERT INTO hourly_usage (account_id, recipient, hour, count) VALUES
        ('a1', '', 7, 4),
        ('a1', 'BK556677', 7, 1),
        ('a1', 'bk556677', 7, 2),
        ('a1', '\u{feff}bk556677', 8, 1);
";

const CANONICAL_ROWS: [&str; 3] = [
    "SELECT kind || ' ' || value || ' ' || reason FROM blocklist ORDER BY kind, value",
    "SELECT account_id || ' ' || recipient || ' ' || day || ' ' || CAST(value AS TEXT)
       FROM recipient_usage ORDER BY account_id, recipient, day",
    "SELECT account_id || ' [' || recipient || '] ' || CAST(hour AS TEXT) || ' ' || CAST(count AS TEXT)
       FROM hourly_usage ORDER BY account_id, recipient, hour",
];

/// After the step: one row per canonical recipient, sums kept, the
/// canonical entry's reason kept where there was one.
fn assert_canonical(rows: [Vec<String>; 3]) {
    let [blocklist, daily, hourly] = rows;
    assert_eq!(
        blocklist,
        [
            "account acc_lower an account",
            "recipient 08031234567 phone",
            "recipient BK556677 kept",
            "recipient ZZ12 first",
        ]
    );
    assert_eq!(
        daily,
        [
            "a1 BK556677 2026-01-01 80000",
            "a1 BK556677 2026-01-02 5000",
            "a2 BJ-55 2026-01-01 700",
        ]
    );
    assert_eq!(
        hourly,
        ["a1 [] 7 4", "a1 [BK556677] 7 3", "a1 [BK556677] 8 1"]
    );
}

#[tokio::test]
async fn sqlite_stored_recipients_become_canonical_and_duplicates_merge() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir, "recipients.db");
    migrate_to(&url, canonical_step()).await.unwrap();
    let path = billpay_store::sqlite::path_from_url(&url).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(BEFORE_CANONICAL).unwrap();
    drop(conn);
    migrate_to(&url, canonical_step() + 1).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows = CANONICAL_ROWS.map(|sql| {
        let mut statement = conn.prepare(sql).unwrap();
        let rows = statement.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.map(Result::unwrap).collect()
    });
    assert_canonical(rows);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stored_recipients_become_canonical_and_duplicates_merge() {
    let Some(server) =
        postgres_server("postgres_stored_recipients_become_canonical_and_duplicates_merge")
    else {
        return;
    };
    let db = ScratchDatabase::create(&server).await.unwrap();
    migrate_to(&db.url, canonical_step()).await.unwrap();
    let client = connect(&db.url).await;
    client.batch_execute(BEFORE_CANONICAL).await.unwrap();
    migrate_to(&db.url, canonical_step() + 1).await.unwrap();
    let mut rows: [Vec<String>; 3] = Default::default();
    for (sql, rows) in CANONICAL_ROWS.iter().zip(&mut rows) {
        let found = client.query(*sql, &[]).await.unwrap();
        *rows = found.iter().map(|r| r.get(0)).collect();
    }
    assert_canonical(rows);
}

/// Accounts as the release before `034_developer_access` left them: opened
/// by the operator; signed up with no key; signed up holding an API key of
/// their own; signed up holding only the shop's key (set with a PIN).
const BEFORE_DEVELOPER_ACCESS: &str = "
    INSERT INTO accounts (id, name, email, status, created_at, signed_up) VALUES
        ('opened', 'O', 'o@example.com', 'active', '2026-01-01T00:00:00Z', 'operator'),
        ('buyer', 'B', 'b@example.com', 'active', '2026-01-01T00:00:00Z', 'self'),
        ('coder', 'C', 'c@example.com', 'active', '2026-01-01T00:00:00Z', 'self'),
        ('shopper', 'S', 's@example.com', 'active', '2026-01-01T00:00:00Z', 'self');
    INSERT INTO api_keys (id, account_id, key_hash, display_prefix, status, created_at) VALUES
        ('k-coder', 'coder', 'h1', 'bp_live_1', 'active', '2026-01-01T00:00:00Z'),
        ('k-shop', 'shopper', 'h2', 'bp_live_2', 'active', '2026-01-01T00:00:00Z');
    INSERT INTO transaction_pins (account_id, pin_hash, shop_key_id, updated_at) VALUES
        ('shopper', 'p', 'k-shop', '2026-01-01T00:00:00Z');
";

const DEVELOPER_ROWS: &str =
    "SELECT id || '=' || coalesce(developer_access, 'off') FROM accounts ORDER BY id";

fn developer_step() -> usize {
    MIGRATIONS
        .iter()
        .position(|m| m.name.ends_with("_developer_access"))
        .expect("the step is listed")
}

/// Existing accounts keep what they had: the operator's and those with a
/// key of their own are developers'; a sign-up with none (or only the
/// shop's key) is a buyer's.
const DEVELOPER_AFTER: [&str; 4] = [
    "buyer=off",
    "coder=operator",
    "opened=operator",
    "shopper=off",
];

#[tokio::test]
async fn sqlite_existing_accounts_keep_their_developer_pages() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir, "developers.db");
    migrate_to(&url, developer_step()).await.unwrap();
    let path = billpay_store::sqlite::path_from_url(&url).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(BEFORE_DEVELOPER_ACCESS).unwrap();
    drop(conn);
    migrate_to(&url, developer_step() + 1).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut statement = conn.prepare(DEVELOPER_ROWS).unwrap();
    let rows: Vec<String> = statement
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows, DEVELOPER_AFTER);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_existing_accounts_keep_their_developer_pages() {
    let Some(server) = postgres_server("postgres_existing_accounts_keep_their_developer_pages")
    else {
        return;
    };
    let db = ScratchDatabase::create(&server).await.unwrap();
    migrate_to(&db.url, developer_step()).await.unwrap();
    let client = connect(&db.url).await;
    client.batch_execute(BEFORE_DEVELOPER_ACCESS).await.unwrap();
    migrate_to(&db.url, developer_step() + 1).await.unwrap();
    let found = client.query(DEVELOPER_ROWS, &[]).await.unwrap();
    let rows: Vec<String> = found.iter().map(|r| r.get(0)).collect();
    assert_eq!(rows, DEVELOPER_AFTER);
}
