//! Transaction status and e-pin batch lookups: private to their account,
//! and one kind of id never finds the other. (A lookup without its query
//! parameter is refused in-process: `crates/api/tests/validation.rs`.)

use super::checks::*;
use super::kind::*;
use crate::support::*;

/// What one account bought: an airtime purchase and an e-pin batch, final.
struct Bought {
    code: String,
    airtime_ref: String,
    batch: String,
    epin_ref: String,
}

async fn buy_airtime_and_epins(server: &TestServer, key: &str) -> Bought {
    let airtime_ref = reference();
    let tx = server
        .post(key, &Airtime.live(), Airtime.body(&airtime_ref, "1234"))
        .await;
    let code = str_of(&tx.assert_ok()["reference_code"]);
    let epin_ref = reference();
    let epin = server
        .post(key, &Epin.live(), Epin.body(&epin_ref, "1234"))
        .await;
    let batch = str_of(&epin.assert_ok()["batch_id"]);
    server.wait_final(key, &code).await;
    server
        .wait_final(key, epin.data()["reference_code"].as_str().unwrap())
        .await;
    Bought {
        code,
        airtime_ref,
        batch,
        epin_ref,
    }
}

#[tokio::test]
async fn another_account_gets_404_for_my_purchases_as_for_unknown_ones() {
    let server = TestServer::spawn().await;
    let a = server.customer("10000");
    let b = server.customer("10000");
    let Bought {
        code,
        airtime_ref,
        batch,
        epin_ref,
    } = buy_airtime_and_epins(&server, &a.api_key).await;

    // The owner sees them…
    status_by_code(&server, &a.api_key, &code).await;
    status_by_reference(&server, &a.api_key, &airtime_ref).await;
    let own = server
        .get(&a.api_key, &format!("/v1/epin/batch?batch_id={batch}"))
        .await;
    assert_eq!(own.assert_ok()["pins"].as_array().unwrap().len(), 3);
    // …another account gets 404, as for something that does not exist.
    for path in [
        format!("/v1/transaction/status?reference_code={code}"),
        format!("/v1/transaction/status?reference={airtime_ref}"),
        format!("/v1/transaction/status?reference={epin_ref}"),
        format!("/v1/epin/batch?batch_id={batch}"),
        "/v1/transaction/status?reference_code=BP000000000000000000".to_owned(),
        "/v1/transaction/status?reference=no-such-reference".to_owned(),
        "/v1/epin/batch?batch_id=EP0NOSUCHBATCH".to_owned(),
    ] {
        server
            .get(&b.api_key, &path)
            .await
            .assert_error(404, "not_found");
    }
    // B's balance and ledger never moved.
    assert_eq!(balance_kobo(&server, &b.api_key).await, 1_000_000);
    assert!(transactions(&server, &b.account_id, None).is_empty());
}

#[tokio::test]
async fn a_transaction_code_is_not_a_batch_id_nor_the_other_way_round() {
    let server = TestServer::spawn().await;
    let a = server.customer("10000");
    let Bought { code, batch, .. } = buy_airtime_and_epins(&server, &a.api_key).await;
    server
        .get(&a.api_key, "/v1/transaction/status?reference_code=BP123")
        .await
        .assert_error(404, "not_found");
    server
        .get(&a.api_key, &format!("/v1/epin/batch?batch_id={code}"))
        .await
        .assert_error(404, "not_found");
    server
        .get(
            &a.api_key,
            &format!("/v1/transaction/status?reference_code={batch}"),
        )
        .await
        .assert_error(404, "not_found");
}
