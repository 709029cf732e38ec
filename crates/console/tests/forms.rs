//! Every console form in process, over a real SQLite store: each refuses a
//! missing or wrong CSRF proof (403, nothing changed), and the role rules
//! hold — `support` is refused every owner-only action (403, nothing
//! changed, nothing logged) and may requery and resolve purchases. Also in
//! process: the notice a redirect names (`?done=`) is one the console
//! issued, and the sales report refuses days outside its range in its form.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use billpay_console::{ConsoleState, router};
use billpay_domain::sealed::SecretBox;
use billpay_domain::{AccountId, Kobo, Product, PurchaseDetails, TxStatus};
use billpay_operations::{Actor, operators};
use billpay_store::issue::session_token_hash;
use billpay_store::{
    FundingStatus, LogFilter, NewApiKey, NewFunding, NewPurchase, OperatorRole, SharedStore,
    TxLookup,
};
use billpay_supplier::routing::Routes;
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_webkit::csrf_for;
use billpay_worker::{Fulfilment, FulfilmentSettings};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

struct Console {
    _dir: tempfile::TempDir,
    store: SharedStore,
    app: Router,
}

async fn console() -> Console {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let store = billpay_store::open(&url).await.unwrap();
    let secrets = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
    let supplier = Arc::new(SandboxSupplier::new(Duration::ZERO));
    let routes = Arc::new(Routes::single(supplier));
    let fulfilment = Fulfilment::new(store.clone(), routes, FulfilmentSettings::default());
    // The sandbox publishes no plan list: a sync with it is refused after the role check.
    let sandbox: Arc<dyn billpay_supplier::Supplier> =
        Arc::new(SandboxSupplier::new(Duration::ZERO));
    let state = ConsoleState::new(store.clone(), secrets, fulfilment, Duration::ZERO)
        .with_suppliers(vec![sandbox], None, Vec::new());
    Console {
        _dir: dir,
        app: router(state),
        store,
    }
}

/// An operator with a session; answers its session token.
async fn signed_in(c: &Console, email: &str, role: OperatorRole) -> String {
    let store = c.store.as_ref();
    let op = operators::create(store, Actor::Cli, email, role, "correct horse battery")
        .await
        .unwrap();
    let token = format!("token-{email}");
    let expires = billpay_store::clock::now_ms() + 3_600_000;
    c.store
        .create_operator_session(&session_token_hash(&token), op.id, expires)
        .await
        .unwrap();
    token
}

async fn post(c: &Console, path: &str, token: &str, fields: &[(&str, &str)]) -> StatusCode {
    post_page(c, path, token, fields).await.0
}

/// A form's answer: its status and page.
async fn post_page(
    c: &Console,
    path: &str,
    token: &str,
    fields: &[(&str, &str)],
) -> (StatusCode, String) {
    use http_body_util::BodyExt;
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{k}={}", v.replace(' ', "+")))
        .collect();
    let request = Request::post(path)
        .header(header::COOKIE, format!("billpay_admin={token}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body.join("&")))
        .unwrap();
    let response = c.app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

async fn get(c: &Console, path: &str, token: &str) -> StatusCode {
    get_page(c, path, token).await.0
}

async fn get_page(c: &Console, path: &str, token: &str) -> (StatusCode, String) {
    use http_body_util::BodyExt;
    let request = Request::get(path)
        .header(header::COOKIE, format!("billpay_admin={token}"))
        .body(Body::empty())
        .unwrap();
    let response = c.app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// The gateway reference of the unmatched ₦1,200 payment `customer_with_purchase` records.
const UNMATCHED: &str = "MNFY-UNMATCHED-1";

/// A funded customer with a processing ₦100 purchase: (account, its code).
async fn customer_with_purchase(c: &Console) -> (AccountId, String) {
    let store = c.store.as_ref();
    let account =
        billpay_operations::accounts::create(store, Actor::Cli, "Ada", "ada@example.com", None)
            .await
            .unwrap();
    let funds = Kobo::from_naira(1000);
    billpay_operations::wallets::credit(store, Actor::Cli, account.id, funds, "f1", None)
        .await
        .unwrap();
    let key = store
        .create_api_key(NewApiKey {
            account_id: account.id,
            name: None,
            key_hash: "h".into(),
            display_prefix: "bp_live_x".into(),
            announce: true,
        })
        .await
        .unwrap();
    let tx = store
        .place_purchase(NewPurchase {
            account_id: account.id,
            key_id: key.id,
            reference: "order-1".into(),
            product: Product::Airtime,
            provider: "mtn".into(),
            plan_id: None,
            label: "MTN Airtime".into(),
            recipient: "08031234567".into(),
            amount: Kobo::from_naira(100),
            face_value: Kobo::from_naira(100),
            tier: None,
            details: PurchaseDetails {
                phone: Some("08031234567".into()),
                ..PurchaseDetails::default()
            },
        })
        .await
        .unwrap();
    store
        .record_funding(NewFunding {
            gateway: "monnify".into(),
            gateway_reference: UNMATCHED.into(),
            status: FundingStatus::Unmatched,
            account_id: None,
            amount: Kobo::from_naira(1200),
            fee: Kobo::ZERO,
            currency: Some("NGN".into()),
            customer_ref: None,
            account_number: Some("9900000009".into()),
            payer: Some("ADA LOVELACE".into()),
            note: "no reserved account".into(),
        })
        .await
        .unwrap();
    (account.id, tx.code)
}

/// A form: its path, its fields, and whether only an owner may post it.
type Form = (String, Vec<(&'static str, &'static str)>, bool);

/// The id of the account's first API key.
async fn first_key(c: &Console, account: AccountId) -> String {
    c.store.api_keys(account).await.unwrap()[0].id.to_string()
}

/// Every signed-in form of the console.
fn forms(account: AccountId, code: &str, operator: i64, key: &str) -> Vec<Form> {
    let account_id: &'static str = Box::leak(account.to_string().into_boxed_str());
    vec![
        ("/admin/prices/tiers".into(), vec![("name", "gold")], true),
        (
            "/admin/prices/offers".into(),
            vec![("tier", "gold"), ("fee", "5000")],
            true,
        ),
        (
            "/admin/prices/offers/withdraw".into(),
            vec![("tier", "gold")],
            true,
        ),
        (
            format!("/admin/customers/{account_id}/downgrade"),
            vec![("reason", "asked")],
            true,
        ),
        (
            format!("/admin/customers/{account_id}/referral/void"),
            vec![("reason", "same household")],
            true,
        ),
        (
            "/admin/prices/referrals".into(),
            vec![("product", "data"), ("percent", "1.5"), ("days", "")],
            true,
        ),
        (
            "/admin/prices/referral-settings".into(),
            vec![("first_funding_bonus", "100"), ("min_withdrawal", "50")],
            true,
        ),
        (
            "/admin/prices/rules".into(),
            vec![
                ("tier", "gold"),
                ("product", "airtime"),
                ("kind", "discount_percent"),
                ("value", "2"),
            ],
            true,
        ),
        (
            "/admin/prices/on-sale".into(),
            vec![("kind", "provider"), ("target", "mtn"), ("sale", "off")],
            true,
        ),
        (
            "/admin/prices/sync".into(),
            vec![("supplier", "sandbox")],
            true,
        ),
        (
            "/admin/prices/list-price".into(),
            vec![("plan", "mtn-sme-1gb"), ("price", "650")],
            true,
        ),
        (
            format!("/admin/customers/{account}/tier"),
            vec![("tier", "default"), ("reason", "loyal")],
            true,
        ),
        (
            format!("/admin/customers/{account}/password"),
            vec![("password", "longenough1"), ("reason", "forgot it")],
            true,
        ),
        (
            format!("/admin/customers/{account}/keys"),
            vec![("name", "second")],
            true,
        ),
        (
            format!("/admin/customers/{account}/keys/{key}/rate-limit"),
            vec![("per_second", "5"), ("burst", "10")],
            true,
        ),
        (
            format!("/admin/customers/{account}/keys/{key}/status"),
            vec![("status", "suspended")],
            true,
        ),
        (format!("/admin/transactions/{code}/resend"), vec![], false),
        (
            "/admin/customers".into(),
            vec![("name", "Bo"), ("email", "bo@example.com")],
            true,
        ),
        (
            format!("/admin/customers/{account}/status"),
            vec![("status", "suspended"), ("reason", "fraud check")],
            true,
        ),
        (
            format!("/admin/customers/{account}/close"),
            vec![("reason", "customer asked")],
            true,
        ),
        (
            format!("/admin/customers/{account}/erase"),
            vec![("reason", "customer asked")],
            true,
        ),
        (
            format!("/admin/customers/{account}/credit"),
            vec![
                ("amount", "50"),
                ("reference", "c1"),
                ("reason", "bank transfer"),
            ],
            true,
        ),
        (
            format!("/admin/customers/{account}/debit"),
            vec![
                ("amount", "5"),
                ("reference", "d1"),
                ("reason", "correction"),
            ],
            true,
        ),
        (
            "/admin/operators".into(),
            vec![
                ("email", "new@example.com"),
                ("role", "support"),
                ("password", "longenough1"),
            ],
            true,
        ),
        (
            format!("/admin/operators/{operator}/status"),
            vec![("status", "disabled")],
            true,
        ),
        (
            format!("/admin/operators/{operator}/password"),
            vec![("password", "another horse")],
            true,
        ),
        (
            "/admin/account/password".into(),
            vec![
                ("current_password", "correct horse battery"),
                ("new_password", "another horse"),
                ("confirm_password", "another horse"),
            ],
            false,
        ),
        ("/admin/account/totp".into(), vec![], false),
        (
            "/admin/account/totp/confirm".into(),
            vec![("sealed", "00"), ("code", "123456")],
            false,
        ),
        (
            "/admin/account/totp/disable".into(),
            vec![("code", "123456")],
            false,
        ),
        (format!("/admin/transactions/{code}/requery"), vec![], false),
        (
            format!("/admin/transactions/{code}/resolve"),
            vec![("outcome", "failed"), ("reason", "supplier confirmed")],
            false,
        ),
        (
            format!("/admin/transactions/{code}/held"),
            vec![("decision", "reject"), ("reason", "reported by the bank")],
            true,
        ),
        (
            format!("/admin/funding/{UNMATCHED}/assign"),
            vec![
                ("account", account_id),
                ("reason", "payer named on the transfer"),
            ],
            true,
        ),
        (
            format!("/admin/customers/{account}/reserve"),
            vec![("gateway", "monnify"), ("bvn", "12345678901")],
            true,
        ),
        (
            "/admin/funding/reconcile".into(),
            vec![("since_hours", "24")],
            true,
        ),
        ("/admin/notifications/NT-none/resend".into(), vec![], false),
        (
            "/admin/account/alerts".into(),
            vec![("operator_float_low", "on")],
            false,
        ),
        (
            "/admin/limits/0".into(),
            vec![("daily_value", "30000"), ("daily_count", "10")],
            true,
        ),
        (
            "/admin/blocklist".into(),
            vec![
                ("kind", "recipient"),
                ("value", "08039999999"),
                ("reason", "stolen card"),
            ],
            true,
        ),
        (
            "/admin/blocklist/remove".into(),
            vec![("kind", "recipient"), ("value", "08039999999")],
            true,
        ),
        (
            format!("/admin/customers/{account}/kyc"),
            vec![("level", "1"), ("reason", "documents seen")],
            true,
        ),
        (
            format!("/admin/customers/{account}/limits"),
            vec![("max_purchase", "500")],
            true,
        ),
        (
            format!("/admin/customers/{account}/schedules/pause"),
            vec![],
            true,
        ),
        ("/admin/logout".into(), vec![], false),
    ]
}

async fn log_len(c: &Console) -> usize {
    let filter = LogFilter {
        limit: 1000,
        ..LogFilter::default()
    };
    c.store.operator_log(filter).await.unwrap().len()
}

#[tokio::test]
async fn every_form_refuses_a_missing_or_foreign_csrf_proof() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let other = signed_in(&c, "other@example.com", OperatorRole::Owner).await;
    let (account, code) = customer_with_purchase(&c).await;
    let before = log_len(&c).await;
    let target = c
        .store
        .operator_by_email("other@example.com")
        .await
        .unwrap()
        .unwrap();
    let key = first_key(&c, account).await;
    for (path, fields, _) in forms(account, &code, target.id, &key) {
        let status = post(&c, &path, &owner, &fields).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path} without a proof");
        let mut foreign = fields.clone();
        let proof = csrf_for(&other);
        foreign.push(("csrf", &proof));
        let status = post(&c, &path, &owner, &foreign).await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "{path} with another session's proof"
        );
    }
    assert_eq!(log_len(&c).await, before, "nothing was done");
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo::from_naira(900)
    );
    let login = Request::post("/admin/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(
            "email=boss%40example.com&password=correct+horse+battery&csrf=x",
        ))
        .unwrap();
    let status = c.app.clone().oneshot(login).await.unwrap().status();
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "sign-in without its double-submit cookie"
    );
}

#[tokio::test]
async fn support_is_refused_every_owner_action_and_may_resolve_purchases() {
    let c = console().await;
    let support = signed_in(&c, "help@example.com", OperatorRole::Support).await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let (account, code) = customer_with_purchase(&c).await;
    let target = c
        .store
        .operator_by_email("boss@example.com")
        .await
        .unwrap()
        .unwrap();
    let proof = csrf_for(&support);
    let before = log_len(&c).await;
    let key = first_key(&c, account).await;
    for (path, mut fields, owner_only) in forms(account, &code, target.id, &key) {
        if !owner_only {
            continue;
        }
        fields.push(("csrf", &proof));
        let status = post(&c, &path, &support, &fields).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "support may not POST {path}");
    }
    assert_eq!(log_len(&c).await, before, "nothing was done or logged");
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo::from_naira(900)
    );
    for page in ["/admin/operators", "/admin/log"] {
        assert_eq!(
            get(&c, page, &support).await,
            StatusCode::FORBIDDEN,
            "{page}"
        );
        assert_eq!(get(&c, page, &owner).await, StatusCode::OK, "{page}");
    }
    for page in [
        "/admin",
        "/admin/customers?q=ada",
        "/admin/transactions",
        "/admin/review",
        "/admin/suppliers",
        "/admin/reports?by=provider",
        "/admin/reports.csv",
        "/admin/prices",
        "/admin/audit",
        "/admin/account",
        "/admin/limits",
        "/admin/blocklist",
        &format!("/admin/customers/{account}"),
    ] {
        assert_eq!(get(&c, page, &support).await, StatusCode::OK, "{page}");
    }
    assert!(
        c.store.blocklist().await.unwrap().is_empty(),
        "support blocked nothing"
    );
    let levels = c.store.level_limits().await.unwrap();
    assert_eq!(
        levels[0].limits.daily_value,
        Some(Kobo::from_naira(50_000)),
        "support changed no limit"
    );
    let (status, funding) = get_page(&c, "/admin/funding?status=unmatched", &support).await;
    assert_eq!(status, StatusCode::OK);
    assert!(funding.contains(UNMATCHED), "support sees the payment");
    assert!(!funding.contains("/assign"), "but not the assign form");
    let resolve = format!("/admin/transactions/{code}/resolve");
    let no_reason = [("outcome", "failed"), ("reason", " "), ("csrf", &proof)];
    assert_eq!(
        post(&c, &resolve, &support, &no_reason).await,
        StatusCode::BAD_REQUEST
    );
    let fields = [
        ("outcome", "failed"),
        ("reason", "supplier confirmed"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, &resolve, &support, &fields).await,
        StatusCode::SEE_OTHER
    );
    let tx = c
        .store
        .transaction(None, TxLookup::Code(code.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tx.status, TxStatus::Failed);
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo::from_naira(1000),
        "refunded once"
    );
    assert_eq!(
        post(&c, &resolve, &support, &fields).await,
        StatusCode::CONFLICT,
        "only once"
    );
    let filter = LogFilter {
        subject: Some(code),
        limit: 10,
        ..LogFilter::default()
    };
    let lines = c.store.operator_log(filter).await.unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].operator_email.as_deref(), Some("help@example.com"));
    assert_eq!(lines[0].reason.as_deref(), Some("supplier confirmed"));
}

#[tokio::test]
async fn an_owner_moves_money_only_with_a_reason_and_it_is_logged() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let (account, _) = customer_with_purchase(&c).await;
    let proof = csrf_for(&owner);
    let credit = format!("/admin/customers/{account}/credit");
    let no_reason = [
        ("amount", "50"),
        ("reference", "c1"),
        ("reason", ""),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, &credit, &owner, &no_reason).await,
        StatusCode::BAD_REQUEST
    );
    let fields = [
        ("amount", "50"),
        ("reference", "c1"),
        ("reason", "bank transfer"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, &credit, &owner, &fields).await,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        post(&c, &credit, &owner, &fields).await,
        StatusCode::SEE_OTHER,
        "a repeat"
    );
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo::from_naira(950),
        "credited once"
    );
    let debit = format!("/admin/customers/{account}/debit");
    let too_much = [
        ("amount", "5000"),
        ("reference", "d1"),
        ("reason", "x"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, &debit, &owner, &too_much).await,
        StatusCode::CONFLICT
    );
    let filter = LogFilter {
        subject: Some(account.to_string()),
        limit: 10,
        ..LogFilter::default()
    };
    let lines = c.store.operator_log(filter).await.unwrap();
    assert_eq!(lines[0].action, "wallet.credit");
    assert_eq!(lines[0].operator_email.as_deref(), Some("boss@example.com"));
    assert_eq!(lines[0].before.as_deref(), Some("balance 900.00"));
    assert_eq!(
        lines[0].after.as_deref(),
        Some("balance 950.00 (+50.00, reference c1)")
    );
    assert_eq!(lines[0].reason.as_deref(), Some("bank transfer"));
    assert_eq!(
        get(&c, "/admin", "no-such-session").await,
        StatusCode::SEE_OTHER
    );
}

#[tokio::test]
async fn an_owner_assigns_an_unmatched_payment_once_with_a_reason() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let (account, _) = customer_with_purchase(&c).await;
    let proof = csrf_for(&owner);
    let (_, page) = get_page(&c, "/admin/funding", &owner).await;
    assert!(page.contains("/admin/funding/") && page.contains("/assign"));
    let assign = format!("/admin/funding/{UNMATCHED}/assign");
    let account_id = account.to_string();
    for (fields, why) in [
        (
            vec![("account", account_id.as_str()), ("reason", " ")],
            "no reason",
        ),
        (
            vec![("account", "not-an-id"), ("reason", "x")],
            "no account id",
        ),
    ] {
        let mut fields = fields;
        fields.push(("csrf", &proof));
        assert_eq!(
            post(&c, &assign, &owner, &fields).await,
            StatusCode::BAD_REQUEST,
            "{why}"
        );
    }
    let stranger = AccountId::new().to_string();
    let fields = [
        ("account", stranger.as_str()),
        ("reason", "x"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, &assign, &owner, &fields).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo::from_naira(900)
    );

    let fields = [
        ("account", account_id.as_str()),
        ("reason", "payer named on the transfer"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, &assign, &owner, &fields).await,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        post(&c, &assign, &owner, &fields).await,
        StatusCode::CONFLICT,
        "only an unmatched payment is assigned"
    );
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo::from_naira(2100),
        "credited once"
    );
    let event = c.store.funding_event(UNMATCHED).await.unwrap().unwrap();
    assert_eq!(event.status, FundingStatus::Credited);
    let filter = LogFilter {
        subject: Some(event.id),
        limit: 10,
        ..LogFilter::default()
    };
    let lines = c.store.operator_log(filter).await.unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].action, "funding.assign");
    assert_eq!(lines[0].operator_email.as_deref(), Some("boss@example.com"));
    assert_eq!(
        lines[0].reason.as_deref(),
        Some("payer named on the transfer")
    );
    let (_, page) = get_page(&c, "/admin/funding?status=credited", &owner).await;
    assert!(page.contains(UNMATCHED) && !page.contains("/assign"));
}

/// The newest log line about `subject`.
async fn last_log(c: &Console, subject: &str) -> billpay_store::LogEntry {
    let filter = LogFilter {
        subject: Some(subject.to_owned()),
        limit: 1,
        ..LogFilter::default()
    };
    c.store.operator_log(filter).await.unwrap().remove(0)
}

#[tokio::test]
async fn an_owners_tier_catalogue_and_key_changes_are_logged_with_before_and_after() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let (account, _) = customer_with_purchase(&c).await;
    let store = c.store.as_ref();
    billpay_operations::pricing::create_tier(store, Actor::Cli, "gold")
        .await
        .unwrap();
    let proof = csrf_for(&owner);
    let tier = format!("/admin/customers/{account}/tier");
    let unknown = [("tier", "platinum"), ("reason", "x"), ("csrf", &proof)];
    assert_eq!(
        post(&c, &tier, &owner, &unknown).await,
        StatusCode::NOT_FOUND
    );
    let gold = [("tier", "gold"), ("reason", "reseller"), ("csrf", &proof)];
    assert_eq!(post(&c, &tier, &owner, &gold).await, StatusCode::SEE_OTHER);
    let on = billpay_operations::pricing::account_tier(store, account)
        .await
        .unwrap();
    assert_eq!(on, "gold");
    let line = last_log(&c, &account.to_string()).await;
    assert_eq!(line.action, "pricing.account_tier");
    assert_eq!(line.before.as_deref(), Some("default"));
    assert_eq!(line.after.as_deref(), Some("gold"));
    assert_eq!(line.reason.as_deref(), Some("reseller"));

    let (_, catalogue) = c.store.catalogue().await.unwrap();
    let plan = catalogue.data_plans[0].plan_id.clone();
    let off = [
        ("kind", "plan"),
        ("target", plan.as_str()),
        ("sale", "off"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, "/admin/prices/on-sale", &owner, &off).await,
        StatusCode::SEE_OTHER
    );
    let (_, catalogue) = c.store.catalogue().await.unwrap();
    assert!(!catalogue.data_plans[0].active);
    let line = last_log(&c, &plan).await;
    assert_eq!(line.action, "catalogue.plan");
    assert_eq!(line.before.as_deref(), Some("on sale"));
    assert_eq!(line.after.as_deref(), Some("off sale"));
    let wrong_kind = [
        ("kind", "provider"),
        ("target", plan.as_str()),
        ("sale", "on"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, "/admin/prices/on-sale", &owner, &wrong_kind).await,
        StatusCode::NOT_FOUND,
        "a plan is not a provider"
    );

    let keys = format!("/admin/customers/{account}/keys");
    let named = [("name", "till"), ("csrf", &proof)];
    assert_eq!(post(&c, &keys, &owner, &named).await, StatusCode::OK);
    let all = c.store.api_keys(account).await.unwrap();
    assert_eq!(all.len(), 2);
    let line = last_log(&c, &account.to_string()).await;
    assert_eq!(line.action, "key.create");
    assert_eq!(line.after, Some(format!("key {}", all[1].display_prefix)));
    let status = format!("/admin/customers/{account}/keys/{}/status", all[1].id);
    let disable = [("status", "suspended"), ("csrf", &proof)];
    assert_eq!(
        post(&c, &status, &owner, &disable).await,
        StatusCode::SEE_OTHER
    );
    let key = c.store.api_key(all[1].id).await.unwrap().unwrap();
    assert_eq!(key.status.as_str(), "suspended");
    let line = last_log(&c, &all[1].id.to_string()).await;
    assert_eq!(line.action, "key.update");
    assert_eq!(line.after.as_deref(), Some("suspended"));
    let other = AccountId::new();
    let foreign = format!("/admin/customers/{other}/keys/{}/status", all[1].id);
    assert_eq!(
        post(&c, &foreign, &owner, &disable).await,
        StatusCode::NOT_FOUND,
        "a key is changed only under its own account"
    );
}

/// The value after `marker` up to the next `end` in a page.
fn between<'a>(page: &'a str, marker: &str, end: &str) -> &'a str {
    let start = page
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {page}"))
        + marker.len();
    let len = page[start..].find(end).unwrap();
    &page[start..start + len]
}

#[tokio::test]
async fn any_operator_changes_their_own_password_and_totp() {
    let c = console().await;
    let support = signed_in(&c, "help@example.com", OperatorRole::Support).await;
    let proof = csrf_for(&support);
    assert_eq!(get(&c, "/admin/account", &support).await, StatusCode::OK);
    let before = log_len(&c).await;
    let wrong = [
        ("current_password", "not my password"),
        ("new_password", "another horse"),
        ("confirm_password", "another horse"),
        ("csrf", &proof),
    ];
    let path = "/admin/account/password";
    assert_eq!(
        post(&c, path, &support, &wrong).await,
        StatusCode::BAD_REQUEST
    );
    let differ = [
        ("current_password", "correct horse battery"),
        ("new_password", "another horse"),
        ("confirm_password", "another hose"),
        ("csrf", &proof),
    ];
    assert_eq!(
        post(&c, path, &support, &differ).await,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(log_len(&c).await, before, "a refusal changes nothing");

    let (status, offer) = post_page(&c, "/admin/account/totp", &support, &[("csrf", &proof)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(log_len(&c).await, before, "an offer is not TOTP on");
    let uri = between(&offer, "id=\"totp-uri\">", "<").replace("&amp;", "&");
    let sealed = between(&offer, "name=\"sealed\" value=\"", "\"").to_owned();
    let totp = totp_rs::Totp::from_url(&uri).unwrap();
    let code = totp.generate_current().to_string();
    let confirm = "/admin/account/totp/confirm";
    let bad = [
        ("sealed", sealed.as_str()),
        ("code", "000000"),
        ("csrf", &proof),
    ];
    let bad_status = post(&c, confirm, &support, &bad).await;
    let right = [
        ("sealed", sealed.as_str()),
        ("code", &code),
        ("csrf", &proof),
    ];
    if code != "000000" {
        assert_eq!(bad_status, StatusCode::BAD_REQUEST, "a wrong code");
    }
    assert_eq!(
        post(&c, confirm, &support, &right).await,
        StatusCode::SEE_OTHER
    );
    let me = c
        .store
        .operator_by_email("help@example.com")
        .await
        .unwrap()
        .unwrap();
    assert!(me.totp_enabled());
    let line = last_log(&c, "help@example.com").await;
    assert_eq!(
        (line.action.as_str(), line.after.as_deref()),
        ("operator.totp", Some("on (new secret)"))
    );
    let disable = [("code", code.as_str()), ("csrf", &proof)];
    assert_eq!(
        post(&c, "/admin/account/totp/disable", &support, &disable).await,
        StatusCode::BAD_REQUEST,
        "the code that turned it on is used"
    );
    assert!(
        c.store
            .operator(me.id)
            .await
            .unwrap()
            .unwrap()
            .totp_enabled()
    );
}

#[tokio::test]
async fn only_notices_the_console_issued_are_shown() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let forged = "/admin?done=Your+account+is+locked.+Call+0803+000+0000";
    let (status, page) = get_page(&c, forged, &owner).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !page.contains("locked"),
        "a link's text is never shown: {page}"
    );
    assert!(!page.contains("id=\"done\""), "no notice at all");

    let proof = csrf_for(&owner);
    let request = Request::post("/admin/prices/tiers")
        .header(header::COOKIE, format!("billpay_admin={owner}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("name=gold&csrf={proof}")))
        .unwrap();
    let response = c.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let location = response.headers()[header::LOCATION].to_str().unwrap();
    assert_eq!(location, "/admin/prices?done=tier-created");
    let (_, page) = get_page(&c, location, &owner).await;
    assert!(page.contains("Done: tier created"), "{page}");
    let (_, page) = get_page(&c, "/admin/account?done=totp-on", &owner).await;
    assert!(page.contains("Done: TOTP is on"), "{page}");
}

#[tokio::test]
async fn a_report_of_days_at_the_calendars_edges_is_refused_in_its_form() {
    let c = console().await;
    let support = signed_in(&c, "help@example.com", OperatorRole::Support).await;
    let rule = "must be a day from 2000-01-01 to 2100-12-31";
    for (query, field) in [
        ("to=9999-12-31", "to"),
        ("from=-9999-01-01", "from"),
        ("from=1999-12-31&to=2026-01-01", "from"),
    ] {
        let (status, page) = get_page(&c, &format!("/admin/reports?{query}"), &support).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {page}");
        assert!(page.contains(&format!("{field} {rule}")), "{query}: {page}");
        assert!(page.contains("id=\"report-form\""), "in its form: {page}");
        let (status, refusal) =
            get_page(&c, &format!("/admin/reports.csv?{query}"), &support).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {refusal}");
        assert!(refusal.contains(rule), "{query}: {refusal}");
    }
    let last = "/admin/reports?from=2100-12-31&to=2100-12-31";
    assert_eq!(get(&c, last, &support).await, StatusCode::OK);
}

/// A successful ₦600 MTN 1GB (SME) data purchase whose supplier charged `cost` kobo.
async fn data_purchase_at_cost(c: &Console, account: AccountId, reference: &str, cost: i64) {
    let store = c.store.as_ref();
    let key = store.api_keys(account).await.unwrap()[0].id;
    let tx = store
        .place_purchase(NewPurchase {
            account_id: account,
            key_id: key,
            reference: reference.into(),
            product: Product::Data,
            provider: "mtn".into(),
            plan_id: Some("mtn-sme-1gb".into()),
            label: "MTN 1GB".into(),
            recipient: "08031234567".into(),
            amount: Kobo::from_naira(600),
            face_value: Kobo::from_naira(600),
            tier: None,
            details: PurchaseDetails {
                phone: Some("08031234567".into()),
                ..PurchaseDetails::default()
            },
        })
        .await
        .unwrap();
    let fin = billpay_store::Finalization {
        status: TxStatus::Successful,
        message: "delivered".into(),
        result: serde_json::json!({}),
        completed_at_ms: billpay_store::clock::now_ms(),
        event_payload: "{}".into(),
        reversal: false,
        cost: Some(Kobo(cost)),
        watch_at_ms: None,
    };
    assert!(store.finalize(&tx.code, fin).await.unwrap());
}

#[tokio::test]
async fn amounts_are_read_as_typed_and_a_refused_form_comes_back_with_its_input() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let (account, _) = customer_with_purchase(&c).await;
    let proof = csrf_for(&owner);
    let credit = format!("/admin/customers/{account}/credit");
    // ₦5,000 typed with the sign and a comma (form-encoded), then 5,000.50.
    for (reference, amount) in [("c1", "%E2%82%A65%2C000"), ("c2", "5%2C000.50")] {
        let fields = [
            ("amount", amount),
            ("reference", reference),
            ("reason", "bank transfer"),
            ("csrf", &proof),
        ];
        let (status, page) = post_page(&c, &credit, &owner, &fields).await;
        assert_eq!(status, StatusCode::SEE_OTHER, "{amount}: {page}");
    }
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo(90_000 + 500_000 + 500_050),
        "₦900 + ₦5,000 + ₦5,000.50"
    );

    // 0 and "5,00": the customer's page again, the message beside the amount,
    // what was typed kept, nothing moved.
    for (amount, typed, message) in [
        ("0", "0", "must be more than 0"),
        ("5%2C00", "5,00", "must be a number of Naira"),
    ] {
        let fields = [
            ("amount", amount),
            ("reference", "c3"),
            ("reason", "top up"),
            ("csrf", &proof),
        ];
        let (status, page) = post_page(&c, &credit, &owner, &fields).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
        let form = between(&page, "id=\"credit\"", "</form>");
        assert!(form.contains(&format!("value=\"{typed}\"")), "{form}");
        assert!(form.contains("value=\"c3\"") && form.contains("value=\"top up\""));
        let beside = between(form, "id=\"credit-amount-error\" role=\"alert\">", "<");
        assert!(beside.starts_with(message), "{beside}");
        assert!(form.contains("aria-invalid=\"true\""), "{form}");
        assert!(!page.contains("id=\"refusal\""), "no bare refusal page");
        // The debit form beside it is untouched.
        let debit = between(&page, "id=\"debit\"", "</form>");
        assert!(!debit.contains("value=\"c3\"") && !debit.contains("field-error"));
    }
    assert_eq!(
        c.store.balance(account).await.unwrap(),
        Kobo(90_000 + 500_000 + 500_050),
        "nothing moved"
    );
    // Each action has its own labelled section.
    let (_, page) = get_page(&c, &format!("/admin/customers/{account}"), &owner).await;
    for heading in [
        "Credit the wallet",
        "Debit the wallet",
        "Suspend the account",
        "Price tier",
        "Dashboard password",
    ] {
        assert!(page.contains(&format!(">{heading}</h3>")), "{heading}");
    }
}

#[tokio::test]
async fn a_rule_below_the_last_known_cost_needs_the_owners_confirmation() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let (account, _) = customer_with_purchase(&c).await;
    data_purchase_at_cost(&c, account, "d1", 58_200).await;
    billpay_operations::pricing::create_tier(c.store.as_ref(), Actor::Cli, "resellers")
        .await
        .unwrap();
    let proof = csrf_for(&owner);
    // Typed as a person would: the provider in capitals.
    let mut rule = vec![
        ("tier", "resellers"),
        ("product", "data"),
        ("provider", "MTN"),
        ("plan", "mtn-sme-1gb"),
        ("kind", "price"),
        ("value", "560"),
        ("csrf", &proof),
    ];
    let (status, page) = post_page(&c, "/admin/prices/rules", &owner, &rule).await;
    assert_eq!(status, StatusCode::CONFLICT, "{page}");
    let warning = between(&page, "id=\"below-cost\">", "</ul>");
    assert!(
        warning.contains("data · MTN Nigeria · MTN 1GB (SME, 7 days) at ₦560.00 is below its last supplier cost ₦582.00 (a loss of ₦22.00 each)"),
        "{warning}"
    );
    let form = between(&page, "id=\"set-rule\"", "</form>");
    assert!(
        form.contains("value=\"MTN\"") && form.contains("value=\"560\""),
        "{form}"
    );
    assert!(
        form.contains("name=\"confirm_below_cost\" value=\"1\""),
        "{form}"
    );
    let (_, book) = c.store.price_book().await.unwrap();
    assert!(
        book.tiers["resellers"].rules.is_empty(),
        "nothing set unconfirmed"
    );

    rule.push(("confirm_below_cost", "1"));
    let (status, page) = post_page(&c, "/admin/prices/rules", &owner, &rule).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{page}");
    let line = last_log(&c, "resellers").await;
    assert_eq!(line.action, "pricing.rule");
    assert_eq!(
        line.after.as_deref(),
        Some("data · MTN Nigeria · MTN 1GB (SME, 7 days): price ₦560.00")
    );

    // The prices page: the cost and the margin beside the rule and the plan.
    let (_, page) = get_page(&c, "/admin/prices?q=1gb&provider=mtn&product=data", &owner).await;
    let rules = between(&page, "id=\"tiers\"", "</table>");
    assert!(rules.contains("below cost"), "{rules}");
    assert!(
        rules.contains("price ₦560.00, cost ₦582.00, margin −₦22.00"),
        "{rules}"
    );
    let plan = between(&page, "data-target=\"mtn-sme-1gb\"", "</tr>");
    assert!(plan.contains(">SME<") && plan.contains("₦582.00"), "{plan}");
    assert!(plan.contains("₦18.00"), "list price ₦600 less ₦582: {plan}");
    let plans = between(&page, "id=\"plans\"", "</table>");
    assert!(
        !plans.contains("data-target=\"mtn-sme-2gb\""),
        "filtered: {plans}"
    );
    assert!(!plans.contains("dstv"), "cable filtered out");
    let (_, off_sale) = get_page(&c, "/admin/prices?sale=off", &owner).await;
    let plans = between(&off_sale, "id=\"plans\"", "</table>");
    assert!(
        !plans.contains("data-target"),
        "every plan is on sale: {plans}"
    );
}

#[tokio::test]
async fn an_owner_edits_a_list_price_and_it_is_logged() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let proof = csrf_for(&owner);
    let set = [
        ("plan", "MTN-SME-1GB"),
        ("price", "%E2%82%A6650"),
        ("csrf", &proof),
    ];
    let (status, page) = post_page(&c, "/admin/prices/list-price", &owner, &set).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{page}");
    let (_, catalogue) = c.store.catalogue().await.unwrap();
    let plan = catalogue
        .data_plans
        .iter()
        .find(|p| p.plan_id == "mtn-sme-1gb")
        .unwrap();
    assert_eq!(plan.price, Kobo::from_naira(650));
    let line = last_log(&c, "mtn-sme-1gb").await;
    assert_eq!(line.action, "catalogue.price");
    assert_eq!(line.before.as_deref(), Some("600.00"));
    assert_eq!(line.after.as_deref(), Some("650.00"));

    let zero = [("plan", "mtn-sme-1gb"), ("price", "0"), ("csrf", &proof)];
    let (status, page) = post_page(&c, "/admin/prices/list-price", &owner, &zero).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let row = between(&page, "data-target=\"mtn-sme-1gb\"", "</tr>");
    assert!(
        row.contains("must be more than 0") && row.contains("value=\"0\""),
        "{row}"
    );
}

#[tokio::test]
async fn the_console_names_accounts_and_words_its_log_for_people() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let support = signed_in(&c, "help@example.com", OperatorRole::Support).await;
    let (account, code) = customer_with_purchase(&c).await;
    billpay_operations::pricing::create_tier(c.store.as_ref(), Actor::Cli, "resellers")
        .await
        .unwrap();
    let link = format!("<a href=\"/admin/customers/{account}\" title=\"{account}\">Ada</a>");
    for page in [
        "/admin/transactions",
        "/admin/log",
        &format!("/admin/transactions/{code}"),
    ] {
        let (_, html) = get_page(&c, page, &owner).await;
        assert!(html.contains(&link), "{page}: {html}");
    }
    let (_, log) = get_page(&c, "/admin/log", &owner).await;
    assert!(!log.contains("— → —"), "{log}");
    assert!(log.contains("created"), "a tier's creation says so");
    let (_, tx) = get_page(&c, &format!("/admin/transactions/{code}"), &owner).await;
    for field in ["Face value", "Charged", "Tier", "Supplier cost", "Profit"] {
        assert!(tx.contains(&format!("<dt>{field}</dt>")), "{field}");
    }
    // A slug typed in capitals is the catalogue's.
    let proof = csrf_for(&owner);
    let off = [
        ("kind", "provider"),
        ("target", "MTN"),
        ("sale", "off"),
        ("csrf", &proof),
    ];
    let (status, page) = post_page(&c, "/admin/prices/on-sale", &owner, &off).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{page}");
    let (_, catalogue) = c.store.catalogue().await.unwrap();
    assert!(!catalogue.provider("mtn").unwrap().active);
    let (status, refusal) = get_page(&c, "/admin/log", &support).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        refusal.contains("managing operators needs an owner"),
        "{refusal}"
    );
    assert!(!refusal.contains("ManageOperators"), "{refusal}");
}

#[tokio::test]
async fn a_levels_limits_are_typed_in_naira_and_a_wrong_one_changes_nothing() {
    let c = console().await;
    let owner = signed_in(&c, "boss@example.com", OperatorRole::Owner).await;
    let support = signed_in(&c, "help@example.com", OperatorRole::Support).await;
    let proof = csrf_for(&owner);
    let before = c.store.level_limits().await.unwrap();
    let lines = log_len(&c).await;

    let (_, page) = get_page(&c, "/admin/limits", &owner).await;
    assert!(page.contains("id=\"level-1\""), "an owner's form per level");
    assert!(
        page.contains("value=\"200000.00\""),
        "level 1's daily value"
    );
    let (_, page) = get_page(&c, "/admin/limits", &support).await;
    assert!(page.contains("₦200,000.00"), "support reads the limits");
    assert!(page.contains("no limit"), "level 2 has none");
    assert!(
        !page.contains("action=\"/admin/limits/"),
        "but gets no form"
    );

    let wrong = [
        ("max_purchase", "50000"),
        ("daily_value", "lots"),
        ("daily_count", "100"),
        ("csrf", &proof),
    ];
    let (status, page) = post_page(&c, "/admin/limits/1", &owner, &wrong).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(
        page.contains("id=\"level-1-daily_value-error\""),
        "the message beside the field: {page}"
    );
    assert!(page.contains("must be an amount in Naira above 0"));
    assert!(page.contains("value=\"lots\""), "what was typed is kept");
    let (status, _) = post_page(&c, "/admin/limits/3", &owner, &wrong).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no level 3");
    assert_eq!(
        c.store.level_limits().await.unwrap(),
        before,
        "nothing changed"
    );
    assert_eq!(log_len(&c).await, lines, "nothing logged");

    // Every field as typed; blank is no limit; exact to the kobo.
    let right = [
        ("max_purchase", "50000"),
        ("daily_value", "75000.05"),
        ("daily_count", "100"),
        ("monthly_value", ""),
        ("monthly_count", ""),
        ("max_balance", "500000"),
        ("per_recipient_daily", "100000"),
        ("csrf", &proof),
    ];
    let (status, _) = post_page(&c, "/admin/limits/1", &owner, &right).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let after = c.store.level_limits().await.unwrap();
    let one = after.iter().find(|l| l.level == 1).unwrap();
    assert_eq!(one.limits.daily_value, Some(Kobo(7_500_005)));
    assert_eq!(one.limits.monthly_value, None);
    assert_eq!(one.limits.monthly_count, None);
    assert_eq!(one.limits.daily_count, Some(100));
    let others: Vec<_> = after.iter().filter(|l| l.level != 1).collect();
    let untouched: Vec<_> = before.iter().filter(|l| l.level != 1).collect();
    assert_eq!(others, untouched, "the other levels are as they were");
    let filter = LogFilter {
        limit: 1,
        ..LogFilter::default()
    };
    let line = &c.store.operator_log(filter).await.unwrap()[0];
    assert_eq!(line.action, "limits.level");
    assert_eq!(line.operator_email.as_deref(), Some("boss@example.com"));
    assert!(
        line.after
            .as_deref()
            .unwrap()
            .contains("daily value 75000.05"),
        "{line:?}"
    );
}
