//! "My account" over HTTP: an operator changes their own password (the
//! current one required; their other sessions end, this browser stays in)
//! and turns TOTP on with a code from the new secret, then off with a fresh
//! one; an owner sets another operator's password. Each is in the log.

use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::{csrf_in, form_sign_in, no_redirects};

pub(super) async fn sign_in(
    server: &TestServer,
    email: &str,
    password: &str,
    code: &str,
) -> Result<String, u16> {
    let fields = [("email", email), ("password", password), ("totp", code)];
    form_sign_in(server, "/admin/login", "billpay_admin", &fields).await
}

/// Whether `cookie`'s session still opens the console.
async fn signed_in(server: &TestServer, cookie: &str) -> bool {
    page(server, cookie, "/admin").await.0 == 200
}

/// The value after `marker` up to the next `end` in a page.
pub(super) fn between<'a>(html: &'a str, marker: &str, end: &str) -> &'a str {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {html}"))
        + marker.len();
    &html[start..start + html[start..].find(end).unwrap()]
}

/// The operator log's actions about `subject` since it was created, newest first.
pub(super) fn logged(server: &TestServer, subject: &str) -> Vec<String> {
    let log = server.cli(&["operator", "log", "--subject", subject]);
    let entries = log["entries"].as_array().unwrap().iter();
    let actions = entries.map(|e| e["action"].as_str().unwrap().to_owned());
    actions.filter(|a| a != "operator.create").collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_changes_their_own_password_and_their_other_sessions_end() {
    let server = server_with_operators().await;
    let here = admin(&server, SUPPORT).await;
    let elsewhere = admin(&server, SUPPORT).await;
    let (status, _, html) = page(&server, &here, "/admin/account").await;
    assert_eq!(status, 200);
    let proof = csrf_in(&html);
    let path = "/admin/account/password";
    let new = "a brand new horse";
    let wrong = [
        ("current_password", "guess"),
        ("new_password", new),
        ("confirm_password", new),
        ("csrf", &proof),
    ];
    let (status, refusal) = post_form(&server, &here, path, &wrong).await;
    assert_eq!(status, 400, "{refusal}");
    assert!(
        refusal.contains("current_password is not your password"),
        "{refusal}"
    );
    assert!(
        signed_in(&server, &elsewhere).await,
        "a refusal ends nothing"
    );

    let fields = [
        ("current_password", PASSWORD),
        ("new_password", new),
        ("confirm_password", new),
        ("csrf", &proof),
    ];
    let response = no_redirects()
        .post(server.url(path))
        .header("Cookie", &here)
        .form(&fields)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    let fresh = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    assert!(
        signed_in(&server, &fresh).await,
        "this browser stays signed in"
    );
    assert!(
        !signed_in(&server, &elsewhere).await,
        "the other session ended"
    );
    assert!(
        !signed_in(&server, &here).await,
        "the old token is gone too"
    );
    assert_eq!(
        sign_in(&server, SUPPORT, PASSWORD, "").await,
        Err(401),
        "the old password fails"
    );
    assert!(
        sign_in(&server, SUPPORT, new, "").await.is_ok(),
        "the new one works"
    );
    assert_eq!(logged(&server, SUPPORT), ["operator.password"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn totp_is_turned_on_only_with_a_right_code_and_off_with_a_fresh_one() {
    let server = server_with_operators().await;
    let me = admin(&server, SUPPORT).await;
    let (_, _, html) = page(&server, &me, "/admin/account").await;
    let proof = csrf_in(&html);
    let (status, offer) = post_form(&server, &me, "/admin/account/totp", &[("csrf", &proof)]).await;
    assert_eq!(status, 200, "{offer}");
    let uri = between(&offer, "id=\"totp-uri\">", "<").replace("&amp;", "&");
    let sealed = between(&offer, "name=\"sealed\" value=\"", "\"").to_owned();
    let totp = totp_rs::Totp::from_url(&uri).expect("the otpauth URI parses");
    assert!(
        sign_in(&server, SUPPORT, PASSWORD, "").await.is_ok(),
        "not on before it is confirmed"
    );

    let code = totp.generate_current().to_string();
    let wrong = format!("{:06}", (code.parse::<u32>().unwrap() + 1) % 1_000_000);
    let confirm = "/admin/account/totp/confirm";
    let fields = [
        ("sealed", sealed.as_str()),
        ("code", &wrong),
        ("csrf", &proof),
    ];
    let (status, refusal) = post_form(&server, &me, confirm, &fields).await;
    assert_eq!(status, 400, "{refusal}");
    assert!(
        sign_in(&server, SUPPORT, PASSWORD, "").await.is_ok(),
        "a wrong code turns nothing on"
    );
    let fields = [
        ("sealed", sealed.as_str()),
        ("code", &code),
        ("csrf", &proof),
    ];
    assert_eq!(post_form(&server, &me, confirm, &fields).await.0, 303);

    assert_eq!(
        sign_in(&server, SUPPORT, PASSWORD, "").await,
        Err(401),
        "a code is needed now"
    );
    assert_eq!(
        sign_in(&server, SUPPORT, PASSWORD, &code).await,
        Err(401),
        "the confirming code is used"
    );
    let (_, _, html) = page(&server, &me, "/admin/account").await;
    assert!(
        html.contains("TOTP is <strong>on</strong>") && !html.contains(&sealed),
        "the secret is shown once"
    );
    let disable = "/admin/account/totp/disable";
    let (status, _) = post_form(&server, &me, disable, &[("code", &code), ("csrf", &proof)]).await;
    assert_eq!(status, 400, "a used code does not turn it off");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let next = totp.generate(now + 30).to_string();
    assert_eq!(
        post_form(&server, &me, disable, &[("code", &next), ("csrf", &proof)])
            .await
            .0,
        303
    );
    assert!(
        sign_in(&server, SUPPORT, PASSWORD, "").await.is_ok(),
        "off again"
    );
    assert_eq!(logged(&server, SUPPORT), ["operator.totp", "operator.totp"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_sets_another_operators_password_and_support_may_not() {
    let server = server_with_operators().await;
    let support = admin(&server, SUPPORT).await;
    let owner = admin(&server, OWNER).await;
    let list = server.cli(&["operator", "list"]);
    let id_of = |email: &str| {
        let ops = list["operators"].as_array().unwrap();
        ops.iter().find(|o| o["email"] == email).unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let (support_id, owner_id) = (id_of(SUPPORT), id_of(OWNER));
    let (_, _, html) = page(&server, &support, "/admin/account").await;
    let proof = csrf_in(&html);
    let path = format!("/admin/operators/{owner_id}/password");
    let fields = [("password", "taken over horse"), ("csrf", &proof)];
    assert_eq!(post_form(&server, &support, &path, &fields).await.0, 403);
    assert!(
        sign_in(&server, OWNER, PASSWORD, "").await.is_ok(),
        "unchanged"
    );

    let (_, _, html) = page(&server, &owner, "/admin/operators").await;
    let set = format!("/admin/operators/{support_id}/password");
    assert!(html.contains(&set), "the owner has the form");
    let proof = csrf_in(&html);
    let short = [("password", "short"), ("csrf", &proof)];
    assert_eq!(post_form(&server, &owner, &set, &short).await.0, 400);
    let fields = [("password", "given by the boss"), ("csrf", &proof)];
    assert_eq!(post_form(&server, &owner, &set, &fields).await.0, 303);
    assert!(!signed_in(&server, &support).await, "their session ended");
    assert!(
        sign_in(&server, SUPPORT, "given by the boss", "")
            .await
            .is_ok()
    );
    assert_eq!(logged(&server, SUPPORT), ["operator.password"]);
}
