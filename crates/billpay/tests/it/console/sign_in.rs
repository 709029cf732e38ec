//! The console's sign-in over HTTP: the TOTP second factor (a code is
//! accepted once, on any node) and the idle timeout.

use super::*;
use crate::dashboard::{form_sign_in, no_redirects};

const ADMIN_COOKIE: &str = "billpay_admin";

async fn sign_in(server: &TestServer, email: &str, code: &str) -> Result<String, u16> {
    let fields = [("email", email), ("password", PASSWORD), ("totp", code)];
    form_sign_in(server, "/admin/login", ADMIN_COOKIE, &fields).await
}

/// GET `path` with `cookie`: the status, and where a redirect points.
async fn visit(server: &TestServer, cookie: &str, path: &str) -> (u16, String) {
    let response = no_redirects()
        .get(server.url(path))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    let location = response
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (response.status().as_u16(), location)
}

#[tokio::test]
async fn a_totp_code_is_needed_right_and_accepted_once_on_any_node() {
    let server = server_with_operators().await;
    let enabled = server.cli(&["operator", "totp", OWNER, "--enable"]);
    let uri = enabled["otpauth_uri"].as_str().unwrap();
    let totp = totp_rs::Totp::from_url(uri).expect("the otpauth URI parses");

    assert_eq!(sign_in(&server, OWNER, "").await, Err(401), "no code");
    let code = totp.generate_current().to_string();
    let wrong = format!("{:06}", (code.parse::<u32>().unwrap() + 1) % 1_000_000);
    assert_eq!(
        sign_in(&server, OWNER, &wrong).await,
        Err(401),
        "wrong code"
    );

    let cookie = sign_in(&server, OWNER, &code)
        .await
        .expect("the right code");
    assert_eq!(visit(&server, &cookie, "/admin").await.0, 200);
    assert_eq!(sign_in(&server, OWNER, &code).await, Err(401), "reused");
    if server.is_postgres() {
        // A second node on the same database refuses the code the first took.
        let node = server.another_node(Options::default(), &[]).await;
        assert_eq!(
            sign_in(&node, OWNER, &code).await,
            Err(401),
            "reused elsewhere"
        );
    }
    // Without TOTP on, the field is ignored.
    assert!(sign_in(&server, SUPPORT, "").await.is_ok());
}

#[tokio::test]
async fn a_session_left_idle_fifteen_minutes_asks_to_sign_in_again() {
    let server = server_with_operators().await;
    let cookie = sign_in(&server, SUPPORT, "").await.unwrap();
    assert_eq!(visit(&server, &cookie, "/admin").await.0, 200);

    // Idle for 14 minutes: still signed in (and the request stamps it again).
    let minutes_ago = |m: i64| {
        let sql = format!(
            "UPDATE operator_sessions SET last_seen_at = last_seen_at - {}",
            m * 60_000
        );
        (sql.clone(), sql)
    };
    let (sqlite, postgres) = minutes_ago(14);
    server.raw_sql(&sqlite, &postgres).await;
    assert_eq!(visit(&server, &cookie, "/admin/customers").await.0, 200);

    // Idle for 16: sent to sign in, and the session is gone for good.
    let (sqlite, postgres) = minutes_ago(16);
    server.raw_sql(&sqlite, &postgres).await;
    let (status, location) = visit(&server, &cookie, "/admin/customers").await;
    assert_eq!((status, location.as_str()), (303, "/admin/login"));
    let (sqlite, postgres) = minutes_ago(-16);
    server.raw_sql(&sqlite, &postgres).await;
    assert_eq!(
        visit(&server, &cookie, "/admin").await.0,
        303,
        "deleted, not just idle"
    );
}
