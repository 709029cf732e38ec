use crate::common::{new_account, store};
use billpay_domain::Kobo;
use billpay_store::*;

fn checkout(reference: &str, account: billpay_domain::AccountId) -> NewCheckout {
    NewCheckout {
        reference: reference.into(),
        account_id: account,
        gateway: "paystack".into(),
        amount: Kobo(101_500),
        fee: Kobo(1_500),
    }
}

#[tokio::test]
async fn a_checkout_is_stored_once_and_closed_once() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let made = store
        .create_checkout(checkout("PAY-1", account))
        .await
        .unwrap();
    assert_eq!(made.status, CheckoutStatus::Open);
    assert_eq!(made.credit(), Kobo(100_000));
    let again = store.create_checkout(checkout("PAY-1", account)).await;
    assert!(
        matches!(again, Err(StoreError::Refused(Refusal::DuplicateReference))),
        "{again:?}"
    );
    let open = store
        .open_checkouts("paystack", "2000-01-01")
        .await
        .unwrap();
    assert_eq!(open.len(), 1);
    assert!(
        store
            .open_checkouts("monnify", "2000-01-01")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .close_checkout("PAY-1", CheckoutStatus::Credited)
            .await
            .unwrap()
    );
    assert!(
        !store
            .close_checkout("PAY-1", CheckoutStatus::Failed)
            .await
            .unwrap(),
        "a closed checkout stays as it was closed"
    );
    let found = store.checkout("PAY-1").await.unwrap().unwrap();
    assert_eq!(found.status, CheckoutStatus::Credited);
    assert!(
        store
            .open_checkouts("paystack", "2000-01-01")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.account_checkouts(account, 10).await.unwrap(), [found]);
    assert!(store.checkout("PAY-2").await.unwrap().is_none());
}

#[tokio::test]
async fn a_checkout_whose_fee_takes_everything_is_refused() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let mut all_fee = checkout("PAY-3", account);
    all_fee.fee = all_fee.amount;
    assert!(matches!(
        store.create_checkout(all_fee).await,
        Err(StoreError::Invalid(_))
    ));
    assert!(store.checkout("PAY-3").await.unwrap().is_none());
}

#[tokio::test]
async fn only_the_last_four_digits_of_an_identity_number_are_kept() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let whole = ReservationIdentity {
        account_id: account,
        gateway: "monnify".into(),
        kind: "bvn".into(),
        last4: "22212345678".into(),
        state: "accepted".into(),
    };
    assert!(matches!(
        store.save_reservation_identity(whole.clone()).await,
        Err(StoreError::Invalid(_))
    ));
    let kept = ReservationIdentity {
        last4: "5678".into(),
        ..whole
    };
    store.save_reservation_identity(kept.clone()).await.unwrap();
    let refused = ReservationIdentity {
        state: "refused".into(),
        ..kept.clone()
    };
    store
        .save_reservation_identity(refused.clone())
        .await
        .unwrap();
    let found = store
        .reservation_identity(account, "monnify")
        .await
        .unwrap();
    assert_eq!(found, Some(refused));
    assert!(
        store
            .reservation_identity(account, "paystack")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn an_abandoned_checkout_leaves_the_open_ones_and_may_still_be_credited() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    for reference in ["PAY-A", "PAY-B"] {
        store
            .create_checkout(checkout(reference, account))
            .await
            .unwrap();
    }
    for reference in ["PAY-A", "PAY-B"] {
        let closed = store
            .close_checkout(reference, CheckoutStatus::Abandoned)
            .await
            .unwrap();
        assert!(closed);
    }
    assert!(
        store
            .open_checkouts("paystack", "")
            .await
            .unwrap()
            .is_empty()
    );
    let found = store.checkout("PAY-A").await.unwrap().unwrap();
    assert_eq!(found.status, CheckoutStatus::Abandoned);
    // abandoned moves only to credited (its payment came after all)
    let failed = store
        .close_checkout("PAY-A", CheckoutStatus::Failed)
        .await
        .unwrap();
    assert!(!failed);
    let credited = store
        .close_checkout("PAY-A", CheckoutStatus::Credited)
        .await
        .unwrap();
    assert!(credited);
    let found = store.checkout("PAY-A").await.unwrap().unwrap();
    assert_eq!(found.status, CheckoutStatus::Credited);
    let other = store.checkout("PAY-B").await.unwrap().unwrap();
    assert_eq!(other.status, CheckoutStatus::Abandoned);
}
