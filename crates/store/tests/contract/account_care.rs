use crate::common::{Db, new_account, store};
use billpay_domain::{AccountId, Kobo};
use billpay_store::clock::{now_ms, rfc3339};
use billpay_store::issue::{
    email_code_hash, issue_password_reset, issue_pin_reset, issue_session, new_email_code,
    reset_token_hash, session_token_hash, shop_key,
};
use billpay_store::*;
use std::time::Duration;

fn sign_up_of(email: &str) -> (String, NewSignUp) {
    let (code, stored) = new_email_code("Ada");
    let new = NewSignUp {
        account: NewAccount {
            name: "Ada".into(),
            email: email.into(),
            password_hash: Some("$argon2id$stored".into()),
            kyc_level: 0,
        },
        phone: Some("08031234567".into()),
        tier: None,
        code: stored,
        referral: None,
    };
    (code, new)
}

/// The notices queued for an account (kind, recipient, data), read from the table.
async fn notices_of(db: &Db, account: AccountId) -> Vec<(String, String, serde_json::Value)> {
    let sql =
        "SELECT kind, recipient, data FROM notices WHERE account_id = $1 ORDER BY created_at, id";
    match db {
        Db::Sqlite(dir) => {
            let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
            let mut statement = conn.prepare(&sql.replace("$1", "?1")).unwrap();
            let rows = statement
                .query_map([account.to_string()], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))
                })
                .unwrap();
            rows.map(|r| r.unwrap())
                .map(|(k, to, data)| (k, to, serde_json::from_str(&data).unwrap()))
                .collect()
        }
        Db::Postgres(scratch) => {
            let (client, connection) = tokio_postgres::connect(&scratch.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            let rows = client.query(sql, &[&account.to_string()]).await.unwrap();
            rows.iter()
                .map(|r| {
                    let data: String = r.get(2);
                    (r.get(0), r.get(1), serde_json::from_str(&data).unwrap())
                })
                .collect()
        }
    }
}

fn unique_email() -> String {
    format!("{}@example.com", uuid::Uuid::new_v4())
}

#[tokio::test]
async fn a_sign_up_is_an_unverified_self_account_with_its_code_notice() {
    let (db, store) = store().await;
    store.create_tier("retail").await.unwrap();
    let email = unique_email();
    let (code, mut new) = sign_up_of(&email);
    new.tier = Some("retail".into());
    let account = store.sign_up(new).await.unwrap();
    assert_eq!(account.signed_up, SignedUp::Myself);
    assert_eq!(account.phone.as_deref(), Some("08031234567"));
    assert!(account.email_verified_at.is_none());
    assert!(
        !account.verified(),
        "no purchase or funding before the code"
    );
    let (_, book) = store.price_book().await.unwrap();
    assert_eq!(
        book.tier_of(account.id).map(|t| t.name.as_str()),
        Some("retail")
    );

    let notices = notices_of(&db, account.id).await;
    assert_eq!(notices.len(), 1);
    let (kind, recipient, data) = &notices[0];
    assert_eq!(kind, "email_verification");
    assert_eq!(recipient, &email);
    assert_eq!(data["code"], code.as_str());
    assert_eq!(data["name"], "Ada");

    let (_, again) = sign_up_of(&email.to_uppercase());
    let taken = store.sign_up(again).await.unwrap_err();
    assert!(matches!(taken, StoreError::EmailTaken(_)), "{taken:?}");
    assert_eq!(
        notices_of(&db, account.id).await.len(),
        1,
        "nothing written"
    );
    let operator_made = new_account(&store).await;
    assert_eq!(operator_made.signed_up, SignedUp::Operator);
    assert!(
        operator_made.verified(),
        "an operator vouches for its accounts"
    );
}

#[tokio::test]
async fn a_code_is_tried_a_bounded_number_of_times_and_used_once() {
    let (_db, store) = store().await;
    let (code, new) = sign_up_of(&unique_email());
    let account = store.sign_up(new).await.unwrap();
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let tried = store
        .check_email_code(account.id, email_code_hash(wrong), 3)
        .await
        .unwrap();
    assert_eq!(tried, CodeCheck::Wrong { left: 2 });
    let right = store
        .check_email_code(account.id, email_code_hash(&code), 3)
        .await
        .unwrap();
    assert_eq!(
        right,
        CodeCheck::Verified {
            email: account.email.clone()
        }
    );
    let verified = store.account(account.id).await.unwrap().unwrap();
    assert!(verified.email_verified_at.is_some() && verified.verified());
    let again = store
        .check_email_code(account.id, email_code_hash(&code), 3)
        .await
        .unwrap();
    assert_eq!(again, CodeCheck::NoCode, "a code is used once");

    let (code, new) = sign_up_of(&unique_email());
    let other = store.sign_up(new).await.unwrap();
    for _ in 0..3 {
        let _ = store
            .check_email_code(other.id, email_code_hash(wrong), 3)
            .await;
    }
    let late = store
        .check_email_code(other.id, email_code_hash(&code), 3)
        .await
        .unwrap();
    assert_eq!(late, CodeCheck::NoCode, "out of tries, even the right code");
}

#[tokio::test]
async fn racing_tries_of_the_right_code_verify_once() {
    let (_db, store) = store().await;
    let (code, new) = sign_up_of(&unique_email());
    let account = store.sign_up(new).await.unwrap();
    let tries = (0..8).map(|_| {
        let (store, hash) = (store.clone(), email_code_hash(&code));
        tokio::spawn(async move { store.check_email_code(account.id, hash, 5).await.unwrap() })
    });
    let outcomes = futures_util::future::join_all(tries).await;
    let verified = outcomes
        .iter()
        .filter(|o| matches!(o.as_ref().unwrap(), CodeCheck::Verified { .. }))
        .count();
    assert_eq!(verified, 1);
}

#[tokio::test]
async fn an_expired_code_proves_nothing() {
    let (_db, store) = store().await;
    let account = new_account(&store).await;
    let (code, mut stored) = new_email_code("A");
    stored.expires_at_ms = now_ms() - 1;
    store
        .issue_email_code(account.id, "new@example.com", stored)
        .await
        .unwrap();
    assert_eq!(store.pending_email(account.id).await.unwrap(), None);
    let late = store
        .check_email_code(account.id, email_code_hash(&code), 5)
        .await
        .unwrap();
    assert_eq!(late, CodeCheck::NoCode);
}

#[tokio::test]
async fn a_new_address_takes_effect_only_with_its_code() {
    let (db, store) = store().await;
    let account = new_account(&store).await;
    let new_email = unique_email();
    let (code, stored) = new_email_code("A");
    store
        .issue_email_code(account.id, &new_email, stored)
        .await
        .unwrap();
    assert_eq!(
        store.pending_email(account.id).await.unwrap(),
        Some(new_email.clone())
    );
    let unchanged = store.account(account.id).await.unwrap().unwrap();
    assert_eq!(unchanged.email, account.email, "not before the code");
    let notices = notices_of(&db, account.id).await;
    assert_eq!(
        notices.last().unwrap().1,
        new_email,
        "the code goes to the new address"
    );
    let checked = store
        .check_email_code(account.id, email_code_hash(&code), 5)
        .await
        .unwrap();
    assert_eq!(
        checked,
        CodeCheck::Verified {
            email: new_email.clone()
        }
    );
    let moved = store.account(account.id).await.unwrap().unwrap();
    assert_eq!(moved.email, new_email);
    assert!(
        store
            .account_by_email(&account.email)
            .await
            .unwrap()
            .is_none()
    );

    // Another account takes the address before the code is entered.
    let late = new_account(&store).await;
    let wanted = unique_email();
    let (code, stored) = new_email_code("A");
    store
        .issue_email_code(late.id, &wanted, stored)
        .await
        .unwrap();
    let (_, first) = sign_up_of(&wanted);
    store.sign_up(first).await.unwrap();
    let checked = store
        .check_email_code(late.id, email_code_hash(&code), 5)
        .await
        .unwrap();
    assert_eq!(checked, CodeCheck::EmailTaken);
}

/// The token of the one `kind` link (`password_reset`, `pin_reset`) sent to
/// the account that is not in `seen`: notices stored in the same millisecond
/// have no order between them, so "the last" would be either.
async fn new_link_token(db: &Db, account: AccountId, kind: &str, seen: &[&str]) -> String {
    let prefix = match kind {
        "password_reset" => "https://shop.example.com/dashboard/reset/",
        _ => "https://shop.example.com/dashboard/pin/reset/",
    };
    let tokens: Vec<String> = notices_of(db, account)
        .await
        .into_iter()
        .filter(|(k, _, _)| k == kind)
        .map(|(_, _, data)| {
            let link = data["link"].as_str().unwrap().to_owned();
            assert!(link.starts_with(prefix), "{link}");
            link.rsplit('/').next().unwrap().to_owned()
        })
        .filter(|token| !seen.contains(&token.as_str()))
        .collect();
    assert_eq!(tokens.len(), 1, "one new {kind} link: {tokens:?}");
    tokens.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_reset_link_is_used_once_and_ends_every_session() {
    let (db, store) = store().await;
    let account = new_account(&store).await;
    let lifetime = Duration::from_secs(60);
    let session = issue_session(store.as_ref(), account.id, lifetime)
        .await
        .unwrap();
    let base = "https://shop.example.com/";
    issue_password_reset(store.as_ref(), &account, base, None)
        .await
        .unwrap();
    let first = new_link_token(&db, account.id, "password_reset", &[]).await;
    issue_password_reset(store.as_ref(), &account, base, None)
        .await
        .unwrap();
    let token = new_link_token(&db, account.id, "password_reset", &[&first]).await;
    assert_ne!(first, token);
    let hash = reset_token_hash(&token);
    assert!(store.password_reset_valid(&hash).await.unwrap());

    let racing = (0..6).map(|_| {
        let (store, hash) = (store.clone(), hash.clone());
        tokio::spawn(async move {
            store
                .reset_password(&hash, "$argon2id$new".into())
                .await
                .unwrap()
        })
    });
    let used: Vec<_> = futures_util::future::join_all(racing)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(
        used.iter().filter(|u| **u == Some(account.id)).count(),
        1,
        "once"
    );
    assert!(!store.password_reset_valid(&hash).await.unwrap());
    let changed = store.account(account.id).await.unwrap().unwrap();
    assert_eq!(changed.password_hash.as_deref(), Some("$argon2id$new"));
    assert!(
        store
            .session_account(&session_token_hash(&session))
            .await
            .unwrap()
            .is_none(),
        "signed out everywhere"
    );
    let other = reset_token_hash(&first);
    assert_eq!(
        store.reset_password(&other, "$x".into()).await.unwrap(),
        None,
        "the other link died"
    );
}

#[tokio::test]
async fn an_expired_or_unknown_link_resets_nothing() {
    let (_db, store) = store().await;
    let account = new_account(&store).await;
    let reset = NewPasswordReset {
        account_id: account.id,
        token_hash: reset_token_hash("expired"),
        expires_at_ms: now_ms() - 1,
        purpose: ResetPurpose::Password,
        notice: NoticeDraft {
            kind: "password_reset".into(),
            data: serde_json::json!({ "name": "A", "link": "x" }),
        },
        log: None,
    };
    store.start_password_reset(reset).await.unwrap();
    let expired = reset_token_hash("expired");
    assert!(!store.password_reset_valid(&expired).await.unwrap());
    assert_eq!(
        store.reset_password(&expired, "$x".into()).await.unwrap(),
        None
    );
    let unknown = reset_token_hash("unknown");
    assert_eq!(
        store.reset_password(&unknown, "$x".into()).await.unwrap(),
        None
    );
    let kept = store.account(account.id).await.unwrap().unwrap();
    assert_eq!(kept.password_hash, account.password_hash);
}

#[tokio::test]
async fn a_changed_password_keeps_only_the_session_that_changed_it() {
    let (_db, store) = store().await;
    let account = new_account(&store).await;
    let lifetime = Duration::from_secs(60);
    let here = issue_session(store.as_ref(), account.id, lifetime)
        .await
        .unwrap();
    let there = issue_session(store.as_ref(), account.id, lifetime)
        .await
        .unwrap();
    let (here, there) = (session_token_hash(&here), session_token_hash(&there));
    store
        .change_password(account.id, "$argon2id$changed".into(), &here)
        .await
        .unwrap();
    assert!(store.session_account(&here).await.unwrap().is_some());
    assert!(store.session_account(&there).await.unwrap().is_none());
    let profile = store
        .update_profile(
            account.id,
            "Ada Lovelace".into(),
            Some("08031234567".into()),
        )
        .await
        .unwrap();
    assert_eq!(profile.name, "Ada Lovelace");
    assert_eq!(profile.phone.as_deref(), Some("08031234567"));
}

#[tokio::test]
async fn only_empty_unverified_sign_ups_are_pruned() {
    let (_db, store) = store().await;
    let sign_up = |store: SharedStore| async move {
        let (code, new) = sign_up_of(&unique_email());
        (store.sign_up(new).await.unwrap(), code)
    };
    let (idle, _) = sign_up(store.clone()).await;
    let (verified, code) = sign_up(store.clone()).await;
    store
        .check_email_code(verified.id, email_code_hash(&code), 5)
        .await
        .unwrap();
    let (funded, _) = sign_up(store.clone()).await;
    store.credit(funded.id, Kobo(100), "gift").await.unwrap();
    let (session_only, _) = sign_up(store.clone()).await;
    issue_session(store.as_ref(), session_only.id, Duration::from_secs(60))
        .await
        .unwrap();
    let operator_made = new_account(&store).await;
    // an owner who set its level looked at it: not a stray sign-up (and its
    // row would stop the prune's delete)
    let (levelled, _) = sign_up(store.clone()).await;
    crate::limits::set_level(&store, levelled.id, 1).await;

    let before_all = rfc3339(now_ms() - 60_000);
    assert_eq!(
        store.prune_unverified(&before_all).await.unwrap(),
        0,
        "too young"
    );
    let after_all = rfc3339(now_ms() + 60_000);
    assert_eq!(store.prune_unverified(&after_all).await.unwrap(), 2);
    for gone in [idle.id, session_only.id] {
        assert!(store.account(gone).await.unwrap().is_none());
    }
    for kept in [verified.id, funded.id, operator_made.id, levelled.id] {
        assert!(store.account(kept).await.unwrap().is_some());
    }
}

#[tokio::test]
async fn sign_ups_are_counted_since_each_bound() {
    let (_db, store) = store().await;
    let start = rfc3339(now_ms() - 1000);
    for _ in 0..2 {
        let (_, new) = sign_up_of(&unique_email());
        store.sign_up(new).await.unwrap();
    }
    new_account(&store).await;
    let later = rfc3339(now_ms() + 60_000);
    let counts = store.sign_up_counts(&start, &start).await.unwrap();
    assert_eq!(
        counts,
        SignUpCounts { today: 2, month: 2 },
        "self sign-ups only"
    );
    let counts = store.sign_up_counts(&later, &start).await.unwrap();
    assert_eq!(counts, SignUpCounts { today: 0, month: 2 });
}

/// The token of the last PIN-reset link emailed to `account`.
#[tokio::test]
async fn a_pin_reset_link_sets_a_new_pin_once_and_ends_the_lock() {
    let (db, store) = store().await;
    let account = new_account(&store).await;
    let id = account.id;
    store
        .set_transaction_pin(id, "$argon2id$old".into(), shop_key(id))
        .await
        .unwrap();
    for _ in 0..billpay_domain::transaction_pin::MAX_FAILURES {
        store.take_pin_try(id).await.unwrap();
        store.pin_failed(id).await.unwrap();
    }
    let locked = store.transaction_pin(id).await.unwrap().unwrap();
    assert!(locked.locked_until_ms > now_ms(), "{locked:?}");

    let base = "https://shop.example.com";
    issue_pin_reset(store.as_ref(), &account, base)
        .await
        .unwrap();
    let first = new_link_token(&db, id, "pin_reset", &[]).await;
    issue_pin_reset(store.as_ref(), &account, base)
        .await
        .unwrap();
    let token = new_link_token(&db, id, "pin_reset", &[&first]).await;
    let hash = reset_token_hash(&token);
    // a PIN link is no password link
    assert!(!store.password_reset_valid(&hash).await.unwrap());
    assert_eq!(
        store.reset_password(&hash, "$x".into()).await.unwrap(),
        None
    );
    let found = store.pin_reset_account(&hash).await.unwrap();
    assert_eq!(found.map(|a| a.id), Some(id));

    let racing = (0..6).map(|_| {
        let (store, hash) = (store.clone(), hash.clone());
        tokio::spawn(async move {
            let new = "$argon2id$new".to_owned();
            store.reset_pin(&hash, new, shop_key(id)).await.unwrap()
        })
    });
    let used: Vec<_> = futures_util::future::join_all(racing)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(used.iter().filter(|u| **u == Some(id)).count(), 1, "once");
    let state = store.transaction_pin(id).await.unwrap().unwrap();
    assert_eq!((state.failures, state.locked_until_ms), (0, 0), "unlocked");
    match store.take_pin_try(id).await.unwrap() {
        PinTry::Check { pin_hash, .. } => assert_eq!(pin_hash, "$argon2id$new"),
        other => panic!("{other:?}"),
    }
    assert!(store.pin_reset_account(&hash).await.unwrap().is_none());
    let other = reset_token_hash(&first);
    assert_eq!(
        store
            .reset_pin(&other, "$y".into(), shop_key(id))
            .await
            .unwrap(),
        None,
        "the other PIN link died"
    );
    // and a password link is no PIN link
    issue_password_reset(store.as_ref(), &account, base, None)
        .await
        .unwrap();
    let password = reset_token_hash(&new_link_token(&db, id, "password_reset", &[]).await);
    assert!(store.pin_reset_account(&password).await.unwrap().is_none());
    let unchanged = store.account(id).await.unwrap().unwrap();
    assert_eq!(unchanged.password_hash, account.password_hash);
}
