//! The unit of work a caller composes (`store.write`): its changes are all
//! stored or none, on either engine, and what it writes sealed is sealed.

use crate::common::{
    assert_invariant, finalization, funded_account, purchase, sealed_store, store,
};
use billpay_domain::sealed::SecretBox;
use billpay_domain::{Kobo, TxStatus};
use billpay_store::*;

fn line(action: &str, subject: &str) -> NewLogEntry {
    NewLogEntry {
        actor: "operator".into(),
        action: action.into(),
        subject: subject.into(),
        ..NewLogEntry::default()
    }
}

async fn lines(store: &SharedStore, subject: &str) -> Vec<LogEntry> {
    let filter = LogFilter {
        subject: Some(subject.into()),
        limit: 100,
        ..LogFilter::default()
    };
    store.operator_log(filter).await.unwrap()
}

#[tokio::test]
async fn a_unit_of_work_stores_every_change_or_none() {
    let (_db, store) = store().await;
    let (account, _) = funded_account(&store, 100).await;
    let subject = account.to_string();

    // A credit, then a debit larger than the wallet: the debit is refused,
    // so the credit and both lines are rolled back with it.
    let refused = store
        .write(
            (account, line("wallet.move", &subject)),
            |tx, (account, log)| {
                Box::pin(async move {
                    work::credit_logged(tx, *account, Kobo::from_naira(50), "in-1", log).await?;
                    work::debit_logged(tx, *account, Kobo::from_naira(500), "out-1", log).await
                })
            },
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::Refused(_))),
        "{refused:?}"
    );
    assert_eq!(store.balance(account).await.unwrap(), Kobo::from_naira(100));
    assert!(lines(&store, &subject).await.is_empty(), "no line stored");

    // The same body within the balance: both moves and both lines, plus a
    // line the caller composed itself.
    let net = store
        .write(
            (account, line("wallet.move", &subject)),
            |tx, (account, log)| {
                Box::pin(async move {
                    let credit =
                        work::credit_logged(tx, *account, Kobo::from_naira(50), "in-2", log)
                            .await?;
                    let debit =
                        work::debit_logged(tx, *account, Kobo::from_naira(30), "out-2", log)
                            .await?;
                    let mut note = log.clone();
                    note.action = "wallet.note".into();
                    work::log(tx, &note).await?;
                    Ok((credit.balance, debit.balance))
                })
            },
        )
        .await
        .unwrap();
    assert_eq!(net, (Kobo::from_naira(150), Kobo::from_naira(120)));
    assert_eq!(store.balance(account).await.unwrap(), Kobo::from_naira(120));
    let actions: Vec<String> = lines(&store, &subject)
        .await
        .into_iter()
        .map(|l| l.action)
        .collect();
    assert_eq!(actions.len(), 3, "{actions:?}");
    assert_eq!(
        actions.iter().filter(|a| *a == "wallet.note").count(),
        1,
        "{actions:?}"
    );
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn a_unit_of_work_on_a_sealed_store_seals_what_it_finalizes() {
    let (db, store) = store().await;
    let key = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
    let sealed = sealed_store(&db, key).await;
    let (account, key_id) = funded_account(&store, 100).await;
    let placed = sealed
        .place_purchase(purchase(account, key_id, "sealed-1", 10))
        .await
        .unwrap();
    let mut fin = finalization(TxStatus::Successful, false);
    fin.result = serde_json::json!({ "pin": "1234-5678-9012" });
    let input = (
        placed.code.clone(),
        fin,
        line("transaction.resolve", &placed.code),
    );
    let changed = sealed
        .write(input, |tx, (code, fin, log)| {
            Box::pin(work::finalize_logged(tx, code, fin, log))
        })
        .await
        .unwrap();
    assert!(changed);

    let lookup = || TxLookup::Code(placed.code.clone());
    let stored = store.transaction(None, lookup()).await.unwrap().unwrap();
    assert!(stored.result.get("sealed").is_some(), "{}", stored.result);
    assert!(
        !stored.result.to_string().contains("1234"),
        "{}",
        stored.result
    );
    let read = sealed.transaction(None, lookup()).await.unwrap().unwrap();
    assert_eq!(read.result, serde_json::json!({ "pin": "1234-5678-9012" }));
    assert_eq!(lines(&store, &placed.code).await.len(), 1);
}
