//! Webhook URLs: validated when set, and private targets refused unless
//! allowed.

use super::*;

/// `key webhook --url`: only absolute http(s) URLs; `''` clears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_url_is_validated_and_can_be_cleared() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let out = set_url(&server, &c.key_id, "https://hooks.example.com/billpay");
    assert_eq!(
        out["webhook_url"], "https://hooks.example.com/billpay",
        "{out}"
    );

    for (url, says) in [
        ("ftp://x", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("hooks.example.com/billpay", "not a valid absolute URL"),
        (
            "https://user:secret@example.com/hook",
            "username or password",
        ),
    ] {
        let (ok, out) = server.cli_result(&["key", "webhook", &c.key_id, "--url", url]);
        assert!(!ok, "{url} accepted: {out}");
        let error = out["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{url}: {out}"));
        assert!(error.contains(says), "{url}: {error:?}");
        assert!(
            !error.contains("secret"),
            "the URL's password is not echoed: {error:?}"
        );
    }

    // The rejected URLs changed nothing.
    let out = server.cli(&["key", "webhook-retries", &c.key_id, "--disable"]);
    assert_eq!(
        out["webhook_url"], "https://hooks.example.com/billpay",
        "{out}"
    );

    let out = set_url(&server, &c.key_id, "");
    assert_eq!(out["webhook_url"], Value::Null, "{out}");
}

/// Without BILLPAY_WEBHOOK_ALLOW_PRIVATE the server refuses loopback
/// targets (by IP literal and by name): logged, and nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_targets_are_refused_unless_allowed() {
    let server = TestServer::spawn_with_env(
        Options::default(),
        &[("BILLPAY_WEBHOOK_ALLOW_PRIVATE", "false")],
    )
    .await;
    let receiver = Receiver::start().await;
    let by_ip = server.customer("10000");
    let by_name = server.customer("10000");
    set_url(&server, &by_ip.key_id, &receiver.url("/ok"));
    let port = receiver.base.rsplit(':').next().unwrap();
    set_url(
        &server,
        &by_name.key_id,
        &format!("http://localhost:{port}/ok"),
    );

    let ip_code = code_of(
        &buy(
            &server,
            &by_ip,
            "/v1/airtime/purchase",
            airtime("08031234001"),
        )
        .await,
    );
    let name_code = code_of(
        &buy(
            &server,
            &by_name,
            "/v1/airtime/purchase",
            airtime("08031234002"),
        )
        .await,
    );
    for (c, code) in [(&by_ip, &ip_code), (&by_name, &name_code)] {
        let entry = wait_settled(&server, &c.account_id, code).await;
        assert_eq!(entry["event"]["status"], "failed", "{entry}");
        only_unanswered_attempt(&entry, "refused");
    }
    tokio::time::sleep(SETTLE).await;
    assert!(receiver.received().is_empty(), "{:?}", receiver.received());
}
