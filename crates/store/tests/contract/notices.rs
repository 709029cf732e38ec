use crate::common::{new_account, store};
use billpay_store::NewNotice;

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

#[tokio::test]
async fn a_cause_adds_one_notice_per_channel_however_often_it_is_replayed() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let mut first = notice("funding:REF-1", "email");
    first.account_id = Some(account);
    assert!(store.enqueue_notice(first.clone()).await.unwrap());
    assert!(!store.enqueue_notice(first).await.unwrap(), "a replay adds nothing");
    assert!(store.enqueue_notice(notice("funding:REF-1", "sms")).await.unwrap());
    assert!(store.enqueue_notice(notice("funding:REF-2", "email")).await.unwrap());
}
