//! A borrowed console session cannot take the operator over (issue 27,
//! finding 2), over HTTP: replacing TOTP that is on needs a current code of
//! the old secret; the current password and the TOTP-off code are checked
//! within the operator's one budget of failed checks (the sign-in's), so
//! guessing stops after five; and a sign-in with a right code but a wrong
//! password uses no code up.

use super::account::{between, logged, sign_in};
use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::csrf_in;

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Turns TOTP on for the session's operator; answers its generator.
async fn turn_totp_on(server: &TestServer, cookie: &str, proof: &str) -> totp_rs::Totp {
    let (status, offer) =
        post_form(server, cookie, "/admin/account/totp", &[("csrf", proof)]).await;
    assert_eq!(status, 200, "{offer}");
    let uri = between(&offer, "id=\"totp-uri\">", "<").replace("&amp;", "&");
    let sealed = between(&offer, "name=\"sealed\" value=\"", "\"").to_owned();
    let totp = totp_rs::Totp::from_url(&uri).expect("the otpauth URI parses");
    let code = totp.generate_current().to_string();
    let fields = [
        ("sealed", sealed.as_str()),
        ("code", &code),
        ("csrf", proof),
    ];
    let (status, answer) = post_form(server, cookie, "/admin/account/totp/confirm", &fields).await;
    assert_eq!(status, 303, "{answer}");
    totp
}

/// A code of `totp` for the next time step (unused: the current one may be).
fn next_code(totp: &totp_rs::Totp) -> String {
    totp.generate(unix_now() + 30).to_string()
}

/// A code that is not `code`.
fn other_than(code: &str) -> String {
    format!("{:06}", (code.parse::<u32>().unwrap() + 1) % 1_000_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_cannot_replace_totp_that_is_on_without_a_code_of_the_old_secret() {
    let server = server_with_operators().await;
    let me = admin(&server, SUPPORT).await;
    let (_, _, html) = page(&server, &me, "/admin/account").await;
    let proof = csrf_in(&html);
    let old = turn_totp_on(&server, &me, &proof).await;

    // Whoever holds the session asks for a new secret and confirms it with
    // a code of that new secret only.
    let (status, offer) = post_form(&server, &me, "/admin/account/totp", &[("csrf", &proof)]).await;
    assert_eq!(status, 200, "{offer}");
    assert!(
        offer.contains("name=\"current_code\""),
        "the form asks for a code of the secret it replaces"
    );
    let uri = between(&offer, "id=\"totp-uri\">", "<").replace("&amp;", "&");
    let sealed = between(&offer, "name=\"sealed\" value=\"", "\"").to_owned();
    let new = totp_rs::Totp::from_url(&uri).unwrap();
    let new_code = new.generate_current().to_string();
    let confirm = "/admin/account/totp/confirm";
    let without = [
        ("sealed", sealed.as_str()),
        ("code", &new_code),
        ("csrf", &proof),
    ];
    let (status, refusal) = post_form(&server, &me, confirm, &without).await;
    assert_eq!(status, 400, "replaced without the old factor: {refusal}");
    assert!(
        refusal.contains("current_code is not your current code"),
        "{refusal}"
    );
    let wrong_old = other_than(&next_code(&old));
    let guessed = [
        ("sealed", sealed.as_str()),
        ("code", &new_code),
        ("current_code", &wrong_old),
        ("csrf", &proof),
    ];
    assert_eq!(post_form(&server, &me, confirm, &guessed).await.0, 400);

    // With a current code of the old secret (so it was still in place) the
    // owner of the app replaces it.
    let owner_code = next_code(&old);
    let fields = [
        ("sealed", sealed.as_str()),
        ("code", &new_code),
        ("current_code", &owner_code),
        ("csrf", &proof),
    ];
    let (status, answer) = post_form(&server, &me, confirm, &fields).await;
    assert_eq!(status, 303, "{answer}");
    assert_eq!(logged(&server, SUPPORT), ["operator.totp", "operator.totp"]);
    assert_eq!(
        sign_in(&server, SUPPORT, PASSWORD, &owner_code).await,
        Err(401),
        "the old secret's code was used up"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_current_password_cannot_be_guessed_from_a_session() {
    let server = server_with_operators().await;
    let me = admin(&server, SUPPORT).await;
    let (_, _, html) = page(&server, &me, "/admin/account").await;
    let proof = csrf_in(&html);
    let path = "/admin/account/password";
    let new = "a brand new horse";
    let guess = |current: &'static str| {
        [
            ("current_password", current),
            ("new_password", new),
            ("confirm_password", new),
        ]
    };
    for _ in 0..5 {
        let mut fields = guess("a wrong guess").to_vec();
        fields.push(("csrf", &proof));
        assert_eq!(post_form(&server, &me, path, &fields).await.0, 400);
    }
    let mut fields = guess(PASSWORD).to_vec();
    fields.push(("csrf", &proof));
    let (status, refusal) = post_form(&server, &me, path, &fields).await;
    assert_eq!(
        status, 429,
        "the right password after five guesses: {refusal}"
    );
    assert!(refusal.contains("too many failed attempts"), "{refusal}");
    assert_eq!(
        sign_in(&server, SUPPORT, PASSWORD, "").await,
        Err(429),
        "sign-in shares the operator's budget"
    );
    assert_eq!(
        sign_in(&server, SUPPORT, new, "").await,
        Err(429),
        "and the password did not change"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_code_that_turns_totp_off_cannot_be_guessed() {
    let server = server_with_operators().await;
    let me = admin(&server, SUPPORT).await;
    let (_, _, html) = page(&server, &me, "/admin/account").await;
    let proof = csrf_in(&html);
    let totp = turn_totp_on(&server, &me, &proof).await;
    let disable = "/admin/account/totp/disable";
    let right = next_code(&totp);
    let wrong = other_than(&right);
    for _ in 0..5 {
        let fields = [("code", wrong.as_str()), ("csrf", &proof)];
        assert_eq!(post_form(&server, &me, disable, &fields).await.0, 400);
    }
    let fields = [("code", right.as_str()), ("csrf", &proof)];
    let (status, refusal) = post_form(&server, &me, disable, &fields).await;
    assert_eq!(status, 429, "the right code after five guesses: {refusal}");
    let (_, _, html) = page(&server, &me, "/admin/account").await;
    assert!(html.contains("TOTP is <strong>on</strong>"), "still on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_right_code_with_a_wrong_password_uses_no_code_up() {
    let server = server_with_operators().await;
    let me = admin(&server, SUPPORT).await;
    let (_, _, html) = page(&server, &me, "/admin/account").await;
    let proof = csrf_in(&html);
    let totp = turn_totp_on(&server, &me, &proof).await;
    let code = next_code(&totp);
    assert_eq!(
        sign_in(&server, SUPPORT, "a wrong password", &code).await,
        Err(401)
    );
    let signed = sign_in(&server, SUPPORT, PASSWORD, &code).await;
    assert!(signed.is_ok(), "the code is still good: {signed:?}");
    assert_eq!(
        sign_in(&server, SUPPORT, PASSWORD, &code).await,
        Err(401),
        "and used once"
    );
}
