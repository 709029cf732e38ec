use crate::common::{new_account, store};
use billpay_store::*;

#[tokio::test]
async fn developer_access_is_the_operators_by_default_and_the_customers_switch() {
    let (_db, store) = store().await;
    let account = new_account(&store).await;
    assert_eq!(
        account.developer_access,
        Some(DeveloperAccess::Operator),
        "an account the operator opens is a developer's"
    );
    store
        .set_own_developer_access(account.id, false)
        .await
        .unwrap();
    let read = store.account(account.id).await.unwrap().unwrap();
    assert_eq!(read.developer_access, None);
    store
        .set_own_developer_access(account.id, true)
        .await
        .unwrap();
    let read = store.account(account.id).await.unwrap().unwrap();
    assert_eq!(read.developer_access, Some(DeveloperAccess::Myself));
    let unknown = billpay_domain::AccountId::new();
    assert!(matches!(
        store.set_own_developer_access(unknown, true).await,
        Err(StoreError::NotFound("account"))
    ));
}

#[tokio::test]
async fn an_operators_change_is_logged_with_what_it_was() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    store.set_own_developer_access(account, true).await.unwrap();
    let log = NewLogEntry {
        actor: "cli".into(),
        action: "account.developer_access".into(),
        subject: account.to_string(),
        after: Some("off".into()),
        ..NewLogEntry::default()
    };
    store
        .write((account, log), |tx, (account, log)| {
            Box::pin(work::set_developer_access_logged(tx, *account, false, log))
        })
        .await
        .unwrap();
    assert_eq!(
        store
            .account(account)
            .await
            .unwrap()
            .unwrap()
            .developer_access,
        None
    );
    let lines = store
        .operator_log(LogFilter {
            subject: Some(account.to_string()),
            limit: 10,
            ..LogFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(lines[0].before.as_deref(), Some("on (self)"));
    assert_eq!(lines[0].after.as_deref(), Some("off"));
}

#[tokio::test]
async fn a_sign_up_is_a_buyer() {
    let (_db, store) = store().await;
    let (_, code) = billpay_store::issue::new_email_code("Ada");
    let signed_up = store
        .sign_up(NewSignUp {
            account: NewAccount {
                name: "Ada".into(),
                email: format!("{}@example.com", uuid::Uuid::new_v4()),
                password_hash: Some("$argon2id$stored".into()),
                kyc_level: 0,
            },
            phone: None,
            tier: None,
            code,
            referral: None,
        })
        .await
        .unwrap();
    assert_eq!(signed_up.developer_access, None);
    let read = store.account(signed_up.id).await.unwrap().unwrap();
    assert_eq!(read.developer_access, None);
}
