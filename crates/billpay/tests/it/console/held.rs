//! Purchases held for review by a velocity rule (issue 32, docs/limits.md)
//! through the real binary: the API accepts them as `processing`, the
//! supplier is not asked, the console's Needs review page lists them with
//! the rule; an owner releases one (the supplier delivers it) and rejects
//! another (failed, refunded once) with a reason, support is refused; the
//! CLI does the same with --json; `/metrics` counts them.

use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::csrf_in;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_releases_and_rejects_held_purchases() {
    let server = TestServer::spawn().await;
    add_operators(&server);
    let c = server.customer("10000");
    let key = c.api_key.as_str();
    let set = server.cli(&[
        "limits",
        "set",
        "--account",
        &c.account_id,
        "--recipient-hourly-count",
        "1",
        "--recipient-hourly-action",
        "hold",
    ]);
    assert_eq!(set["overrides"]["recipient_hourly_count"], 1);
    assert_eq!(set["overrides"]["recipient_hourly_action"], "hold");
    let buy = |reference: String| json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": reference});
    let first = server
        .place(key, "/v1/airtime/purchase", buy(reference()))
        .await;
    assert_eq!(server.wait_final(key, &first).await["status"], "successful");
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(
            server
                .place(key, "/v1/airtime/purchase", buy(reference()))
                .await,
        );
    }
    // Debited, processing, and never sent: the worker has had time to.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for code in &held {
        let status = server
            .get(
                key,
                &format!("/v1/transaction/status?reference_code={code}"),
            )
            .await;
        assert_eq!(status.assert_ok()["status"], "processing");
        let shown = server.cli(&["transaction", "show", code]);
        assert_eq!(shown["transaction"]["submitted"], false, "{shown}");
        assert_eq!(shown["transaction"]["held_for"], "recipient_hourly_count");
    }
    assert_eq!(server.balance(key).await, 8_000.0);
    let listed = server.cli(&["transaction", "held"]);
    assert_eq!(listed["held"].as_array().unwrap().len(), 3, "{listed}");

    // The Needs review page lists them with the rule; support may look, not decide.
    let support = admin(&server, SUPPORT).await;
    let (status, _, html) = page(&server, &support, "/admin/review").await;
    assert_eq!(status, 200);
    assert!(html.contains("id=\"held-purchases\""), "{html}");
    assert!(html.contains("hourly limit on purchases to one recipient"));
    assert!(held.iter().all(|code| html.contains(code.as_str())));
    let detail = format!("/admin/transactions/{}", held[0]);
    let (_, _, html) = page(&server, &support, &detail).await;
    assert!(html.contains("Held for review") && !html.contains("release-held"));
    let decide = format!("/admin/transactions/{}/held", held[0]);
    let proof = csrf_in(&html);
    let release = [
        ("decision", "release"),
        ("reason", "customer called"),
        ("csrf", proof.as_str()),
    ];
    let (status, _) = post_form(&server, &support, &decide, &release).await;
    assert_eq!(status, 403);

    // The owner releases the first: the supplier delivers it.
    let owner = admin(&server, OWNER).await;
    let (_, _, html) = page(&server, &owner, &detail).await;
    assert!(html.contains("release-held"), "the owner has the form");
    let proof = csrf_in(&html);
    let no_reason = [("decision", "reject"), ("reason", ""), ("csrf", &proof)];
    let (status, _) = post_form(&server, &owner, &decide, &no_reason).await;
    assert_eq!(status, 400);
    let release = [
        ("decision", "release"),
        ("reason", "customer called"),
        ("csrf", proof.as_str()),
    ];
    let (status, _) = post_form(&server, &owner, &decide, &release).await;
    assert_eq!(status, 303);
    assert_eq!(
        server.wait_final(key, &held[0]).await["status"],
        "successful"
    );
    let (status, refusal) = post_form(&server, &owner, &decide, &release).await;
    assert_eq!(status, 409, "{refusal}");

    // The owner rejects the second: failed, refunded once.
    let reject = [
        ("decision", "reject"),
        ("reason", "recipient reported by the bank"),
        ("csrf", proof.as_str()),
    ];
    let decide = format!("/admin/transactions/{}/held", held[1]);
    let (status, _) = post_form(&server, &owner, &decide, &reject).await;
    assert_eq!(status, 303);
    let rejected = server.wait_final(key, &held[1]).await;
    assert_eq!(rejected["status"], "failed");
    let (status, _) = post_form(&server, &owner, &decide, &reject).await;
    assert_eq!(status, 409);
    assert_eq!(server.balance(key).await, 8_500.0);

    // The CLI: the third rejected with --json, a release of it then refused.
    let (ok, answer) = server.cli_result(&["transaction", "reject", &held[2]]);
    assert!(!ok, "a rejection without a reason: {answer}");
    let answer = server.cli(&["transaction", "reject", &held[2], "--reason", "fraud"]);
    assert_eq!(
        (&answer["rejected"], &answer["status"]),
        (&json!(true), &json!("failed"))
    );
    let (ok, _) = server.cli_result(&["transaction", "release", &held[2]]);
    assert!(!ok);
    assert_eq!(server.balance(key).await, 9_000.0);
    assert!(
        server.cli(&["transaction", "held"])["held"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    let log = server.cli(&["operator", "log", "--subject", &held[1]]);
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["action"], "transaction.reject");
    assert_eq!(entries[0]["before"], "recipient_hourly_count");
    assert_eq!(entries[0]["operator_email"], OWNER);

    let text = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let line = "billpay_purchases_held_total{reason=\"recipient_hourly_count\"} 3";
    assert!(text.contains(line), "{line} in /metrics");
    server.assert_ledger_consistent(&c.account_id);
}

/// A held purchase waits for an owner, not the supplier: past the
/// needs-review time it is listed under Held only — not in the backlog,
/// the needs-review count, `transaction list --needs-review` or `show`'s
/// REVIEW line; a purchase whose supplier does not answer is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_purchase_is_neither_backlog_nor_needing_review() {
    let server = server_with_operators().await;
    let c = server.customer("10000");
    let key = c.api_key.as_str();
    let buy = || json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": reference()});
    server.cli(&[
        "limits",
        "set",
        "--account",
        &c.account_id,
        "--account-hourly-count",
        "1",
        "--account-hourly-action",
        "hold",
    ]);
    // The supplier is unreachable: the first stays processing; the second
    // is the hour's second purchase, held.
    let unanswered = server.place(key, "/v1/airtime/purchase", buy()).await;
    let held = server.place(key, "/v1/airtime/purchase", buy()).await;
    let shown = server.cli(&["transaction", "show", &held]);
    assert_eq!(shown["transaction"]["held_for"], "account_hourly_count");
    assert_eq!(shown["needs_review"], false, "{shown}");
    let shown = server.cli(&["transaction", "show", &unanswered]);
    assert_eq!(shown["needs_review"], true, "{shown}");
    let listed = server.cli(&["transaction", "list", "--needs-review"]);
    let codes: Vec<&str> = listed["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tx| tx["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, [unanswered.as_str()], "{listed}");

    let owner = admin(&server, OWNER).await;
    let (status, _, html) = page(&server, &owner, "/admin").await;
    assert_eq!(status, 200);
    assert!(html.contains("id=\"backlog\">1<"), "{html}");
    assert!(html.contains("id=\"needs-review\"><a href=\"/admin/review\">1<"));
    let (_, _, html) = page(&server, &owner, "/admin/review").await;
    assert!(html.contains(&unanswered) && html.contains(&held));
}
