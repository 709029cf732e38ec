//! Factories shared by the store tests, and the backend they run on: a
//! SQLite file by default, or, with `BILLPAY_TEST_BACKEND=postgres` and
//! `BILLPAY_TEST_POSTGRES_URL`, a fresh PostgreSQL database.
#![allow(dead_code)]

use billpay_domain::{AccountId, KeyId, Kobo, Product, PurchaseDetails, TxStatus};
use billpay_store::postgres::scratch::ScratchDatabase;
use billpay_store::*;

/// Keeps the test's database alive; removes it on drop.
pub enum Db {
    Sqlite(tempfile::TempDir),
    Postgres(ScratchDatabase),
}

fn postgres_admin_url() -> Option<String> {
    if std::env::var("BILLPAY_TEST_BACKEND").as_deref() != Ok("postgres") {
        return None;
    }
    Some(
        std::env::var("BILLPAY_TEST_POSTGRES_URL")
            .expect("BILLPAY_TEST_BACKEND=postgres needs BILLPAY_TEST_POSTGRES_URL=postgres://…"),
    )
}

/// A store on a new database of the selected backend.
pub async fn store() -> (Db, SharedStore) {
    if let Some(admin) = postgres_admin_url() {
        let db = ScratchDatabase::create(&admin).await.unwrap();
        let store = open(&db.url).await.unwrap();
        return (Db::Postgres(db), store);
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    (Db::Sqlite(dir), open(&url).await.unwrap())
}

/// A second store on the test's database, sealing under `key` (the store
/// from [`store`] is bare: it reads what is stored, as it is).
pub async fn sealed_store(db: &Db, key: billpay_domain::sealed::SecretBox) -> SharedStore {
    let url = match db {
        Db::Sqlite(dir) => format!("sqlite://{}", dir.path().join("t.db").display()),
        Db::Postgres(db) => db.url.clone(),
    };
    open_sealed(&url, Ok(key)).await.unwrap()
}

/// The rows `sql` answers on the test's database, every value as text
/// (`None`: NULL), read beside the store: for what no store method shows
/// (the schema, a table's raw rows). A statement that answers nothing
/// (`INSERT`) runs as well.
pub async fn raw_rows(db: &Db, sql: &str) -> Vec<Vec<Option<String>>> {
    match db {
        Db::Sqlite(dir) => {
            let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
            let mut statement = conn.prepare(sql).unwrap();
            let width = statement.column_count();
            let mut rows = statement.query([]).unwrap();
            let mut out = Vec::new();
            while let Some(row) = rows.next().unwrap() {
                out.push(
                    (0..width)
                        .map(|i| match row.get_ref(i).unwrap() {
                            rusqlite::types::ValueRef::Null => None,
                            rusqlite::types::ValueRef::Integer(n) => Some(n.to_string()),
                            rusqlite::types::ValueRef::Real(x) => Some(x.to_string()),
                            rusqlite::types::ValueRef::Text(t)
                            | rusqlite::types::ValueRef::Blob(t) => {
                                Some(String::from_utf8_lossy(t).into())
                            }
                        })
                        .collect(),
                );
            }
            out
        }
        Db::Postgres(scratch) => {
            let (client, connection) = tokio_postgres::connect(&scratch.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            let messages = client.simple_query(sql).await.unwrap();
            messages
                .iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                        (0..row.len())
                            .map(|i| row.get(i).map(str::to_owned))
                            .collect(),
                    ),
                    _ => None,
                })
                .collect()
        }
    }
}

/// A new account (unique email) with one API key.
pub async fn account(store: &SharedStore) -> (AccountId, KeyId) {
    let account = new_account(store).await;
    let key = store
        .create_api_key(NewApiKey {
            account_id: account.id,
            name: None,
            key_hash: uuid::Uuid::new_v4().to_string(),
            display_prefix: "bp".into(),
            announce: true,
        })
        .await
        .unwrap();
    (account.id, key.id)
}

/// A new account (unique email), no key.
pub async fn new_account(store: &SharedStore) -> Account {
    store
        .create_account(NewAccount {
            name: "A".into(),
            email: format!("{}@example.com", uuid::Uuid::new_v4()),
            password_hash: None,
            kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
        })
        .await
        .unwrap()
}

/// A new account signed in to the dashboard: its id and its session's token hash.
pub async fn signed_in(store: &SharedStore) -> (AccountId, String) {
    let account = new_account(store).await.id;
    let lifetime = std::time::Duration::from_secs(60);
    let token = issue::issue_session(store.as_ref(), account, lifetime)
        .await
        .unwrap();
    assert_ne!(
        issue::session_token_hash(&token),
        token,
        "only the hash is stored"
    );
    (account, issue::session_token_hash(&token))
}

/// An account with a key and `naira` credited.
pub async fn funded_account(store: &SharedStore, naira: i64) -> (AccountId, KeyId) {
    let (account, key) = account(store).await;
    store
        .credit(account, Kobo::from_naira(naira), "fund")
        .await
        .unwrap();
    (account, key)
}

/// A funded account whose key has a webhook URL, so its purchases' events
/// wait for the delivery worker (a key without one has them skipped at once).
pub async fn funded_account_with_webhook(store: &SharedStore, naira: i64) -> (AccountId, KeyId) {
    let (account, key) = funded_account(store, naira).await;
    set_webhook_url(store, key).await;
    (account, key)
}

/// Gives `key` a webhook URL.
pub async fn set_webhook_url(store: &SharedStore, key: KeyId) {
    let url = KeyChange::WebhookUrl(Some("https://example.com/hook".into()));
    store.update_api_key(key, url).await.unwrap();
}

/// An airtime purchase of `naira` with this reference.
pub fn purchase(account: AccountId, key: KeyId, reference: &str, naira: i64) -> NewPurchase {
    NewPurchase {
        account_id: account,
        key_id: key,
        reference: reference.into(),
        product: Product::Airtime,
        provider: "mtn".into(),
        plan_id: None,
        label: "MTN Airtime".into(),
        recipient: "08031234567".into(),
        amount: Kobo::from_naira(naira),
        face_value: Kobo::from_naira(naira),
        tier: None,
        details: PurchaseDetails {
            phone: Some("08031234567".into()),
            ..PurchaseDetails::default()
        },
    }
}

/// A finalization whose message and webhook body are the status's name.
pub fn finalization(status: TxStatus, reversal: bool) -> Finalization {
    Finalization {
        status,
        message: status.to_string(),
        result: serde_json::json!({}),
        completed_at_ms: clock::now_ms(),
        event_payload: status.to_string(),
        reversal,
        cost: None,
        watch_at_ms: None,
    }
}

/// The wallet equals the sum of its ledger and is never negative.
pub async fn assert_invariant(store: &SharedStore, account: AccountId) {
    let balance = store.balance(account).await.unwrap();
    assert_eq!(balance, store.ledger_sum(account).await.unwrap());
    assert!(balance >= Kobo::ZERO);
}

/// The answers of spawned tasks, in order.
pub async fn join_all<T: Send + 'static>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

/// Runs statements straight on the test's database, behind the store's back
/// (rows as an older billpay wrote them).
pub async fn raw_sql(db: &Db, sql: &str) {
    match db {
        Db::Sqlite(dir) => {
            let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
            conn.execute_batch(sql).unwrap();
        }
        Db::Postgres(db) => {
            let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            client.batch_execute(sql).await.unwrap();
        }
    }
}
