use crate::common::{new_account, raw_sql, store};
use billpay_store::work;
use billpay_store::*;

fn notice(cause: &str, channel: &str, recipient: &str) -> NewNotice {
    NewNotice {
        cause: cause.into(),
        kind: "funding_credited".into(),
        channel: channel.into(),
        recipient: recipient.into(),
        account_id: None,
        operator_id: None,
        data: serde_json::json!({ "amount": "1000.00" }),
    }
}

fn operator(email: &str, role: OperatorRole) -> NewOperator {
    NewOperator {
        email: email.into(),
        role,
        password_hash: "hash".into(),
    }
}

fn line(action: &str) -> NewLogEntry {
    NewLogEntry {
        actor: "cli".into(),
        action: action.into(),
        subject: String::new(),
        ..NewLogEntry::default()
    }
}

fn filter() -> NoticeFilter {
    NoticeFilter {
        limit: 50,
        ..NoticeFilter::default()
    }
}

#[tokio::test]
async fn notices_are_listed_newest_first_and_filtered_by_status_channel_and_account() {
    let (db, store) = store().await;
    let account = new_account(&store).await.id;
    let mut mine = notice("funding:A", "email", "ada@example.com");
    mine.account_id = Some(account);
    store.enqueue_notice(mine).await.unwrap();
    store
        .enqueue_notice(notice("funding:A", "sms", "2348030000000"))
        .await
        .unwrap();
    store
        .enqueue_notice(notice("funding:B", "email", "bo@example.com"))
        .await
        .unwrap();
    raw_sql(
        &db,
        "UPDATE notices SET status = 'failed', last_error = '550 no such user', attempts = 8
         WHERE cause = 'funding:B'",
    )
    .await;

    let all = store.notices(filter()).await.unwrap();
    assert_eq!(all.len(), 3);
    let failed = store
        .notices(NoticeFilter {
            status: Some(NoticeStatus::Failed),
            ..filter()
        })
        .await
        .unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].recipient, "bo@example.com");
    assert_eq!(failed[0].last_error.as_deref(), Some("550 no such user"));
    let sms = store
        .notices(NoticeFilter {
            channel: Some("sms".into()),
            ..filter()
        })
        .await
        .unwrap();
    assert_eq!(sms.len(), 1);
    assert_eq!(sms[0].recipient, "2348030000000");
    let theirs = store
        .notices(NoticeFilter {
            account_id: Some(account),
            ..filter()
        })
        .await
        .unwrap();
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].account_id, Some(account));
    let page = NoticeFilter {
        limit: 2,
        offset: 2,
        ..filter()
    };
    assert_eq!(store.notices(page).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_failed_notice_is_queued_again_with_its_log_line_but_not_while_it_is_being_sent() {
    let (db, store) = store().await;
    store
        .enqueue_notice(notice("funding:C", "email", "ci@example.com"))
        .await
        .unwrap();
    let id = store.notices(filter()).await.unwrap()[0].id.clone();
    raw_sql(
        &db,
        "UPDATE notices SET status = 'failed', attempts = 8, last_error = 'timeout'",
    )
    .await;

    assert!(
        store
            .write((id.to_string(), line("notice.resend")), |tx, (id, log)| {
                Box::pin(work::resend_notice(tx, id, log))
            })
            .await
            .unwrap()
    );
    let again = &store.notices(filter()).await.unwrap()[0];
    assert_eq!((again.status.as_str(), again.attempts), ("queued", 0));
    assert_eq!(again.last_error, None);
    let log = store
        .operator_log(LogFilter {
            limit: 10,
            ..LogFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].action, "notice.resend");
    assert_eq!(log[0].before.as_deref(), Some("failed"));

    // A worker holds it now: a resend would race the send.
    raw_sql(&db, "UPDATE notices SET lease_until = 99999999999999").await;
    assert!(
        !store
            .write((id.to_string(), line("notice.resend")), |tx, (id, log)| {
                Box::pin(work::resend_notice(tx, id, log))
            })
            .await
            .unwrap()
    );
    let missing = store
        .write(
            ("NT-nope".to_string(), line("notice.resend")),
            |tx, (id, log)| Box::pin(work::resend_notice(tx, id, log)),
        )
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound("notice"))));
    let log = store.operator_log(LogFilter {
        limit: 10,
        ..LogFilter::default()
    });
    assert_eq!(log.await.unwrap().len(), 1, "a refused resend logs nothing");
}

#[tokio::test]
async fn an_alert_goes_to_every_active_operator_who_has_not_turned_it_off() {
    let (_db, store) = store().await;
    let log = line("operator.create");
    let owner = store
        .write(
            (
                operator("owner@example.com", OperatorRole::Owner),
                log.clone(),
            ),
            |tx, (new, log)| Box::pin(work::create_operator(tx, new, log)),
        )
        .await
        .unwrap();
    let support = store
        .write(
            (
                operator("help@example.com", OperatorRole::Support),
                log.clone(),
            ),
            |tx, (new, log)| Box::pin(work::create_operator(tx, new, log)),
        )
        .await
        .unwrap();
    let gone = store
        .write(
            (
                operator("gone@example.com", OperatorRole::Owner),
                log.clone(),
            ),
            |tx, (new, log)| Box::pin(work::create_operator(tx, new, log)),
        )
        .await
        .unwrap();
    let off = OperatorChange::Status(OperatorStatus::Disabled);
    store
        .write((gone.id, off, log), |tx, (id, change, log)| {
            Box::pin(work::update_operator(tx, *id, change, log))
        })
        .await
        .unwrap();

    let kinds = vec![
        "operator_float_low".to_owned(),
        "operator_backlog".to_owned(),
    ];
    store.set_alert_opt_outs(support.id, kinds).await.unwrap();
    let emails = |found: Vec<AlertRecipient>| -> Vec<String> {
        found.into_iter().filter_map(|r| r.email).collect()
    };
    let float = store.alert_recipients("operator_float_low").await.unwrap();
    assert_eq!(emails(float), ["owner@example.com"]);
    let payments = store.alert_recipients("operator_payment").await.unwrap();
    assert_eq!(payments[1].role, OperatorRole::Support);
    assert_eq!(emails(payments), ["owner@example.com", "help@example.com"]);

    // Replaced, not added to.
    let just_one = vec!["operator_payment".to_owned()];
    store
        .set_alert_opt_outs(support.id, just_one)
        .await
        .unwrap();
    let now_off = store.alert_opt_outs(support.id).await.unwrap();
    assert_eq!(now_off, ["operator_payment"]);
    assert!(store.alert_opt_outs(owner.id).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_operator_chooses_email_and_sms_for_their_alerts() {
    let (_db, store) = store().await;
    let log = line("operator.create");
    let owner = operator("owner@example.com", OperatorRole::Owner);
    let owner = store
        .write((owner, log.clone()), |tx, (new, log)| {
            Box::pin(work::create_operator(tx, new, log))
        })
        .await
        .unwrap();
    let support = operator("help@example.com", OperatorRole::Support);
    let support = store
        .write((support, log), |tx, (new, log)| {
            Box::pin(work::create_operator(tx, new, log))
        })
        .await
        .unwrap();
    assert_eq!(
        store.alert_channels(owner.id).await.unwrap(),
        AlertChannels::default(),
        "email only until changed"
    );
    let both = AlertChannels {
        phone: Some("2348031234567".into()),
        by_email: true,
        by_sms: true,
    };
    store
        .set_alert_channels(owner.id, both.clone())
        .await
        .unwrap();
    assert_eq!(store.alert_channels(owner.id).await.unwrap(), both);
    let sms_only = AlertChannels {
        phone: Some("2348099999999".into()),
        by_email: false,
        by_sms: true,
    };
    store
        .set_alert_channels(support.id, sms_only.clone())
        .await
        .unwrap();
    let found = store.alert_recipients("operator_payment").await.unwrap();
    let addresses: Vec<(Option<String>, Option<String>)> =
        found.into_iter().map(|r| (r.email, r.sms)).collect();
    assert_eq!(
        addresses,
        [
            (
                Some("owner@example.com".into()),
                Some("2348031234567".into())
            ),
            (None, Some("2348099999999".into())),
        ]
    );
    // a phone kept but SMS off, and email off too: nobody to tell
    let none = AlertChannels {
        by_email: false,
        by_sms: false,
        ..sms_only
    };
    store.set_alert_channels(support.id, none).await.unwrap();
    let found = store.alert_recipients("operator_payment").await.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].sms.as_deref(), Some("2348031234567"));
}

#[tokio::test]
async fn accounts_created_counts_those_of_the_range_only() {
    let (_db, store) = store().await;
    new_account(&store).await;
    new_account(&store).await;
    let all = store.accounts_created("2000-01-01", "9999").await.unwrap();
    assert_eq!(all, 2);
    let none = store.accounts_created("2000-01-01", "2000-01-02").await;
    assert_eq!(none.unwrap(), 0);
}
