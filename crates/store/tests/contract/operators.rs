//! Operators, their sessions, the append-only operator log, and the changes
//! logged in their own transaction: both stored, or neither.

use crate::common::{
    Db, account, assert_invariant, finalization, funded_account, new_account, purchase, store,
};
use billpay_domain::{AccountId, KeyId, Kobo, TxStatus};
use billpay_store::clock::now_ms;
use billpay_store::work;
use billpay_store::*;

fn line(action: &str, subject: &str) -> NewLogEntry {
    NewLogEntry {
        actor: "operator".into(),
        operator_id: Some(1),
        operator_email: Some("boss@example.com".into()),
        action: action.into(),
        subject: subject.into(),
        reason: Some("because".into()),
        ..NewLogEntry::default()
    }
}

async fn log_of(store: &SharedStore, subject: &str) -> Vec<LogEntry> {
    let filter = LogFilter {
        subject: Some(subject.into()),
        limit: 100,
        ..LogFilter::default()
    };
    store.operator_log(filter).await.unwrap()
}

fn owner(email: &str) -> NewOperator {
    NewOperator {
        email: email.into(),
        role: OperatorRole::Owner,
        password_hash: "hash".into(),
    }
}

#[tokio::test]
async fn an_operator_email_is_unique_in_any_case_and_found_in_any_case() {
    let (_db, store) = store().await;
    let created = store
        .write(
            (owner("Boss@Example.com"), line("operator.create", "boss")),
            |tx, (new, log)| Box::pin(work::create_operator(tx, new, log)),
        )
        .await
        .unwrap();
    assert_eq!(created.status, OperatorStatus::Active);
    let again = store
        .write(
            (owner("boss@example.COM"), line("operator.create", "boss")),
            |tx, (new, log)| Box::pin(work::create_operator(tx, new, log)),
        )
        .await;
    assert!(matches!(again, Err(StoreError::EmailTaken(_))));
    let found = store.operator_by_email("BOSS@example.com").await.unwrap();
    assert_eq!(found.unwrap().id, created.id);
    assert_eq!(
        log_of(&store, "boss").await.len(),
        1,
        "the refused one logged nothing"
    );
    assert_eq!(store.operators().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_totp_step_is_taken_once_and_only_forward() {
    let (_db, store) = store().await;
    let op = store
        .write(
            (owner("t@example.com"), line("operator.create", "t")),
            |tx, (new, log)| Box::pin(work::create_operator(tx, new, log)),
        )
        .await
        .unwrap();
    assert!(store.claim_totp_step(op.id, 100).await.unwrap());
    assert!(!store.claim_totp_step(op.id, 100).await.unwrap(), "reused");
    assert!(!store.claim_totp_step(op.id, 99).await.unwrap(), "older");
    assert!(store.claim_totp_step(op.id, 101).await.unwrap());
    // Many sign-ins with one code at once (as from several nodes): one wins.
    let tasks = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.claim_totp_step(op.id, 200).await.unwrap() })
        })
        .collect();
    let taken = crate::common::join_all(tasks).await;
    assert_eq!(taken.iter().filter(|t| **t).count(), 1, "{taken:?}");
    assert!(
        !store.claim_totp_step(op.id + 1, 300).await.unwrap(),
        "no such operator"
    );
}

#[tokio::test]
async fn disabling_or_a_new_password_ends_the_sessions_and_logs_it() {
    let (_db, store) = store().await;
    let op = store
        .write(
            (owner("a@example.com"), line("operator.create", "a")),
            |tx, (new, log)| Box::pin(work::create_operator(tx, new, log)),
        )
        .await
        .unwrap();
    let later = now_ms() + 60_000;
    store
        .create_operator_session("s1", op.id, later)
        .await
        .unwrap();
    let session = store.operator_session("s1").await.unwrap().unwrap();
    assert_eq!(session.operator_id, op.id);
    let change = OperatorChange::PasswordHash("new".into());
    let changed = store
        .write(
            (op.id, change, line("operator.password", "a")),
            |tx, (id, change, log)| Box::pin(work::update_operator(tx, *id, change, log)),
        )
        .await
        .unwrap();
    assert_eq!(changed.password_hash, "new");
    assert!(store.operator_session("s1").await.unwrap().is_none());
    store
        .create_operator_session("s2", op.id, later)
        .await
        .unwrap();
    let change = OperatorChange::Status(OperatorStatus::Disabled);
    store
        .write(
            (op.id, change, line("operator.status", "a")),
            |tx, (id, change, log)| Box::pin(work::update_operator(tx, *id, change, log)),
        )
        .await
        .unwrap();
    assert!(store.operator_session("s2").await.unwrap().is_none());
    store
        .create_operator_session("old", op.id, now_ms() - 1)
        .await
        .unwrap();
    assert!(
        store.operator_session("old").await.unwrap().is_none(),
        "expired"
    );
    assert_eq!(log_of(&store, "a").await.len(), 3);
}

#[tokio::test]
async fn a_logged_credit_and_debit_carry_the_balances_and_count_once() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let subject = account.to_string();
    let five = Kobo::from_naira(500);
    let credit = store
        .write(
            (
                account,
                five,
                "r1".to_string(),
                line("wallet.credit", &subject),
            ),
            |tx, (account, amount, reference, log)| {
                Box::pin(work::credit_logged(tx, *account, *amount, reference, log))
            },
        )
        .await
        .unwrap();
    assert!(credit.applied);
    let repeat = store
        .write(
            (
                account,
                five,
                "r1".to_string(),
                line("wallet.credit", &subject),
            ),
            |tx, (account, amount, reference, log)| {
                Box::pin(work::credit_logged(tx, *account, *amount, reference, log))
            },
        )
        .await
        .unwrap();
    assert!(!repeat.applied);
    let debit = store
        .write(
            (
                account,
                Kobo::from_naira(200),
                "r2".to_string(),
                line("wallet.debit", &subject),
            ),
            |tx, (account, amount, reference, log)| {
                Box::pin(work::debit_logged(tx, *account, *amount, reference, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(debit.balance, Kobo::from_naira(300));
    let too_much = store
        .write(
            (
                account,
                Kobo::from_naira(301),
                "r3".to_string(),
                line("wallet.debit", &subject),
            ),
            |tx, (account, amount, reference, log)| {
                Box::pin(work::debit_logged(tx, *account, *amount, reference, log))
            },
        )
        .await;
    assert!(matches!(
        too_much,
        Err(StoreError::Refused(Refusal::InsufficientBalance))
    ));
    let same_reference = store
        .write(
            (
                account,
                Kobo::from_naira(1),
                "r1".to_string(),
                line("wallet.debit", &subject),
            ),
            |tx, (account, amount, reference, log)| {
                Box::pin(work::debit_logged(tx, *account, *amount, reference, log))
            },
        )
        .await
        .unwrap();
    assert!(!same_reference.applied, "a reference is one operator move");
    let lines = log_of(&store, &subject).await;
    assert_eq!(lines.len(), 2, "only the moves that happened are logged");
    assert_eq!(lines[0].before.as_deref(), Some("balance 500.00"));
    assert_eq!(lines[0].after.as_deref(), Some("balance 300.00"));
    assert_eq!(lines[1].before.as_deref(), Some("balance 0.00"));
    let entries = store.ledger(account, 10).await.unwrap();
    assert_eq!(entries[0].kind, LedgerKind::Debit);
    assert_eq!(entries[0].transaction_code, None);
    assert_invariant(&store, account).await;
    let clean = store.audit().await.unwrap();
    assert!(clean.iter().all(|c| c.passed()), "{clean:?}");
}

#[tokio::test]
async fn a_logged_status_change_and_resolution_log_once_with_the_state_before() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1000).await;
    let subject = account.to_string();
    store
        .write(
            (
                account,
                AccountStatus::Suspended,
                line("account.status", &subject),
            ),
            |tx, (account, status, log)| {
                Box::pin(work::set_account_status_logged(tx, *account, *status, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(
        log_of(&store, &subject).await[0].before.as_deref(),
        Some("active")
    );
    let tx = store
        .place_purchase(purchase(account, key, "p1", 100))
        .await
        .unwrap();
    let fin = finalization(TxStatus::Failed, false);
    let resolve = line("transaction.resolve", &tx.code);
    assert!(
        store
            .write(
                (tx.code.to_string(), fin.clone(), resolve.clone()),
                |tx, (code, fin, log)| Box::pin(work::finalize_logged(tx, code, fin, log))
            )
            .await
            .unwrap()
    );
    assert!(
        !store
            .write(
                (tx.code.to_string(), fin, resolve),
                |tx, (code, fin, log)| Box::pin(work::finalize_logged(tx, code, fin, log))
            )
            .await
            .unwrap()
    );
    assert_eq!(
        log_of(&store, &tx.code).await.len(),
        1,
        "the no-op is not logged"
    );
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(1000)
    );
    let missing = store
        .write(
            (AccountId::new(), AccountStatus::Active, line("x", "y")),
            |tx, (account, status, log)| {
                Box::pin(work::set_account_status_logged(tx, *account, *status, log))
            },
        )
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound(_))));
    assert!(log_of(&store, "y").await.is_empty());
}

#[tokio::test]
async fn accounts_are_found_by_name_email_id_key_prefix_phone_or_reference_and_sales_are_summed() {
    let (_db, store) = store().await;
    let (account, key) = account(&store).await;
    let found = store.account(account).await.unwrap().unwrap();
    let by = |q: &str| {
        let store = store.clone();
        let q = q.to_owned();
        async move { store.search_accounts(&q, 10).await.unwrap() }
    };
    assert_eq!(by(&account.to_string()).await.len(), 1);
    let local = found.email.split('@').next().unwrap().to_uppercase();
    assert_eq!(by(&local).await[0].id, account);
    assert!(by("bp").await.iter().any(|a| a.id == account), "key prefix");
    assert!(by("no-such-customer-anywhere").await.is_empty());
    store
        .credit(account, Kobo::from_naira(100), "f")
        .await
        .unwrap();
    let placed = store
        .place_purchase(purchase(account, key, "s1", 30))
        .await
        .unwrap();
    // a customer who calls: found by a purchase's reference or code
    assert_eq!(by("s1").await[0].id, account, "reference");
    assert_eq!(by(&placed.code).await[0].id, account, "code");
    // and by their phone, however it is said or written
    assert!(by("08034567890").await.is_empty());
    store
        .update_profile(account, "A".into(), Some("08034567890".into()))
        .await
        .unwrap();
    for spelling in [
        "08034567890",
        "0803 456 7890",
        "+2348034567890",
        "234 803 456 7890",
    ] {
        let found = by(spelling).await;
        assert_eq!(found.len(), 1, "{spelling}");
        assert_eq!(found[0].id, account, "{spelling}");
    }
    assert!(by("08034567891").await.is_empty(), "another number");
    let summary = store.sales_summary("2000-01-01T00:00:00Z").await.unwrap();
    assert_eq!(summary.processing_count, 1);
    assert_eq!(summary.successful_count, 0);
}

#[tokio::test]
async fn the_operator_log_is_append_only() {
    let (db, store) = store().await;
    store.append_log(line("note", "s")).await.unwrap();
    let update = try_sql(&db, "UPDATE operator_log SET reason = 'x'").await;
    assert!(update.unwrap_err().contains("append-only"));
    let delete = try_sql(&db, "DELETE FROM operator_log").await;
    assert!(delete.unwrap_err().contains("append-only"));
    assert_eq!(
        log_of(&store, "s").await[0].reason.as_deref(),
        Some("because")
    );
}

/// Runs a statement behind the store's back; the database's refusal as text.
async fn try_sql(db: &Db, sql: &str) -> Result<(), String> {
    match db {
        Db::Sqlite(dir) => {
            let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
            conn.execute_batch(sql).map_err(|e| e.to_string())
        }
        Db::Postgres(db) => {
            let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            let result = client.batch_execute(sql).await;
            result.map_err(|e| format!("{e:?}"))
        }
    }
}

#[tokio::test]
async fn supplier_outcomes_count_each_suppliers_purchases_by_status() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1000).await;
    let since = billpay_store::clock::now_rfc3339();
    let mut codes = Vec::new();
    for reference in ["o1", "o2", "o3", "o4"] {
        let placed = store
            .place_purchase(purchase(account, key, reference, 10))
            .await
            .unwrap();
        codes.push(placed.code);
    }
    for code in &codes[..3] {
        store.mark_submitted(code, "vtpass", None).await.unwrap();
    }
    let success = finalization(TxStatus::Successful, false);
    store.finalize(&codes[0], success.clone()).await.unwrap();
    store.finalize(&codes[1], success).await.unwrap();
    let mut outcomes = store.supplier_outcomes(&since).await.unwrap();
    outcomes.sort_by_key(|o| (o.supplier.clone(), o.status.as_str()));
    let counted: Vec<_> = outcomes
        .iter()
        .map(|o| (o.supplier.as_deref(), o.status, o.count))
        .collect();
    assert_eq!(
        counted,
        [
            (None, TxStatus::Processing, 1),
            (Some("vtpass"), TxStatus::Processing, 1),
            (Some("vtpass"), TxStatus::Successful, 2),
        ]
    );
    let successful = &outcomes[2];
    assert!(
        successful.mean_final_ms.is_some_and(|ms| ms >= 0),
        "{successful:?}"
    );
    assert_eq!(outcomes[1].mean_final_ms, None, "still processing");
    assert!(store.supplier_outcomes("~").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_logged_tier_catalogue_or_key_change_stores_its_line_or_neither() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let subject = account.to_string();
    store.create_tier("gold").await.unwrap();
    let tier = line("pricing.account_tier", &subject);
    store
        .write(
            (account, Some("gold".to_owned()), tier.clone()),
            |tx, (account, tier, log)| {
                Box::pin(work::set_account_tier_logged(
                    tx,
                    *account,
                    tier.as_deref(),
                    log,
                ))
            },
        )
        .await
        .unwrap();
    let refused = store
        .write(
            (account, Some("platinum".to_owned()), tier.clone()),
            |tx, (account, tier, log)| {
                Box::pin(work::set_account_tier_logged(
                    tx,
                    *account,
                    tier.as_deref(),
                    log,
                ))
            },
        )
        .await;
    assert!(refused.is_err(), "no such tier");
    store
        .write(
            (account, None.map(str::to_owned), tier),
            |tx, (account, tier, log)| {
                Box::pin(work::set_account_tier_logged(
                    tx,
                    *account,
                    tier.as_deref(),
                    log,
                ))
            },
        )
        .await
        .unwrap();
    let lines = log_of(&store, &subject).await;
    assert_eq!(lines.len(), 2, "the refused change is not logged");
    assert_eq!(lines[1].before.as_deref(), Some("default"));
    assert_eq!(lines[0].before.as_deref(), Some("gold"));

    let off = line("catalogue.provider", "glo");
    store
        .write(
            ("glo".to_string(), false, off.clone()),
            |tx, (target, active, log)| {
                Box::pin(work::set_catalogue_active_logged(tx, target, *active, log))
            },
        )
        .await
        .unwrap();
    let (_, catalogue) = store.catalogue().await.unwrap();
    assert!(!catalogue.provider("glo").unwrap().active);
    let missing = store
        .write(
            (
                "no-such-plan".to_string(),
                false,
                line("catalogue.plan", "nope"),
            ),
            |tx, (target, active, log)| {
                Box::pin(work::set_catalogue_active_logged(tx, target, *active, log))
            },
        )
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound(_))));
    assert!(log_of(&store, "nope").await.is_empty());
    assert_eq!(
        log_of(&store, "glo").await[0].before.as_deref(),
        Some("on sale")
    );

    let new = NewApiKey {
        account_id: account,
        name: None,
        key_hash: "logged-key".into(),
        display_prefix: "bp_live_abc".into(),
        announce: true,
    };
    let created = store
        .write((new.clone(), line("key.create", "k")), |tx, (new, log)| {
            Box::pin(work::create_api_key_logged(tx, new, log))
        })
        .await
        .unwrap();
    let orphan = NewApiKey {
        account_id: AccountId::new(),
        key_hash: "orphan".into(),
        ..new
    };
    let no_account = store
        .write((orphan, line("key.create", "orphan")), |tx, (new, log)| {
            Box::pin(work::create_api_key_logged(tx, new, log))
        })
        .await;
    assert!(no_account.is_err());
    assert!(log_of(&store, "orphan").await.is_empty());
    let suspended = store
        .write(
            (
                created.id,
                KeyChange::Status(KeyStatus::Suspended),
                line("key.update", "k"),
            ),
            |tx, (id, change, log)| Box::pin(work::update_api_key_logged(tx, *id, change, log)),
        )
        .await
        .unwrap();
    assert_eq!(suspended.status, KeyStatus::Suspended);
    let gone = store
        .write(
            (
                KeyId::new(),
                KeyChange::Status(KeyStatus::Active),
                line("key.update", "gone"),
            ),
            |tx, (id, change, log)| Box::pin(work::update_api_key_logged(tx, *id, change, log)),
        )
        .await;
    assert!(gone.is_err());
    assert!(log_of(&store, "gone").await.is_empty());
    assert_eq!(log_of(&store, "k").await.len(), 2);
}

#[tokio::test]
async fn purchases_are_filtered_by_provider_supplier_and_recipient() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1000).await;
    let mut glo = purchase(account, key, "p2", 100);
    glo.provider = "glo".into();
    glo.recipient = "08051112222".into();
    store
        .place_purchase(purchase(account, key, "p1", 100))
        .await
        .unwrap();
    store.place_purchase(glo).await.unwrap();
    let found = |filter: TxFilter| {
        let store = store.clone();
        async move {
            let filter = TxFilter {
                account_id: Some(account),
                limit: 10,
                ..filter
            };
            let txs = store.transactions(filter).await.unwrap();
            txs.into_iter().map(|t| t.reference).collect::<Vec<_>>()
        }
    };
    let by_provider = TxFilter {
        provider: Some("glo".into()),
        ..TxFilter::default()
    };
    assert_eq!(found(by_provider).await, ["p2"]);
    let by_recipient = TxFilter {
        recipient: Some("3456".into()),
        ..TxFilter::default()
    };
    assert_eq!(found(by_recipient).await, ["p1"]);
    let by_supplier = TxFilter {
        supplier: Some("vtpass".into()),
        ..TxFilter::default()
    };
    assert!(found(by_supplier).await.is_empty(), "none sent to vtpass");
}

#[tokio::test]
async fn a_created_account_tier_or_price_rule_stores_its_line_or_neither() {
    use billpay_domain::Product;
    use billpay_domain::pricing::{BasisPoints, Rule, Scope};
    let (_db, store) = store().await;
    let new = NewAccount {
        name: "Ada".into(),
        email: "ada@example.com".into(),
        password_hash: None,
        kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
    };
    let created = store
        .write(
            (new.clone(), line("account.create", "")),
            |tx, (new, log)| Box::pin(work::create_account_logged(tx, new, log)),
        )
        .await
        .unwrap();
    let lines = log_of(&store, &created.id.to_string()).await;
    assert_eq!(lines.len(), 1, "logged under the new account's id");
    assert_eq!(lines[0].action, "account.create");
    let taken = NewAccount {
        email: "ADA@example.com".into(),
        ..new
    };
    let refused = store
        .write(
            (taken, line("account.create", "taken")),
            |tx, (new, log)| Box::pin(work::create_account_logged(tx, new, log)),
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::EmailTaken(_))),
        "{refused:?}"
    );
    let all = LogFilter {
        limit: 100,
        ..LogFilter::default()
    };
    assert_eq!(store.operator_log(all.clone()).await.unwrap().len(), 1);

    store
        .write(
            ("gold".to_string(), line("pricing.tier", "gold")),
            |tx, (name, log)| Box::pin(work::create_tier_logged(tx, name, log)),
        )
        .await
        .unwrap();
    let again = store
        .write(
            ("gold".to_string(), line("pricing.tier", "gold")),
            |tx, (name, log)| Box::pin(work::create_tier_logged(tx, name, log)),
        )
        .await;
    assert!(again.is_err(), "a tier is created once");
    assert_eq!(
        log_of(&store, "gold").await.len(),
        1,
        "the refusal is not logged"
    );

    let scope = Scope {
        product: Product::Airtime,
        provider: None,
        plan: None,
    };
    let rule = Some(Rule::DiscountPercent(BasisPoints(200)));
    let set = store
        .write(
            (
                "gold".to_string(),
                scope.clone(),
                rule,
                line("pricing.rule", "gold"),
            ),
            |tx, (tier, scope, rule, log)| {
                Box::pin(work::set_price_rule_logged(tx, tier, scope, *rule, log))
            },
        )
        .await
        .unwrap();
    assert!(set);
    let none = store
        .write(
            (
                "silver".to_string(),
                scope.clone(),
                rule,
                line("pricing.rule", "silver"),
            ),
            |tx, (tier, scope, rule, log)| {
                Box::pin(work::set_price_rule_logged(tx, tier, scope, *rule, log))
            },
        )
        .await;
    assert!(none.is_err(), "no such tier");
    assert!(log_of(&store, "silver").await.is_empty());
    let removed = store
        .write(
            (
                "gold".to_string(),
                scope.clone(),
                None,
                line("pricing.rule", "gold"),
            ),
            |tx, (tier, scope, rule, log)| {
                Box::pin(work::set_price_rule_logged(tx, tier, scope, *rule, log))
            },
        )
        .await
        .unwrap();
    let nothing = store
        .write(
            (
                "gold".to_string(),
                scope,
                None,
                line("pricing.rule", "gold"),
            ),
            |tx, (tier, scope, rule, log)| {
                Box::pin(work::set_price_rule_logged(tx, tier, scope, *rule, log))
            },
        )
        .await
        .unwrap();
    assert!(removed && !nothing);
    let actions: Vec<String> = log_of(&store, "gold")
        .await
        .into_iter()
        .map(|l| l.action)
        .collect();
    assert_eq!(
        actions,
        ["pricing.rule", "pricing.rule", "pricing.tier"],
        "a removal of nothing is not logged"
    );
    assert_eq!(store.operator_log(all).await.unwrap().len(), 4);
}

#[tokio::test]
async fn a_sync_applied_or_a_new_webhook_secret_stores_its_line_or_neither() {
    use billpay_domain::sealed::SecretBox;
    let (_db, store) = store().await;
    let (_, mut catalogue) = store.catalogue().await.unwrap();
    catalogue.providers[0].active = !catalogue.providers[0].active;
    store
        .write(
            (catalogue.clone(), line("catalogue.sync", "vtpass")),
            |tx, (catalogue, log)| Box::pin(work::replace_catalogue_logged(tx, catalogue, log)),
        )
        .await
        .unwrap();
    assert_eq!(
        store.catalogue().await.unwrap().1.providers[0].active,
        catalogue.providers[0].active
    );
    assert_eq!(log_of(&store, "vtpass").await.len(), 1);
    let mut broken = catalogue.clone();
    broken.providers.push(broken.providers[0].clone());
    let refused = store
        .write(
            (broken.clone(), line("catalogue.sync", "broken")),
            |tx, (catalogue, log)| Box::pin(work::replace_catalogue_logged(tx, catalogue, log)),
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    assert!(log_of(&store, "broken").await.is_empty());

    let (_, key) = account(&store).await;
    let secrets = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
    let store_ref = store.as_ref();
    let issued =
        issue::issue_webhook_secret_logged(store_ref, key, &secrets, line("key.update", "signing"))
            .await
            .unwrap();
    assert!(issued.record.webhook_secret_sealed.is_some());
    assert_eq!(log_of(&store, "signing").await.len(), 1);
    let gone = issue::issue_webhook_secret_logged(
        store_ref,
        KeyId::new(),
        &secrets,
        line("key.update", "gone"),
    )
    .await;
    assert!(gone.is_err());
    assert!(log_of(&store, "gone").await.is_empty());
}
