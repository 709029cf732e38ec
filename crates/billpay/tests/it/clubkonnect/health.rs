//! The start-up check of every real supplier: refused credentials and base
//! URLs that are not the supplier's stop `serve` with what to fix; VTpass's
//! base URL as its docs write it (`…/api/`) works; `--skip-supplier-check`
//! starts anyway; a misconfiguration found later is an error and a metric.

use super::*;
use crate::support::{BIN, MASTER_KEY};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// `billpay serve` with `env`; what it said if it stopped, `None` if it
/// started listening (then it is killed).
fn serve(env: &[(&str, String)], flags: &[&str]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}/b.db", dir.path().display()))
        .args(flags)
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .env("BILLPAY_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .any(|line| line.starts_with("billpay listening on"));
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    (!started).then_some(said)
}

fn with(
    mut env: Vec<(&'static str, String)>,
    changes: &[(&'static str, &str)],
) -> Vec<(&'static str, String)> {
    for (key, value) in changes {
        env.retain(|(k, _)| k != key);
        env.push((key, value.to_string()));
    }
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_to_start_on_refused_credentials_or_a_wrong_base_url() {
    let clubkonnect = FakeClubkonnect::start().await;
    let vtpass = FakeVtpass::start().await;
    let cases = [
        (
            with(
                clubkonnect.env(),
                &[("BILLPAY_CLUBKONNECT_API_KEY", "wrong-key")],
            ),
            "clubkonnect refused the credentials",
        ),
        (
            with(
                clubkonnect.env(),
                &[("BILLPAY_CLUBKONNECT_BASE_URL", &vtpass.base)],
            ),
            "does not answer like clubkonnect",
        ),
        (
            with(
                vtpass.env(),
                &[
                    ("BILLPAY_VTPASS_SECRET_KEY", "wrong"),
                    ("BILLPAY_VTPASS_PUBLIC_KEY", "wrong"),
                ],
            ),
            "vtpass refused the credentials",
        ),
        (
            with(
                vtpass.env(),
                &[("BILLPAY_VTPASS_BASE_URL", &clubkonnect.base)],
            ),
            "does not answer like vtpass",
        ),
        (
            with(
                vtpass.env(),
                &[("BILLPAY_VTPASS_BASE_URL", "http://127.0.0.1:9")],
            ),
            "cannot be reached",
        ),
    ];
    for (env, expected) in cases {
        let env2 = env.clone();
        let said = tokio::task::spawn_blocking(move || serve(&env2, &[]))
            .await
            .unwrap();
        let said = said.unwrap_or_else(|| panic!("started with {env:?}"));
        assert!(said.contains(expected), "{expected:?} not in: {said}");
        assert!(said.contains("--skip-supplier-check"), "{said}");
        for (key, value) in &env {
            if key.ends_with("_KEY") {
                assert!(!said.contains(value.as_str()), "{key} printed: {said}");
            }
        }
        // With --skip-supplier-check it starts, warning.
        let skipped = tokio::task::spawn_blocking(move || serve(&env, &["--skip-supplier-check"]))
            .await
            .unwrap();
        assert!(skipped.is_none(), "{skipped:?}");
    }
    // Both suppliers configured and well: it starts.
    let mut both = clubkonnect.env();
    both.extend(vtpass.env());
    let started = tokio::task::spawn_blocking(move || serve(&both, &[]))
        .await
        .unwrap();
    assert!(started.is_none(), "{started:?}");
}

#[tokio::test]
async fn vtpass_base_url_as_its_docs_write_it_sells() {
    let fake = FakeVtpass::start().await;
    let base = format!("{}/api/", fake.base);
    let server = crate::vtpass::server_with(&fake, &[("BILLPAY_VTPASS_BASE_URL", &base)]).await;
    let who = server.customer("5000");
    let code = buy(&server, &who, "airtime", airtime("08011111111")).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(fake.pay_calls_for("08011111111").len(), 1);
}

#[tokio::test]
async fn a_refused_key_later_is_an_error_and_a_metric_never_a_refund() {
    let fake = FakeClubkonnect::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("5000");
    fake.rotate_key();
    let code = buy(&server, &who, "airtime", airtime("08011111111")).await;
    let metric = "billpay_supplier_misconfigured_total{supplier=\"clubkonnect\"}";
    let mut scrape = String::new();
    for _ in 0..100 {
        scrape = server
            .http
            .get(server.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if scrape.contains(metric) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(scrape.contains(metric), "{scrape}");
    let status = server
        .get(
            &who.api_key,
            &format!("/v1/transaction/status?reference_code={code}"),
        )
        .await;
    assert_eq!(
        status.assert_ok()["status"],
        "processing",
        "never refunded on a guess"
    );
    assert_eq!(server.balance(&who.api_key).await, 4500.0);
    // The server logs at error level only in tests: the line is there.
    let logs = String::from_utf8_lossy(&server.logs()).into_owned();
    assert!(
        logs.contains("misconfigured") && logs.contains("ERROR"),
        "{logs}"
    );
    assert!(
        !logs.contains(crate::support::clubkonnect::API_KEY),
        "{logs}"
    );
}
