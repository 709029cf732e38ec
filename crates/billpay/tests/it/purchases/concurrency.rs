//! Concurrency: one reference raced many times is debited once, and
//! simultaneous purchases never overdraw a wallet.

use super::checks::*;
use super::kind::*;
use crate::support::*;
use serde_json::json;

#[tokio::test]
async fn a_reference_sent_100_times_at_once_is_accepted_and_debited_once() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let shared = reference();
    let requests = (0..100)
        .map(|i| {
            let kind = [Airtime, Bet, Electricity, Data][i % 4];
            (kind.live(), kind.body(&shared, "1234"))
        })
        .collect();
    let replies = post_all(&server, &c.api_key, requests).await;
    let accepted: Vec<&Reply> = replies.iter().filter(|r| r.status == 200).collect();
    assert_eq!(accepted.len(), 1, "exactly one accepted");
    for r in replies.iter().filter(|r| r.status != 200) {
        r.assert_error(422, "duplicate_reference");
    }
    let d = accepted[0].data();
    let amount = kobo(&d["amount"]);
    let code = str_of(&d["reference_code"]);
    server.wait_final(&c.api_key, &code).await;
    assert_eq!(balance_kobo(&server, &c.api_key).await, 1_000_000 - amount);
    let statement = server.assert_ledger_consistent(&c.account_id);
    let debits = entries_of_kind(&statement, "debit");
    assert_eq!(debits, 1, "one debit: {statement}");
    assert_eq!(
        ledger_of(&statement, &code),
        vec![("debit".to_owned(), -amount)]
    );
    assert_eq!(transactions(&server, &c.account_id, None).len(), 1);
}

/// 40 purchases of ₦1,000 at once against ₦10,000.
#[tokio::test]
async fn simultaneous_purchases_spend_the_balance_and_never_overdraw() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let requests = (0..40)
        .map(|_| {
            let body = with(&Airtime.body(&reference(), "1234"), "amount", json!(1000));
            (Airtime.live(), body)
        })
        .collect();
    let replies = post_all(&server, &c.api_key, requests).await;
    let mut spent = 0;
    let mut codes = Vec::new();
    for r in &replies {
        if r.status == 200 {
            let d = r.data();
            assert!(kobo(&d["balance_after"]) >= 0, "{d}");
            assert_eq!(
                kobo(&d["balance_before"]) - kobo(&d["balance_after"]),
                100_000
            );
            spent += kobo(&d["amount"]);
            codes.push(str_of(&d["reference_code"]));
        } else {
            r.assert_error(422, "insufficient_balance");
        }
    }
    assert!(spent <= 1_000_000, "successes sum to at most the balance");
    assert_eq!(codes.len(), 10, "the whole balance, and no more, was spent");
    for code in &codes {
        assert_eq!(
            server.wait_final(&c.api_key, code).await["status"],
            "successful"
        );
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, 1_000_000 - spent);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for e in statement["entries"].as_array().unwrap() {
        assert!(kobo(&e["balance_after"]) >= 0, "never negative: {e}");
    }
    assert_eq!(
        transactions(&server, &c.account_id, None).len(),
        codes.len()
    );
}
