//! The router on a fresh store, a customer made through the store, and
//! requests sent with `oneshot`.

use crate::kind::*;
use axum::body::Body;
use axum::http::Request;
use billpay_api::AppState;
use billpay_api_testkit::Reply;
use billpay_domain::keys::{generate_api_key, random_hex};
use billpay_domain::{AccountId, Kobo};
use billpay_store::postgres::scratch::ScratchDatabase;
use billpay_store::{NewAccount, NewApiKey, RateLimit, SharedStore, TxFilter};
use billpay_supplier::routing::Routes;
use billpay_supplier::sandbox::SandboxSupplier;
use http_body_util::BodyExt;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

/// The router and its store. Fields drop in order: the store before the
/// database that holds it.
pub struct App {
    router: axum::Router,
    pub store: SharedStore,
    _database: Database,
}

enum Database {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres(#[allow(dead_code)] ScratchDatabase),
}

/// An account with one API key.
pub struct Customer {
    pub account: AccountId,
    pub key: String,
}

impl App {
    /// The router as `billpay serve` builds it (sandbox supplier, no
    /// latency, rate limits out of the way) on a new empty database.
    pub async fn start() -> App {
        let (url, database) = fresh_database().await;
        let store = billpay_store::open(&url).await.expect("open the store");
        let sandbox = Arc::new(SandboxSupplier::new(Duration::ZERO));
        let suppliers = Arc::new(Routes::single(sandbox));
        let limits = RateLimit {
            per_second: 10_000,
            burst: 10_000,
        };
        let router = billpay_api::router(AppState::new(store.clone(), suppliers, limits));
        App {
            router,
            store,
            _database: database,
        }
    }

    /// A new account funded with `naira`, and an API key.
    pub async fn customer(&self, naira: i64) -> Customer {
        let n = random_hex(8);
        let new = NewAccount {
            name: "Test Co".into(),
            email: format!("t{n}@example.com"),
            password_hash: None,
            kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
        };
        let account = self.store.create_account(new).await.unwrap().id;
        if naira > 0 {
            let funds = Kobo::from_naira(naira);
            self.store
                .credit(account, funds, &format!("fund-{n}"))
                .await
                .unwrap();
        }
        let key = generate_api_key();
        let new = NewApiKey {
            account_id: account,
            name: None,
            key_hash: key.hash,
            display_prefix: key.display_prefix,
            announce: true,
        };
        self.store.create_api_key(new).await.unwrap();
        Customer {
            account,
            key: key.secret,
        }
    }

    pub async fn send(&self, request: Request<Body>) -> Reply {
        let path = request.uri().path().to_owned();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Reply::checked(&path, status, headers, &String::from_utf8_lossy(&bytes))
    }

    pub async fn get(&self, key: &str, path: &str) -> Reply {
        self.send(
            with_key(Request::get(path), key)
                .body(Body::empty())
                .unwrap(),
        )
        .await
    }

    pub async fn post(&self, key: &str, path: &str, body: &Value) -> Reply {
        self.post_text(key, path, body.to_string()).await
    }

    /// Sends `body` as written: duplicate keys and number literals survive.
    pub async fn post_text(&self, key: &str, path: &str, body: String) -> Reply {
        let request = with_key(Request::post(path), key)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        self.send(request).await
    }

    pub async fn balance_kobo(&self, c: &Customer) -> i64 {
        self.store.balance(c.account).await.unwrap().0
    }

    pub async fn transaction_count(&self, c: &Customer) -> usize {
        let filter = TxFilter {
            account_id: Some(c.account),
            limit: 1000,
            ..TxFilter::default()
        };
        self.store.transactions(filter).await.unwrap().len()
    }

    /// The money invariants `billpay audit` checks all hold.
    pub async fn assert_audit_passes(&self) {
        let outcomes = self.store.audit().await.unwrap();
        let failed: Vec<_> = outcomes.iter().filter(|o| !o.passed()).collect();
        assert!(failed.is_empty(), "audit failed: {failed:?}");
    }
}

pub fn with_key(request: axum::http::request::Builder, key: &str) -> axum::http::request::Builder {
    request.header("authorization", format!("Bearer {key}"))
}

/// A SQLite file in a new temp directory, or a scratch PostgreSQL database.
async fn fresh_database() -> (String, Database) {
    if std::env::var("BILLPAY_TEST_BACKEND").as_deref() == Ok("postgres") {
        let admin = std::env::var("BILLPAY_TEST_POSTGRES_URL")
            .expect("BILLPAY_TEST_BACKEND=postgres needs BILLPAY_TEST_POSTGRES_URL=postgres://…");
        let database = ScratchDatabase::create(&admin).await.unwrap();
        return (database.url.clone(), Database::Postgres(database));
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("billpay.db").display());
    (url, Database::Sqlite(dir))
}

/// A customer with ₦1,000,000 and one reference that every refusal of a
/// test sends: at the end it must still be free.
pub struct Refusals {
    pub app: App,
    pub c: Customer,
    pub spare: String,
    pub start: i64,
}

impl Refusals {
    pub async fn start() -> Refusals {
        let app = App::start().await;
        let c = app.customer(1_000_000).await;
        let start = app.balance_kobo(&c).await;
        let spare = format!("ref-{}", random_hex(8));
        Refusals {
            app,
            c,
            spare,
            start,
        }
    }

    /// A valid body of `kind` with the spare reference.
    pub fn base(&self, kind: Kind) -> Value {
        kind.body(&self.spare, "1234")
    }

    /// The same 422 slug live and in test mode (and, for validation errors,
    /// a message naming the field).
    pub async fn refused(&self, kind: Kind, body: Value, slug: &str, field: &str) {
        for path in [kind.live(), kind.test()] {
            let r = self.app.post(&self.c.key, &path, &body).await;
            r.assert_refusal(slug, field, &format!("{body} to {path}"));
        }
    }

    /// Accepted in test mode; returns the reply's data.
    pub async fn passes(&self, kind: Kind, body: Value) -> Value {
        let r = self.app.post(&self.c.key, &kind.test(), &body).await;
        r.assert_ok().clone()
    }

    /// Nothing changed: the balance, no transaction, the audit passes; and
    /// the reference every refusal used is still free, in test mode and live.
    pub async fn assert_nothing_changed(self) {
        let (app, key) = (&self.app, self.c.key.as_str());
        assert_eq!(app.balance_kobo(&self.c).await, self.start);
        assert_eq!(app.transaction_count(&self.c).await, 0);
        app.assert_audit_passes().await;
        let body = Electricity.body(&self.spare, "1234");
        let d = self.passes(Electricity, body.clone()).await;
        assert_test_reply(&d, &body, 150_050, self.start);
        let live = app.post(key, &Electricity.live(), &body).await;
        assert_eq!(kobo(&live.assert_ok()["balance_before"]), self.start);
        app.assert_audit_passes().await;
    }
}
