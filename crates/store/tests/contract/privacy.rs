//! Data protection (issue 32): the customer's data read a page at a time
//! (never another account's rows), closing an account, and erasing a closed
//! account's personal data, each logged in its own transaction.

use crate::common::{funded_account, new_account, purchase, raw_rows, store};
use billpay_domain::{AccountId, Kobo};
use billpay_store::work;
use billpay_store::*;

fn line(action: &str, subject: AccountId) -> NewLogEntry {
    NewLogEntry {
        actor: "cli".into(),
        action: action.into(),
        subject: subject.to_string(),
        reason: Some("asked".into()),
        ..NewLogEntry::default()
    }
}

#[tokio::test]
async fn the_statement_and_purchases_are_read_a_page_at_a_time_and_only_the_accounts_own() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 10_000).await;
    let (other, other_key) = funded_account(&store, 10_000).await;
    for i in 0..3 {
        let reference = format!("mine-{i}");
        store
            .place_purchase(purchase(account, key, &reference, 100))
            .await
            .unwrap();
    }
    store
        .place_purchase(purchase(other, other_key, "theirs", 100))
        .await
        .unwrap();

    let first = store.ledger_page(account, 0, 3).await.unwrap();
    assert_eq!(first.len(), 3);
    let rest = store.ledger_page(account, first[2].id, 3).await.unwrap();
    assert_eq!(rest.len(), 1, "a credit and three debits in all");
    let all: Vec<_> = first.iter().chain(&rest).collect();
    assert!(all.iter().all(|e| e.account_id == account));
    assert!(all.windows(2).all(|w| w[0].id < w[1].id), "oldest first");

    let page = store.purchases_page(account, None, 2).await.unwrap();
    assert_eq!(page.len(), 2);
    let cursor = PurchaseCursor {
        created_at: page[1].created_at.clone(),
        code: page[1].code.clone(),
    };
    let next = store
        .purchases_page(account, Some(cursor), 2)
        .await
        .unwrap();
    let references: Vec<_> = page
        .iter()
        .chain(&next)
        .map(|p| p.reference.as_str())
        .collect();
    assert_eq!(references.len(), 3);
    for i in 0..3 {
        assert!(
            references.contains(&format!("mine-{i}").as_str()),
            "{references:?}"
        );
    }
    assert!(!references.contains(&"theirs"));
}

#[tokio::test]
async fn only_an_empty_closed_account_is_erased_once_and_its_email_is_free_again() {
    let (_db, store) = store().await;
    let (funded, _) = funded_account(&store, 50).await;
    let refused = store
        .write(
            (funded, line("account.close", funded)),
            |tx, (account, log)| Box::pin(work::close_account_logged(tx, *account, log)),
        )
        .await;
    assert!(
        matches!(&refused, Err(StoreError::Invalid(m)) if m.contains("still has 50.00")),
        "{refused:?}"
    );
    assert_eq!(
        store.account_closure(funded).await.unwrap(),
        None,
        "nothing changed"
    );

    let account = new_account(&store).await;
    let id = account.id;
    let kyc = billpay_store::limits::KycChange {
        level: 1,
        method: "bvn".into(),
        last4: Some("4321".into()),
        reason: "BVN of the holder matched".into(),
        set_by: "cli".into(),
    };
    let mut kyc_line = line("account.kyc_level", id);
    kyc_line.after = Some("level 1 (bvn ending 4321)".into());
    store
        .write((id, kyc, kyc_line), |tx, (account, change, log)| {
            Box::pin(work::set_kyc_logged(tx, *account, change, log))
        })
        .await
        .unwrap();
    let open = store
        .write((id, line("account.erase", id)), |tx, (account, log)| {
            Box::pin(work::erase_account_logged(tx, *account, log))
        })
        .await;
    assert!(
        matches!(&open, Err(StoreError::Invalid(m)) if m.contains("is open")),
        "{open:?}"
    );

    let closed = store
        .write((id, line("account.close", id)), |tx, (account, log)| {
            Box::pin(work::close_account_logged(tx, *account, log))
        })
        .await
        .unwrap();
    assert_eq!(closed.erased_at, None);
    let stored = store.account(id).await.unwrap().unwrap();
    assert_eq!(stored.status, AccountStatus::Suspended);
    let reopen = store
        .write(
            (id, AccountStatus::Active, line("account.status", id)),
            |tx, (account, status, log)| {
                Box::pin(work::set_account_status_logged(tx, *account, *status, log))
            },
        )
        .await;
    assert!(
        matches!(&reopen, Err(StoreError::Invalid(m)) if m.contains("stays closed")),
        "{reopen:?}"
    );

    let erased = store
        .write((id, line("account.erase", id)), |tx, (account, log)| {
            Box::pin(work::erase_account_logged(tx, *account, log))
        })
        .await
        .unwrap();
    assert_eq!(erased.tombstone, format!("erased-{id}"));
    let stored = store.account(id).await.unwrap().unwrap();
    assert_eq!(stored.email, erased.tombstone);
    assert_eq!(stored.name, erased.tombstone);
    assert_eq!(stored.password_hash, None);
    assert_eq!(stored.balance, Kobo(0));
    let kyc = store.account_limits(id).await.unwrap().kyc;
    assert_eq!(
        (kyc.level, kyc.last4),
        (1, None),
        "the level stays, not the digits"
    );
    assert_eq!(kyc.reason.as_deref(), Some("[erased]"));
    assert!(
        store
            .account_by_email(&account.email)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .account_closure(id)
            .await
            .unwrap()
            .unwrap()
            .erased_at
            .is_some()
    );
    let again = store
        .write((id, line("account.erase", id)), |tx, (account, log)| {
            Box::pin(work::erase_account_logged(tx, *account, log))
        })
        .await;
    assert!(
        matches!(&again, Err(StoreError::Invalid(m)) if m.contains("already erased")),
        "{again:?}"
    );

    let filter = LogFilter {
        subject: Some(id.to_string()),
        limit: 10,
        ..LogFilter::default()
    };
    let actions: Vec<_> = store
        .operator_log(filter)
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.action)
        .collect();
    assert_eq!(
        actions,
        ["account.erase", "account.close", "account.kyc_level"],
        "one line each, refusals none"
    );
    let lines = store.operator_log(LogFilter {
        subject: Some(id.to_string()),
        limit: 10,
        ..LogFilter::default()
    });
    let lines = lines.await.unwrap();
    let kyc_line = lines
        .iter()
        .find(|l| l.action == "account.kyc_level")
        .unwrap();
    assert_eq!(
        kyc_line.after.as_deref(),
        Some("[erased]"),
        "no last 4 digits in the log"
    );
    store
        .create_account(NewAccount {
            name: "Again".into(),
            email: account.email.clone(),
            password_hash: None,
            kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
        })
        .await
        .expect("the erased address is free");
}

/// The limits' usage rows name the account's recipients: erasure deletes
/// them, the hourly ones (the velocity rules') as well as the daily ones.
#[tokio::test]
async fn erasure_deletes_the_usage_rows_that_name_recipients() {
    let (db, store) = store().await;
    let id = new_account(&store).await.id;
    let other = new_account(&store).await.id;
    for account in [id, other] {
        for row in [
            "hourly_usage (account_id, recipient, hour, count) VALUES (?, '08031234567', 1, 1)",
            "recipient_usage (account_id, recipient, day, value)
             VALUES (?, '08031234567', '2026-11-29', 100)",
        ] {
            let row = row.replace('?', &format!("'{account}'"));
            raw_rows(&db, &format!("INSERT INTO {row}")).await;
        }
    }
    store
        .write((id, line("account.close", id)), |tx, (account, log)| {
            Box::pin(work::close_account_logged(tx, *account, log))
        })
        .await
        .unwrap();
    store
        .write((id, line("account.erase", id)), |tx, (account, log)| {
            Box::pin(work::erase_account_logged(tx, *account, log))
        })
        .await
        .unwrap();
    for table in ["hourly_usage", "recipient_usage"] {
        let left = raw_rows(&db, &format!("SELECT account_id FROM {table}")).await;
        let left: Vec<_> = left
            .into_iter()
            .map(|row| row[0].clone().unwrap())
            .collect();
        assert_eq!(
            left,
            [other.to_string()],
            "{table}: only the other account's row"
        );
    }
}
