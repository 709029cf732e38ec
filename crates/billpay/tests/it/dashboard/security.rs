//! The dashboard's security rules over plain HTTP.

use super::*;
use serde_json::json;

/// Two accounts with a password (₦10,000 each), both signed in: their ids
/// and session cookies.
struct TwoSignedIn {
    server: TestServer,
    a: String,
    b: String,
    cookie_a: String,
    cookie_b: String,
}

async fn two_signed_in() -> TwoSignedIn {
    let server = TestServer::spawn().await;
    let a = account_with_password(&server, "a@example.com", "10000");
    let b = account_with_password(&server, "b@example.com", "10000");
    let cookie_a = sign_in(&server, "a@example.com", PASSWORD).await.unwrap();
    let cookie_b = sign_in(&server, "b@example.com", PASSWORD).await.unwrap();
    TwoSignedIn {
        server,
        a,
        b,
        cookie_a,
        cookie_b,
    }
}

#[tokio::test]
async fn the_session_cookie_is_http_only_same_site_lax_and_secure() {
    let server = TestServer::spawn().await;
    let http = no_redirects();
    let page = http
        .get(server.url("/dashboard/login"))
        .header("X-Forwarded-Proto", "https")
        .send()
        .await
        .unwrap();
    let set_cookie = page.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        set_cookie.contains("HttpOnly")
            && set_cookie.contains("SameSite=Lax")
            && set_cookie.contains("Secure"),
        "{set_cookie}"
    );
}

/// A form without (or with a wrong, or another session's) CSRF proof is
/// refused and changes nothing.
#[tokio::test]
async fn a_form_without_its_sessions_csrf_proof_is_refused_and_changes_nothing() {
    let TwoSignedIn {
        server,
        cookie_a,
        cookie_b,
        ..
    } = two_signed_in().await;
    let http = no_redirects();
    for form in [vec![("name", "x")], vec![("name", "x"), ("csrf", "0000")]] {
        let r = http
            .post(server.url("/dashboard/keys"))
            .header("Cookie", &cookie_a)
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
    }
    let keys_page = http
        .get(server.url("/dashboard/keys"))
        .header("Cookie", &cookie_a)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        keys_page.contains("No keys yet"),
        "a key was created without CSRF proof"
    );
    // B's CSRF token does not work with A's session
    let csrf_b = csrf_in(
        &http
            .get(server.url("/dashboard/keys"))
            .header("Cookie", &cookie_b)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    let r = http
        .post(server.url("/dashboard/keys"))
        .header("Cookie", &cookie_a)
        .form(&[("name", "x"), ("csrf", &csrf_b)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
}

#[tokio::test]
async fn one_account_never_sees_or_changes_anothers_keys_webhooks_or_transactions() {
    let TwoSignedIn {
        server,
        a,
        cookie_a,
        cookie_b,
        ..
    } = two_signed_in().await;
    let http = no_redirects();
    let key_a = server.cli(&["key", "create", "--account", &a]);
    let api_key_a = key_a["api_key"].as_str().unwrap();
    let code = server.post(api_key_a, "/v1/airtime/purchase", json!({"provider_id":"mtn","phone":"08031234567","amount":100,"reference": reference()})).await.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    let get_b = |path: String| {
        http.get(server.url(&path))
            .header("Cookie", &cookie_b)
            .send()
    };
    assert_eq!(
        get_b(format!("/dashboard/transactions/{code}"))
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        get_b(format!(
            "/dashboard/keys/{}/webhooks",
            key_a["key_id"].as_str().unwrap()
        ))
        .await
        .unwrap()
        .status(),
        404
    );
    let list_b = get_b("/dashboard/transactions".into())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!list_b.contains(&code));
    let csv_b = get_b("/dashboard/wallet.csv".into())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!csv_b.contains(&code));
    let csrf_b = csrf_in(
        &get_b("/dashboard/keys".into())
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    let r = http
        .post(server.url(&format!(
            "/dashboard/keys/{}/status",
            key_a["key_id"].as_str().unwrap()
        )))
        .header("Cookie", &cookie_b)
        .form(&[("action", "revoke"), ("csrf", &csrf_b)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    server
        .get(api_key_a, "/v1/wallet/balance")
        .await
        .assert_ok();
    // A sees its own
    let mine = http
        .get(server.url(&format!("/dashboard/transactions/{code}")))
        .header("Cookie", &cookie_a)
        .send()
        .await
        .unwrap();
    assert_eq!(mine.status(), 200);
}

#[tokio::test]
async fn a_suspended_account_cannot_sign_in_and_its_open_session_stops() {
    let TwoSignedIn {
        server,
        b,
        cookie_b,
        ..
    } = two_signed_in().await;
    let http = no_redirects();
    let get_b = |path: String| {
        http.get(server.url(&path))
            .header("Cookie", &cookie_b)
            .send()
    };
    server.cli(&["account", "suspend", &b]);
    assert_eq!(sign_in(&server, "b@example.com", PASSWORD).await, Err(403));
    assert_eq!(get_b("/dashboard".into()).await.unwrap().status(), 303);
}

/// Five wrong passwords lock the email, even for the right one; an unknown
/// email is refused like a wrong password.
#[tokio::test]
async fn five_wrong_passwords_lock_the_email_and_an_unknown_one_is_refused_alike() {
    let server = TestServer::spawn().await;
    account_with_password(&server, "a@example.com", "10000");
    for _ in 0..5 {
        assert_eq!(
            sign_in(&server, "a@example.com", "not the password").await,
            Err(401)
        );
    }
    assert_eq!(sign_in(&server, "a@example.com", PASSWORD).await, Err(429));
    // an unknown email is refused like a wrong password
    assert_eq!(
        sign_in(&server, "nobody@example.com", PASSWORD).await,
        Err(401)
    );
}

#[tokio::test]
async fn a_login_form_without_its_double_submit_cookie_is_refused() {
    let server = TestServer::spawn().await;
    account_with_password(&server, "a@example.com", "10000");
    let http = no_redirects();
    let html = http
        .get(server.url("/dashboard/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let r = http
        .post(server.url("/dashboard/login"))
        .form(&[
            ("email", "a@example.com"),
            ("password", PASSWORD),
            ("csrf", &csrf_in(&html)),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
}

#[tokio::test]
async fn dashboard_pages_cannot_be_framed_or_cached() {
    let server = TestServer::spawn().await;
    account_with_password(&server, "frame@example.com", "10000");
    let cookie = sign_in(&server, "frame@example.com", PASSWORD)
        .await
        .unwrap();
    let http = no_redirects();
    for path in [
        "/dashboard",
        "/dashboard/keys",
        "/dashboard/wallet",
        "/dashboard/login",
    ] {
        let page = http
            .get(server.url(path))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap();
        let header = |name: &str| {
            page.headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default()
        };
        assert_eq!(header("x-frame-options"), "DENY", "{path}");
        let csp = header("content-security-policy");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert_eq!(header("cache-control"), "no-store", "{path}");
    }
}

#[tokio::test]
async fn a_password_change_or_a_suspension_ends_every_session() {
    let server = TestServer::spawn().await;
    let id = account_with_password(&server, "ended@example.com", "10000");
    let http = no_redirects();
    let signed_in = |cookie: String| {
        let request = http
            .get(server.url("/dashboard/keys"))
            .header("Cookie", cookie);
        async move { request.send().await.unwrap().status() == 200 }
    };

    let cookie = sign_in(&server, "ended@example.com", PASSWORD)
        .await
        .unwrap();
    assert!(signed_in(cookie.clone()).await);
    server.cli(&["account", "set-password", &id, "--password", PASSWORD]);
    assert!(!signed_in(cookie).await, "set-password ends the session");

    let cookie = sign_in(&server, "ended@example.com", PASSWORD)
        .await
        .unwrap();
    assert!(signed_in(cookie.clone()).await);
    server.cli(&["account", "suspend", &id]);
    server.cli(&["account", "reactivate", &id]);
    assert!(!signed_in(cookie).await, "a suspension ends the session");
    let cookie = sign_in(&server, "ended@example.com", PASSWORD)
        .await
        .unwrap();
    assert!(signed_in(cookie).await, "signing in again works");
}
