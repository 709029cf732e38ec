use crate::common::{
    account, finalization, funded_account, join_all, new_account, purchase, sealed_store, store,
};
use billpay_domain::{AccountId, Kobo, Product, TxStatus};
use billpay_store::*;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

/// A worker with both channels.
fn both() -> Vec<String> {
    vec!["email".into(), "sms".into()]
}

fn notice(cause: &str, channel: &str) -> NewNotice {
    NewNotice {
        cause: cause.into(),
        kind: "funding_credited".into(),
        channel: channel.into(),
        recipient: "ada@example.com".into(),
        account_id: None,
        operator_id: None,
        data: serde_json::json!({ "amount": "1000.00" }),
    }
}

/// The notices of `account`, oldest first, as `(kind, channel)`.
async fn kinds(store: &SharedStore, account: AccountId) -> Vec<(String, String)> {
    let filter = NoticeFilter {
        account_id: Some(account),
        limit: 100,
        ..NoticeFilter::default()
    };
    let mut found = store.notices(filter).await.unwrap();
    found.reverse();
    found.into_iter().map(|n| (n.kind, n.channel)).collect()
}

fn of_kind(found: &[(String, String)], kind: &str) -> Vec<String> {
    found
        .iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, channel)| channel.clone())
        .collect()
}

#[tokio::test]
async fn a_cause_adds_one_notice_per_channel_however_often_it_is_replayed() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let mut first = notice("funding:REF-1", "email");
    first.account_id = Some(account);
    assert!(store.enqueue_notice(first.clone()).await.unwrap());
    assert!(
        !store.enqueue_notice(first).await.unwrap(),
        "a replay adds nothing"
    );
    assert!(
        store
            .enqueue_notice(notice("funding:REF-1", "sms"))
            .await
            .unwrap()
    );
    assert!(
        store
            .enqueue_notice(notice("funding:REF-2", "email"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_claim_leases_each_due_notice_once_and_counts_the_attempt() {
    let (_db, store) = store().await;
    store.enqueue_notice(notice("c:1", "email")).await.unwrap();
    store.enqueue_notice(notice("c:2", "email")).await.unwrap();
    let claimed = store.claim_notices(both(), 10, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 2);
    assert!(
        claimed
            .iter()
            .all(|n| n.attempts == 1 && n.status == NoticeStatus::Queued)
    );
    assert!(
        store
            .claim_notices(both(), 10, LEASE)
            .await
            .unwrap()
            .is_empty(),
        "leased"
    );
    // an expired lease (a crashed worker) makes it due again
    store.enqueue_notice(notice("c:3", "email")).await.unwrap();
    let short = store
        .claim_notices(both(), 1, Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(short.len(), 1);
    let again = store.claim_notices(both(), 10, LEASE).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].id.clone(), again[0].attempts),
        (short[0].id.clone(), 2)
    );
}

#[tokio::test]
async fn concurrent_claims_never_hand_out_one_notice_twice() {
    let (_db, store) = store().await;
    for i in 0..20 {
        store
            .enqueue_notice(notice(&format!("c:{i}"), "email"))
            .await
            .unwrap();
    }
    let tasks = (0..4)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.claim_notices(both(), 8, LEASE).await.unwrap() })
        })
        .collect();
    let mut ids: Vec<String> = join_all(tasks)
        .await
        .into_iter()
        .flatten()
        .map(|n| n.id)
        .collect();
    let claimed = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), claimed, "a notice was claimed twice");
    assert_eq!(claimed, 20);
}

#[tokio::test]
async fn a_send_is_recorded_sent_retried_later_or_failed() {
    let (_db, store) = store().await;
    for cause in ["s", "r", "f"] {
        store.enqueue_notice(notice(cause, "email")).await.unwrap();
    }
    let claimed = store.claim_notices(both(), 10, LEASE).await.unwrap();
    let id = |cause: &str| {
        claimed
            .iter()
            .find(|n| n.cause == cause)
            .unwrap()
            .id
            .clone()
    };
    let provider = "mail_dir".to_string();
    let sent = NoticeOutcome::Sent {
        provider: provider.clone(),
        provider_id: Some("p-1".into()),
    };
    store.record_notice(&id("s"), sent).await.unwrap();
    let later = NoticeOutcome::Retry {
        provider: provider.clone(),
        error: "421 try later".into(),
        at_ms: clock::now_ms() + 60_000,
    };
    store.record_notice(&id("r"), later).await.unwrap();
    let failed = NoticeOutcome::Failed {
        provider: provider.clone(),
        error: "gave up".into(),
    };
    store.record_notice(&id("f"), failed).await.unwrap();

    let sent = store.notice(&id("s")).await.unwrap().unwrap();
    assert_eq!(sent.status, NoticeStatus::Sent);
    assert_eq!(sent.provider_id.as_deref(), Some("p-1"));
    assert!(sent.sent_at.is_some());
    let retried = store.notice(&id("r")).await.unwrap().unwrap();
    assert_eq!(retried.status, NoticeStatus::Queued);
    assert_eq!(retried.last_error.as_deref(), Some("421 try later"));
    assert!(
        store
            .claim_notices(both(), 10, LEASE)
            .await
            .unwrap()
            .is_empty(),
        "not due yet"
    );
    let failed = store.notice(&id("f")).await.unwrap().unwrap();
    assert_eq!(failed.status, NoticeStatus::Failed);
    // a late record of a notice no longer queued changes nothing
    let late = NoticeOutcome::Failed {
        provider,
        error: "late".into(),
    };
    store.record_notice(&id("s"), late).await.unwrap();
    assert_eq!(
        store.notice(&id("s")).await.unwrap().unwrap().status,
        NoticeStatus::Sent
    );
    let only_failed = NoticeFilter {
        status: Some(NoticeStatus::Failed),
        limit: 10,
        ..NoticeFilter::default()
    };
    let listed = store.notices(only_failed).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].cause, "f");
}

#[tokio::test]
async fn an_address_refused_for_good_is_not_tried_again_until_an_operator_resends() {
    let (_db, store) = store().await;
    store
        .enqueue_notice(notice("first", "email"))
        .await
        .unwrap();
    let first = store
        .claim_notices(both(), 1, LEASE)
        .await
        .unwrap()
        .remove(0);
    let refused = NoticeOutcome::Refused {
        provider: "smtp".into(),
        error: "550 no such user".into(),
    };
    store.record_notice(&first.id, refused).await.unwrap();
    store
        .enqueue_notice(notice("second", "email"))
        .await
        .unwrap();
    assert!(
        store
            .claim_notices(both(), 10, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    let filter = NoticeFilter {
        limit: 10,
        ..NoticeFilter::default()
    };
    let listed = store.notices(filter).await.unwrap();
    assert_eq!(listed[0].cause, "second", "newest first");
    assert_eq!(listed[0].status, NoticeStatus::Failed);
    let why = listed[0].last_error.clone().unwrap();
    assert!(why.contains("550 no such user"), "{why}");
    // another channel, another address: unaffected
    store.enqueue_notice(notice("third", "sms")).await.unwrap();
    assert_eq!(
        store.claim_notices(both(), 10, LEASE).await.unwrap().len(),
        1
    );
    // the operator's resend lifts the suppression
    store.requeue_notice(&first.id).await.unwrap();
    let resent = store.claim_notices(both(), 10, LEASE).await.unwrap();
    assert_eq!(resent.len(), 1);
    assert_eq!(
        (resent[0].id.clone(), resent[0].attempts),
        (first.id.clone(), 1)
    );
    store
        .enqueue_notice(notice("fourth", "email"))
        .await
        .unwrap();
    assert_eq!(
        store.claim_notices(both(), 10, LEASE).await.unwrap().len(),
        1
    );
}

#[tokio::test]
async fn a_resend_is_refused_while_a_send_holds_the_notice() {
    let (_db, store) = store().await;
    store.enqueue_notice(notice("held", "email")).await.unwrap();
    let held = store
        .claim_notices(both(), 1, LEASE)
        .await
        .unwrap()
        .remove(0);
    let err = store.requeue_notice(&held.id).await.unwrap_err();
    assert!(matches!(err, StoreError::DeliveryInProgress), "{err}");
    let err = store.requeue_notice("NT-none").await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err}");
}

#[tokio::test]
async fn preferences_default_to_email_only_and_are_kept() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let defaults = store.notice_preferences(account).await.unwrap();
    assert_eq!(defaults, NoticePreferences::default());
    assert!(defaults.topic(NoticeTopic::Funding).email);
    assert!(!defaults.topic(NoticeTopic::Funding).sms);
    let mut choices = defaults.clone();
    choices.phone = Some("2348031234567".into());
    choices.low_balance_below = Some(Kobo(100_000));
    choices.set_topic(
        NoticeTopic::Refund,
        TopicChoice {
            email: false,
            sms: true,
        },
    );
    store
        .set_notice_preferences(account, choices.clone())
        .await
        .unwrap();
    // the phone is set only by its proof, never with the choices
    let kept = NoticePreferences {
        phone: None,
        ..choices.clone()
    };
    assert_eq!(store.notice_preferences(account).await.unwrap(), kept);
    prove_phone(&store, account, "2348031234567").await;
    choices.phone = None;
    store
        .set_notice_preferences(account, choices.clone())
        .await
        .unwrap();
    let proven = NoticePreferences {
        phone: Some("2348031234567".into()),
        ..choices
    };
    assert_eq!(store.notice_preferences(account).await.unwrap(), proven);
}

fn payment(reference: &str, account: AccountId) -> NewFunding {
    NewFunding {
        gateway: "monnify".into(),
        gateway_reference: reference.into(),
        status: FundingStatus::Credited,
        account_id: Some(account),
        amount: Kobo(500_000),
        fee: Kobo(7_500),
        currency: Some("NGN".into()),
        customer_ref: None,
        account_number: None,
        payer: None,
        note: "test".into(),
    }
}

#[tokio::test]
async fn a_credited_payment_adds_one_notice_with_amount_fee_and_balance() {
    let (_db, store) = store().await;
    let account = new_account(&store).await;
    store
        .record_funding(payment("MNFY|1", account.id))
        .await
        .unwrap();
    store
        .record_funding(payment("MNFY|1", account.id))
        .await
        .unwrap();
    let found = store
        .notices(NoticeFilter {
            account_id: Some(account.id),
            kind: Some("funding_credited".into()),
            limit: 10,
            ..NoticeFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "a replayed payment adds nothing");
    assert_eq!(found[0].recipient, account.email);
    assert_eq!(found[0].channel, "email");
    let data = &found[0].data;
    assert_eq!(data["amount"], 500_000);
    assert_eq!(data["fee"], 7_500);
    assert_eq!(data["credited"], 492_500);
    assert_eq!(data["balance"], 492_500);
}

#[tokio::test]
async fn choices_decide_the_channels_of_a_customer_notice() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let mut choices = NoticePreferences {
        phone: Some("2348031234567".into()),
        ..NoticePreferences::default()
    };
    choices.set_topic(
        NoticeTopic::Funding,
        TopicChoice {
            email: false,
            sms: true,
        },
    );
    store
        .set_notice_preferences(account, choices.clone())
        .await
        .unwrap();
    prove_phone(&store, account, "2348031234567").await;
    store
        .record_funding(payment("MNFY|a", account))
        .await
        .unwrap();
    assert_eq!(
        of_kind(&kinds(&store, account).await, "funding_credited"),
        ["sms"]
    );
    choices.set_topic(
        NoticeTopic::Funding,
        TopicChoice {
            email: false,
            sms: false,
        },
    );
    store
        .set_notice_preferences(account, choices)
        .await
        .unwrap();
    store
        .record_funding(payment("MNFY|b", account))
        .await
        .unwrap();
    assert_eq!(
        of_kind(&kinds(&store, account).await, "funding_credited"),
        ["sms"]
    );
}

#[tokio::test]
async fn a_failed_purchase_and_a_delivered_token_get_notices_an_airtime_success_none() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 10_000).await;
    let airtime = store
        .place_purchase(purchase(account, key, "r1", 100))
        .await
        .unwrap();
    let failed = store
        .place_purchase(purchase(account, key, "r2", 100))
        .await
        .unwrap();
    let mut electricity = purchase(account, key, "r3", 1_000);
    electricity.product = Product::Electricity;
    let electricity = store.place_purchase(electricity).await.unwrap();
    let success = finalization(TxStatus::Successful, false);
    store
        .finalize(&airtime.code, success.clone())
        .await
        .unwrap();
    store
        .finalize(&failed.code, finalization(TxStatus::Failed, false))
        .await
        .unwrap();
    store
        .finalize(&electricity.code, success.clone())
        .await
        .unwrap();
    // a finalize repeated changes nothing, and adds nothing
    store
        .finalize(&failed.code, finalization(TxStatus::Failed, false))
        .await
        .unwrap();
    let found = store
        .notices(NoticeFilter {
            account_id: Some(account),
            limit: 100,
            ..NoticeFilter::default()
        })
        .await
        .unwrap();
    let purchase_notices: Vec<(String, String)> = found
        .iter()
        .filter(|n| n.kind.starts_with("purchase_"))
        .map(|n| {
            (
                n.kind.clone(),
                n.data["transaction"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(purchase_notices.len(), 2, "{purchase_notices:?}");
    assert!(purchase_notices.contains(&("purchase_refunded".into(), failed.code.clone())));
    assert!(purchase_notices.contains(&("purchase_receipt".into(), electricity.code.clone())));
    // a reversal of the delivered token: a refund notice as well
    store
        .finalize(&electricity.code, finalization(TxStatus::Failed, true))
        .await
        .unwrap();
    let refunds = of_kind(&kinds(&store, account).await, "purchase_refunded");
    assert_eq!(refunds.len(), 2);
}

#[tokio::test]
async fn a_new_api_key_and_a_webhook_url_change_are_security_notices() {
    let (_db, store) = store().await;
    let (account, key) = account(&store).await;
    let url = Some("https://user:secret@hooks.example.com/in".to_string());
    store
        .update_api_key(key, KeyChange::WebhookUrl(url))
        .await
        .unwrap();
    store
        .update_api_key(key, KeyChange::WebhookUrl(None))
        .await
        .unwrap();
    let found = kinds(&store, account).await;
    assert_eq!(of_kind(&found, "api_key_created"), ["email"]);
    assert_eq!(of_kind(&found, "webhook_url_changed"), ["email", "email"]);
    let filter = NoticeFilter {
        kind: Some("webhook_url_changed".into()),
        limit: 10,
        ..NoticeFilter::default()
    };
    let changes = store.notices(filter).await.unwrap();
    // the URL is the customer's text: never quoted, only whether it was removed
    let mut removed: Vec<bool> = changes
        .iter()
        .map(|notice| notice.data["removed"].as_bool().unwrap())
        .collect();
    removed.sort();
    assert_eq!(removed, [false, true], "{changes:?}");
    for notice in &changes {
        let data = notice.data.to_string();
        assert!(!data.contains("hooks.example.com"), "{data}");
    }
}

/// Proves `phone` for `account` by the code sent to it, as the dashboard does.
async fn prove_phone(store: &SharedStore, account: AccountId, phone: &str) {
    let (code, stored) = issue::new_phone_code();
    assert!(
        store
            .start_phone_proof(account, phone, stored)
            .await
            .unwrap()
    );
    let hash = issue::email_code_hash(&code);
    let proven = store.check_phone_code(account, hash, 5).await.unwrap();
    assert_eq!(
        proven,
        PhoneCheck::Proven {
            phone: phone.into()
        }
    );
}

#[tokio::test]
async fn sms_goes_only_to_a_phone_proven_by_its_code() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let mut choices = NoticePreferences {
        phone: Some("2348031234567".into()),
        ..NoticePreferences::default()
    };
    let both = TopicChoice {
        email: true,
        sms: true,
    };
    choices.set_topic(NoticeTopic::Funding, both);
    store
        .set_notice_preferences(account, choices)
        .await
        .unwrap();
    // a phone in the choices is not a proven phone: no SMS
    assert_eq!(store.notice_preferences(account).await.unwrap().phone, None);
    store
        .record_funding(payment("MNFY|unproven", account))
        .await
        .unwrap();
    assert_eq!(
        of_kind(&kinds(&store, account).await, "funding_credited"),
        ["email"]
    );
    // a wrong code proves nothing; the right one does
    let (code, stored) = issue::new_phone_code();
    let phone = "2348031234567";
    assert!(
        store
            .start_phone_proof(account, phone, stored)
            .await
            .unwrap()
    );
    assert_eq!(
        store.pending_phone(account).await.unwrap().as_deref(),
        Some(phone)
    );
    let wrong = if code == "123456" { "654321" } else { "123456" };
    let tried = store
        .check_phone_code(account, issue::email_code_hash(wrong), 5)
        .await
        .unwrap();
    assert_eq!(tried, PhoneCheck::Wrong { left: 4 });
    let tried = store
        .check_phone_code(account, issue::email_code_hash(&code), 5)
        .await
        .unwrap();
    assert_eq!(
        tried,
        PhoneCheck::Proven {
            phone: phone.into()
        }
    );
    assert_eq!(
        store
            .notice_preferences(account)
            .await
            .unwrap()
            .phone
            .as_deref(),
        Some(phone)
    );
    store
        .record_funding(payment("MNFY|proven", account))
        .await
        .unwrap();
    let mut channels = of_kind(&kinds(&store, account).await, "funding_credited");
    channels.sort();
    assert_eq!(channels, ["email", "email", "sms"]);
}

#[tokio::test]
async fn phone_codes_are_bounded_per_number_and_per_account() {
    let (_db, store) = store().await;
    let (first, second) = (new_account(&store).await.id, new_account(&store).await.id);
    let phone = "2348031234567";
    for _ in 0..3 {
        let (_, code) = issue::new_phone_code();
        assert!(store.start_phone_proof(first, phone, code).await.unwrap());
    }
    let (_, code) = issue::new_phone_code();
    assert!(!store.start_phone_proof(first, phone, code).await.unwrap());
    // the number is bounded whichever account asks
    let (_, code) = issue::new_phone_code();
    assert!(!store.start_phone_proof(second, phone, code).await.unwrap());
    // and the account whichever number it gives
    let (_, code) = issue::new_phone_code();
    assert!(
        !store
            .start_phone_proof(first, "2348099999999", code)
            .await
            .unwrap()
    );
    let filter = NoticeFilter {
        kind: Some("phone_verification".into()),
        limit: 100,
        ..NoticeFilter::default()
    };
    assert_eq!(store.notices(filter).await.unwrap().len(), 3);
}

#[tokio::test]
async fn twenty_new_keys_in_an_hour_are_told_five_times() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    for _ in 0..20 {
        issue::issue_api_key(store.as_ref(), account, Some("Win N1,000,000".into()))
            .await
            .unwrap();
    }
    let found = kinds(&store, account).await;
    assert_eq!(of_kind(&found, "api_key_created").len(), 5, "{found:?}");
    let filter = NoticeFilter {
        kind: Some("api_key_created".into()),
        limit: 100,
        ..NoticeFilter::default()
    };
    for notice in store.notices(filter).await.unwrap() {
        assert!(
            !notice.data.to_string().contains("Win"),
            "{:?}",
            notice.data
        );
    }
}

#[tokio::test]
async fn concurrent_notices_never_pass_their_bound() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let creations = (0..12).map(|_| {
        let store = store.clone();
        tokio::spawn(async move {
            issue::issue_api_key(store.as_ref(), account, None)
                .await
                .unwrap()
        })
    });
    join_all(creations.collect()).await;
    let found = kinds(&store, account).await;
    assert_eq!(of_kind(&found, "api_key_created").len(), 5, "{found:?}");
}

#[tokio::test]
async fn an_unverified_account_and_the_shops_key_are_told_nothing() {
    let (_db, store) = store().await;
    let account = new_account(&store).await;
    // as a self sign-up whose code was never entered
    let (_, code) = issue::new_email_code(&account.name);
    let signed_up = store
        .sign_up(NewSignUp {
            account: NewAccount {
                name: "Win N1,000,000".into(),
                email: format!("unverified-{}", account.email),
                password_hash: None,
                kyc_level: 0,
            },
            phone: None,
            tier: None,
            code,
            referral: None,
        })
        .await
        .unwrap();
    issue::issue_api_key(store.as_ref(), signed_up.id, None)
        .await
        .unwrap();
    let found = kinds(&store, signed_up.id).await;
    assert_eq!(found, [("email_verification".into(), "email".into())]);
    // the shop's key, made with a first PIN, is not announced
    store
        .create_api_key(issue::shop_key(account.id))
        .await
        .unwrap();
    assert!(kinds(&store, account.id).await.is_empty());
}

#[tokio::test]
async fn a_suppressed_address_gets_a_customer_notice_already_failed() {
    let (_db, store) = store().await;
    let account = new_account(&store).await;
    let mut first = notice("x", "email");
    first.recipient = account.email.clone();
    store.enqueue_notice(first).await.unwrap();
    let claimed = store
        .claim_notices(both(), 1, LEASE)
        .await
        .unwrap()
        .remove(0);
    let refused = NoticeOutcome::Refused {
        provider: "smtp".into(),
        error: "550 mailbox unavailable".into(),
    };
    store.record_notice(&claimed.id, refused).await.unwrap();
    store
        .record_funding(payment("MNFY|s", account.id))
        .await
        .unwrap();
    assert!(
        store
            .claim_notices(both(), 10, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
}

/// The low-balance notices of `account`, oldest first: (cause, data).
async fn low_balance_notices(store: &SharedStore, account: AccountId) -> Vec<(String, String)> {
    let filter = NoticeFilter {
        account_id: Some(account),
        kind: Some("low_balance".into()),
        limit: 100,
        ..NoticeFilter::default()
    };
    let mut found = store.notices(filter).await.unwrap();
    found.reverse();
    let found = found.into_iter();
    found.map(|n| (n.cause, n.data.to_string())).collect()
}

#[tokio::test]
async fn a_low_balance_is_told_once_per_fall_under_the_mark() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let (other, _) = funded_account(&store, 10).await; // no mark: never told
    let mark = NoticePreferences {
        low_balance_below: Some(Kobo::from_naira(500)),
        ..NoticePreferences::default()
    };
    store.set_notice_preferences(account, mark).await.unwrap();
    assert!(!store.low_balance_due().await.unwrap(), "₦1,000 is not low");
    assert!(store.watch_low_balances(100).await.unwrap().is_empty());

    // ₦1,000 → ₦400: under the mark, told once however many passes
    store
        .place_purchase(purchase(account, key, "lb1", 600))
        .await
        .unwrap();
    assert!(store.low_balance_due().await.unwrap());
    assert_eq!(store.watch_low_balances(100).await.unwrap(), vec![account]);
    // ₦400 → ₦300: still under, nothing more
    store
        .place_purchase(purchase(account, key, "lb2", 100))
        .await
        .unwrap();
    assert!(!store.low_balance_due().await.unwrap());
    assert!(store.watch_low_balances(100).await.unwrap().is_empty());
    let told = low_balance_notices(&store, account).await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, format!("low_balance:{account}:1"));
    assert!(told[0].1.contains("\"balance\":40000"), "{told:?}");
    assert!(told[0].1.contains("\"threshold\":50000"), "{told:?}");

    // back at the mark exactly: armed again, nobody told
    store
        .credit(account, Kobo::from_naira(200), "top-up")
        .await
        .unwrap();
    assert!(store.low_balance_due().await.unwrap());
    assert!(store.watch_low_balances(100).await.unwrap().is_empty());
    assert!(!store.low_balance_due().await.unwrap());
    // under again: a second episode, a second notice
    store
        .place_purchase(purchase(account, key, "lb3", 50))
        .await
        .unwrap();
    assert_eq!(store.watch_low_balances(100).await.unwrap(), vec![account]);
    let told = low_balance_notices(&store, account).await;
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(told[1].0, format!("low_balance:{account}:2"));
    assert!(low_balance_notices(&store, other).await.is_empty());
}

#[tokio::test]
async fn concurrent_low_balance_passes_tell_once() {
    let (_db, store) = store().await;
    let mut accounts = Vec::new();
    for _ in 0..5 {
        let (account, _) = funded_account(&store, 100).await;
        let mut choices = NoticePreferences {
            phone: Some("2348031234567".into()),
            low_balance_below: Some(Kobo::from_naira(500)),
            ..NoticePreferences::default()
        };
        let both = TopicChoice {
            email: true,
            sms: true,
        };
        choices.set_topic(NoticeTopic::LowBalance, both);
        store
            .set_notice_preferences(account, choices)
            .await
            .unwrap();
        // each its own phone: a number's codes are bounded per hour
        prove_phone(
            &store,
            account,
            &format!("23480312345{}", 60 + accounts.len()),
        )
        .await;
        accounts.push(account);
    }
    let passes = (0..8).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.watch_low_balances(100).await.unwrap() })
    });
    let told: usize = join_all(passes.collect()).await.iter().map(Vec::len).sum();
    assert_eq!(told, accounts.len(), "each account told by one pass");
    for account in accounts {
        let found = kinds(&store, account).await;
        let mut channels = of_kind(&found, "low_balance");
        channels.sort();
        assert_eq!(channels, vec!["email", "sms"], "{found:?}");
    }
}

/// A worker claims only the channels it can send: an SMS notice on a
/// server with email only stays queued (not failed) for a node with SMS.
#[tokio::test]
async fn a_claim_leaves_the_notices_of_a_channel_the_worker_lacks_queued() {
    let (_db, store) = store().await;
    store.enqueue_notice(notice("c:1", "email")).await.unwrap();
    store.enqueue_notice(notice("c:1", "sms")).await.unwrap();
    let email_only = store
        .claim_notices(vec!["email".into()], 10, LEASE)
        .await
        .unwrap();
    assert_eq!(email_only.len(), 1);
    assert_eq!(email_only[0].channel, "email");
    assert!(
        store
            .claim_notices(vec!["email".into()], 10, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .claim_notices(Vec::new(), 10, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    let sms = store
        .notices(NoticeFilter {
            limit: 10,
            ..NoticeFilter::default()
        })
        .await
        .unwrap();
    let sms = sms.iter().find(|n| n.channel == "sms").unwrap();
    assert_eq!(sms.status, NoticeStatus::Queued);
    assert_eq!(sms.attempts, 0, "never claimed");
    let later = store.claim_notices(both(), 10, LEASE).await.unwrap();
    assert_eq!(later.len(), 1, "a worker with SMS takes it");
    assert_eq!(later[0].channel, "sms");
}

/// A code in a notice is sealed at rest by a store that has the master key:
/// a listing shows it sealed, only the worker's claim opens it.
#[tokio::test]
async fn a_sealed_store_seals_a_notices_code_until_the_worker_claims_it() {
    let (db, _bare) = store().await;
    let key = billpay_domain::sealed::SecretBox::generate_master_key();
    let key = billpay_domain::sealed::SecretBox::from_hex(&key).unwrap();
    let sealed = sealed_store(&db, key).await;
    let mut new = notice("verify:sealed-1", "email");
    new.data = serde_json::json!({ "code": "482915", "name": "Ada" });
    assert!(sealed.enqueue_notice(new).await.unwrap());

    let filter = NoticeFilter {
        limit: 10,
        ..NoticeFilter::default()
    };
    let listed = sealed.notices(filter).await.unwrap();
    let stored = &listed[0].data;
    assert_eq!(stored["name"], "Ada", "{stored}");
    assert!(stored["sealed"].is_string(), "{stored}");
    assert!(!stored.to_string().contains("482915"), "{stored}");

    let claimed = sealed.claim_notices(both(), 10, LEASE).await.unwrap();
    assert_eq!(
        claimed[0].data,
        serde_json::json!({ "code": "482915", "name": "Ada" })
    );
}
