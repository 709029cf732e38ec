//! The shop's account-care journeys read from real email (issue 30's "the
//! shop's verification and reset journeys use the sink"): `serve` sends
//! through SMTP to the test kit's sink, and each step takes what the email
//! says — sign up → the code in the email → verified and signed in; forgot
//! password → the link in the email → a new password → every old session
//! ended, the old password dead, the link used once.

use super::pin_reset::{link_in, mail_to, open_form, server_mailing};
use super::*;
use crate::support::smtp_sink::SmtpSink;

const NEW_PASSWORD: &str = "a brand new passphrase";

/// The first run of six digits in `text`: the verification code.
fn six_digits(text: &str) -> String {
    let bytes = text.as_bytes();
    let at = (0..bytes.len().saturating_sub(5))
        .find(|&i| {
            bytes[i..i + 6].iter().all(u8::is_ascii_digit)
                && (i == 0 || !bytes[i - 1].is_ascii_digit())
                && bytes.get(i + 6).is_none_or(|b| !b.is_ascii_digit())
        })
        .unwrap_or_else(|| panic!("no code in {text}"));
    text[at..at + 6].to_owned()
}

/// The session cookie a 303 sets.
fn session_of(response: &reqwest::Response) -> String {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .find(|c| c.starts_with("billpay_session="))
        .expect("a session cookie")
}

async fn get_page(server: &TestServer, path: &str, cookie: &str) -> reqwest::Response {
    no_redirects()
        .get(server.url(path))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_up_and_a_password_reset_go_by_the_emails_themselves() {
    let sink = SmtpSink::start().await;
    let env = [
        ("BILLPAY_SIGNUP_MODE", "open"),
        ("BILLPAY_BUSINESS_NAME", "Ada Data"),
        ("BILLPAY_SUPPORT_CONTACT", "help@ada.example"),
    ];
    let server = server_mailing(&sink, &env).await;
    let email = format!("amaka-{}@example.com", rand_suffix());
    let applicant = [
        ("name", "Amaka Obi"),
        ("email", email.as_str()),
        ("phone", "0803 123 4567"),
        ("password", PASSWORD),
        ("password_again", PASSWORD),
    ];
    let signed_up = open_form(&server, "/dashboard/signup", &applicant).await;
    assert!(signed_up.status().is_success(), "{}", signed_up.status());

    // the code, from the email itself
    let mail = mail_to(&sink, &email, "verification code", 1).await;
    assert_eq!(mail.len(), 1);
    let text = mail[0].text.clone().unwrap();
    assert!(mail[0].from.ends_with("@shop.example"), "{}", mail[0].from);
    assert!(text.contains("Hello Amaka Obi"), "{text}");
    assert!(text.contains("Ada Data") && text.contains("help@ada.example"));
    assert!(!text.contains(PASSWORD), "{text}");
    let code = six_digits(&text);
    let verify_path = format!("/dashboard/verify?email={email}");
    let verified = open_form(&server, &verify_path, &[("email", &email), ("code", &code)]).await;
    assert_eq!(verified.status(), 303, "the right code signs the person in");
    let session = session_of(&verified);
    let account = get_page(&server, "/dashboard/account", &session).await;
    let html = account.text().await.unwrap();
    assert!(html.contains("id=\"email-state\">verified<"), "{html}");

    // a second device, to see it signed out by the reset
    let elsewhere = sign_in(&server, &email, PASSWORD).await.unwrap();
    let forgot = open_form(&server, "/dashboard/forgot", &[("email", &email)]).await;
    assert_eq!(forgot.status(), 200);
    let mail = mail_to(&sink, &email, "Reset your Ada Data password", 1).await;
    assert_eq!(mail.len(), 1);
    let link = link_in(&mail[0], "/dashboard/reset/");
    let form = no_redirects().get(server.url(&link)).send().await.unwrap();
    assert_eq!(form.status(), 200);
    let fields = [("password", NEW_PASSWORD), ("password_again", NEW_PASSWORD)];
    let reset = open_form(&server, &link, &fields).await;
    assert_eq!(reset.status(), 303);
    let to = reset.headers()["location"].to_str().unwrap();
    assert_eq!(to, "/dashboard/login?done=password-reset");

    for old in [&session, &elsewhere] {
        let page = get_page(&server, "/dashboard", old).await;
        assert_eq!(page.status(), 303, "every old session ended");
    }
    assert_eq!(sign_in(&server, &email, PASSWORD).await, Err(401));
    assert!(sign_in(&server, &email, NEW_PASSWORD).await.is_ok());
    let again = no_redirects().get(server.url(&link)).send().await.unwrap();
    assert_eq!(again.status(), 410, "the link works once");
    assert_eq!(sink.messages().len(), 2, "nothing else was sent");
}
