use crate::common::{funded_account, new_account, purchase, store};
use billpay_domain::{Kobo, Product, PurchaseDetails};
use billpay_store::{NewBeneficiary, Refill};

#[tokio::test]
async fn a_saved_recipient_is_listed_renamed_and_deleted_by_its_owner_only() {
    let (_db, store) = store().await;
    let (owner, other) = (new_account(&store).await.id, new_account(&store).await.id);
    let new = |recipient: &str, nickname: &str| NewBeneficiary {
        account_id: owner,
        product: Product::Data,
        nickname: nickname.into(),
        refill: Refill {
            recipient: recipient.into(),
            ..Refill::default()
        },
    };
    let mum = store
        .save_beneficiary(new("08031234567", "Mum"))
        .await
        .unwrap();
    store
        .save_beneficiary(new("08121234567", "Chidi"))
        .await
        .unwrap();
    let renamed = store
        .save_beneficiary(new("08031234567", "Mama"))
        .await
        .unwrap();
    assert_eq!(renamed.id, mum.id, "saving it again renames it");
    let names: Vec<_> = store
        .beneficiaries(owner, Product::Data)
        .await
        .unwrap()
        .into_iter()
        .map(|b| (b.nickname, b.recipient))
        .collect();
    assert_eq!(
        names,
        [
            ("Chidi".to_owned(), "08121234567".to_owned()),
            ("Mama".to_owned(), "08031234567".to_owned())
        ]
    );
    assert!(
        store
            .beneficiaries(owner, Product::Airtime)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .beneficiaries(other, Product::Data)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!store.delete_beneficiary(other, &mum.id).await.unwrap());
    assert!(store.delete_beneficiary(owner, &mum.id).await.unwrap());
    assert_eq!(
        store
            .beneficiaries(owner, Product::Data)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn the_last_recipients_of_a_product_are_newest_first_and_distinct() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 10_000).await;
    for (i, phone) in ["08030000001", "08030000002", "08030000001", "08030000003"]
        .iter()
        .enumerate()
    {
        let mut new = purchase(account, key, &format!("ref-{i}"), 100);
        new.recipient = (*phone).into();
        store.place_purchase(new).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let recent = store
        .recent_recipients(account, Product::Airtime, 2)
        .await
        .unwrap();
    let recipients: Vec<_> = recent.iter().map(|r| r.recipient.as_str()).collect();
    assert_eq!(recipients, ["08030000003", "08030000001"]);
    // each with its latest purchase's fields: bought again as it was
    assert_eq!(recent[1].provider, "mtn");
    assert_eq!(recent[1].amount, Some(Kobo::from_naira(100)));
    assert!(
        store
            .recent_recipients(account, Product::Data, 5)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_saved_recipient_keeps_its_provider_fields_and_amount() {
    let (_db, store) = store().await;
    let owner = new_account(&store).await.id;
    let details = PurchaseDetails {
        meter_number: Some("45012345678".into()),
        meter_type: Some(2),
        ..PurchaseDetails::default()
    };
    let eko_postpaid = Refill {
        recipient: "45012345678".into(),
        provider: "eko-electric".into(),
        details: details.clone(),
        amount: Some(Kobo::from_naira(6000)),
    };
    let saved = store
        .save_beneficiary(NewBeneficiary {
            account_id: owner,
            product: Product::Electricity,
            nickname: "Shop".into(),
            refill: eko_postpaid.clone(),
        })
        .await
        .unwrap();
    assert_eq!(saved.refill, eko_postpaid);
    let listed = store
        .beneficiaries(owner, Product::Electricity)
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].refill.provider, "eko-electric");
    assert_eq!(listed[0].refill.details.meter_type, Some(2));
    assert_eq!(listed[0].refill.amount, Some(Kobo::from_naira(6000)));
}
