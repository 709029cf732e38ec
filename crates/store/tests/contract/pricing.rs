use crate::common::{finalization, funded_account, purchase, store};
use billpay_domain::pricing::{BasisPoints, Rule, Scope};
use billpay_domain::{Kobo, Product, TxStatus};
use billpay_store::*;

fn scope(product: Product, provider: Option<&str>, plan: Option<&str>) -> Scope {
    Scope {
        product,
        provider: provider.map(str::to_owned),
        plan: plan.map(str::to_owned),
    }
}

#[tokio::test]
async fn tiers_rules_and_accounts_are_read_back_and_move_the_version() {
    let (_db, store) = store().await;
    let (account, _) = funded_account(&store, 100).await;
    let (v0, empty) = store.price_book().await.unwrap();
    assert!(empty.tiers.is_empty() && empty.accounts.is_empty());

    store.create_tier("reseller").await.unwrap();
    let taken = store.create_tier("reseller").await;
    assert!(matches!(taken, Err(StoreError::Invalid(m)) if m.contains("already exists")));
    let airtime = scope(Product::Airtime, None, None);
    let mtn_plan = scope(Product::Data, Some("mtn"), Some("mtn-1gb"));
    let discount = Rule::DiscountPercent(BasisPoints(250));
    assert!(
        store
            .set_price_rule("reseller", airtime.clone(), Some(discount))
            .await
            .unwrap()
    );
    let price = Rule::Price(Kobo(25_000));
    assert!(
        store
            .set_price_rule("reseller", mtn_plan.clone(), Some(price))
            .await
            .unwrap()
    );
    // Setting again replaces.
    let fee = Rule::Fee(Kobo(1_000));
    store
        .set_price_rule("reseller", airtime.clone(), Some(fee))
        .await
        .unwrap();
    store
        .set_account_tier(account, Some("reseller"))
        .await
        .unwrap();

    let (v1, book) = store.price_book().await.unwrap();
    assert!(v1 > v0);
    assert_eq!(store.pricing_version().await.unwrap(), v1);
    let tier = &book.tiers["reseller"];
    assert_eq!(tier.rules.len(), 2);
    assert_eq!(tier.rules[&airtime], fee);
    assert_eq!(tier.rules[&mtn_plan], price);
    assert_eq!(book.accounts[&account], "reseller");

    // Removing: true once, then false; back to list prices.
    assert!(
        store
            .set_price_rule("reseller", airtime.clone(), None)
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_price_rule("reseller", airtime, None)
            .await
            .unwrap()
    );
    store.set_account_tier(account, None).await.unwrap();
    let (v2, book) = store.price_book().await.unwrap();
    assert!(v2 > v1);
    assert!(book.accounts.is_empty());
    assert_eq!(book.tiers["reseller"].rules.len(), 1);
}

#[tokio::test]
async fn an_unknown_tier_or_account_is_refused_and_changes_nothing() {
    let (_db, store) = store().await;
    let (account, _) = funded_account(&store, 100).await;
    let rule = Some(Rule::Fee(Kobo(100)));
    let no_tier = store
        .set_price_rule("nope", scope(Product::Airtime, None, None), rule)
        .await;
    assert!(matches!(no_tier, Err(StoreError::Invalid(m)) if m.contains("no tier named nope")));
    let no_tier = store.set_account_tier(account, Some("nope")).await;
    assert!(matches!(no_tier, Err(StoreError::Invalid(_))));
    store.create_tier("gold").await.unwrap();
    let nobody = store
        .set_account_tier(billpay_domain::AccountId::new(), Some("gold"))
        .await;
    assert!(matches!(nobody, Err(StoreError::NotFound("account"))));
    let (_, book) = store.price_book().await.unwrap();
    assert!(book.accounts.is_empty());
    assert!(book.tiers["gold"].rules.is_empty());
}

#[tokio::test]
async fn a_purchase_keeps_its_face_value_tier_and_cost() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let mut new = purchase(account, key, "r-1", 100);
    new.amount = Kobo(9_800);
    new.tier = Some("reseller".into());
    let placed = store.place_purchase(new).await.unwrap();
    assert_eq!(
        (placed.amount, placed.face_value),
        (Kobo(9_800), Kobo(10_000))
    );
    assert_eq!(placed.balance_before.0 - placed.balance_after.0, 9_800);
    assert_eq!(placed.cost, None);
    let mut fin = finalization(TxStatus::Successful, false);
    fin.cost = Some(Kobo(9_700));
    assert!(store.finalize(&placed.code, fin).await.unwrap());
    let read = store
        .transaction(Some(account), TxLookup::Code(placed.code.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (read.amount, read.face_value, read.cost),
        (Kobo(9_800), Kobo(10_000), Some(Kobo(9_700)))
    );
    assert_eq!(read.tier.as_deref(), Some("reseller"));
    // A reversal keeps no cost: the supplier gave the money back.
    let reversed = finalization(TxStatus::Failed, true);
    assert!(store.finalize(&placed.code, reversed).await.unwrap());
    let read = store
        .transaction(None, TxLookup::Code(placed.code.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.cost, None);
    assert!(store.audit().await.unwrap().iter().all(|c| c.passed()));
}

#[tokio::test]
async fn sales_sum_final_purchases_by_hour_and_dimension() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let mut codes = Vec::new();
    for (i, (charged, cost)) in [(9_800, Some(9_700)), (9_900, None), (9_900, None)]
        .into_iter()
        .enumerate()
    {
        let mut new = purchase(account, key, &format!("s-{i}"), 100);
        new.amount = Kobo(charged);
        let tx = store.place_purchase(new).await.unwrap();
        codes.push((tx.code, cost));
    }
    let (ok1, cost1) = codes[0].clone();
    let mut fin = finalization(TxStatus::Successful, false);
    fin.cost = cost1.map(Kobo);
    store.finalize(&ok1, fin).await.unwrap();
    store
        .finalize(&codes[1].0, finalization(TxStatus::Successful, false))
        .await
        .unwrap();
    store
        .finalize(&codes[2].0, finalization(TxStatus::Failed, false))
        .await
        .unwrap();
    // a processing one is not in the sales
    store
        .place_purchase(purchase(account, key, "s-open", 100))
        .await
        .unwrap();

    let groups = store.sales(String::new(), "~".into()).await.unwrap();
    let ok: Vec<&SalesGroup> = groups
        .iter()
        .filter(|g| g.bucket.status == TxStatus::Successful)
        .collect();
    let failed: Vec<&SalesGroup> = groups
        .iter()
        .filter(|g| g.bucket.status == TxStatus::Failed)
        .collect();
    let mut sum = SalesSums::default();
    ok.iter().for_each(|g| sum.add(&g.bucket.sums));
    assert_eq!(
        sum,
        SalesSums {
            purchases: 2,
            face_value: Kobo(20_000),
            charged: Kobo(19_700),
            cost: Kobo(9_700),
            charged_with_cost: Kobo(9_800),
            cost_unknown: 1,
        }
    );
    assert_eq!(sum.margin(), Kobo(100));
    let failed: u64 = failed.iter().map(|g| g.bucket.sums.purchases).sum();
    assert_eq!(failed, 1);
    assert!(
        groups
            .iter()
            .all(|g| g.bucket.hour.len() == 13 && g.account_id == account)
    );
    // Bounds: nothing before 2000.
    assert!(
        store
            .sales(String::new(), "2000".into())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn each_plans_last_known_cost_is_its_latest_successful_purchases() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 10_000).await;
    let data = |reference: &str, plan: &str| {
        let mut new = purchase(account, key, reference, 600);
        new.product = Product::Data;
        new.plan_id = Some(plan.to_owned());
        new
    };
    // 1GB: 570 then 582 (the later counts); 2GB: a cost-less success, then a
    // failure: no known cost; airtime has no plan.
    let mut at = billpay_store::clock::now_ms();
    for (reference, plan, status, cost) in [
        ("d-1", "mtn-sme-1gb", TxStatus::Successful, Some(57_000)),
        ("d-2", "mtn-sme-1gb", TxStatus::Successful, Some(58_200)),
        ("d-3", "mtn-sme-2gb", TxStatus::Successful, None),
        ("d-4", "mtn-sme-2gb", TxStatus::Failed, None),
    ] {
        let placed = store.place_purchase(data(reference, plan)).await.unwrap();
        let mut fin = finalization(status, false);
        fin.cost = cost.map(Kobo);
        at += 1_000;
        fin.completed_at_ms = at;
        assert!(store.finalize(&placed.code, fin).await.unwrap());
    }
    let airtime = store
        .place_purchase(purchase(account, key, "a-1", 100))
        .await
        .unwrap();
    let mut fin = finalization(TxStatus::Successful, false);
    fin.cost = Some(Kobo(9_700));
    store.finalize(&airtime.code, fin).await.unwrap();

    let costs = store.last_plan_costs().await.unwrap();
    assert_eq!(costs.len(), 1, "{costs:?}");
    assert_eq!(
        (costs[0].provider.as_str(), costs[0].plan_id.as_str()),
        ("mtn", "mtn-sme-1gb")
    );
    assert_eq!(costs[0].cost, Kobo(58_200), "the latest, not the first");
}

#[tokio::test]
async fn account_names_are_read_for_many_ids_at_once() {
    let (_db, store) = store().await;
    let (ada, _) = funded_account(&store, 1).await;
    let nobody = billpay_domain::AccountId::new();
    let names = store.account_names(&[ada, nobody, ada]).await.unwrap();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(!names[&ada].is_empty());
    assert!(store.account_names(&[]).await.unwrap().is_empty());
}
