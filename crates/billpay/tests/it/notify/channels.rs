//! The SMTP and Termii channels, built from settings as `serve` builds them,
//! sending to the test kit's SMTP sink and fake Termii.

use crate::support::smtp_sink::{self, SmtpSink};
use crate::support::termii::{self, AnswerForm, FakeTermii};
use billpay_notify::registry::{ChannelSections, channels};
use billpay_notify::{Channel, ChannelKind, Message, SendError};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn email_channel(url: &str) -> Arc<dyn Channel> {
    let mut sections = ChannelSections::default();
    sections.smtp.url = Some(url.into());
    sections.smtp.timeout_secs = 5;
    sections.email.from = Some("Test Shop <no-reply@shop.example>".into());
    assert_eq!(
        billpay_notify::registry::problems(&sections),
        Vec::<String>::new()
    );
    let built = channels(&sections).unwrap();
    built.email.unwrap()
}

fn sms_channel(fake: &FakeTermii) -> Arc<dyn Channel> {
    let mut sections = ChannelSections::default();
    sections.termii.api_key = Some(termii::API_KEY.into());
    sections.termii.sender_id = Some(termii::SENDER_ID.into());
    sections.termii.base_url = fake.base.clone();
    let built = channels(&sections).unwrap();
    built.sms.unwrap()
}

fn message(id: &str, to: &str, html: Option<&str>) -> Message {
    Message {
        id: id.into(),
        to: to.into(),
        subject: "Your wallet was credited ₦5,000.00".into(),
        text: "Hello Ada,\n\nWe credited ₦5,000.00 to your wallet. New balance: ₦12,500.00.\n"
            .into(),
        html: html.map(str::to_owned),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_email_reaches_the_server_once_with_its_headers_and_both_bodies() {
    let sink = SmtpSink::start().await;
    let channel = email_channel(&sink.url());
    assert_eq!(
        (channel.kind(), channel.name()),
        (ChannelKind::Email, "smtp")
    );
    let html = "<p>We credited <b>₦5,000.00</b> to your wallet.</p>";
    let sent = channel
        .send(&message("ntc-41", "ada@example.com", Some(html)))
        .await
        .unwrap();
    assert!(sent.provider_id.unwrap().contains("SINK1"));
    let mail = sink.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(mail.len(), 1);
    let mail = &mail[0];
    assert_eq!(mail.from, "no-reply@shop.example");
    assert_eq!(mail.to, vec!["ada@example.com".to_owned()]);
    assert_eq!(mail.auth_user.as_deref(), Some(smtp_sink::USER));
    assert_eq!(
        sink.logins(),
        vec![(smtp_sink::USER.to_owned(), smtp_sink::PASSWORD.to_owned())]
    );
    assert_eq!(mail.header("Message-ID"), Some("<ntc-41@shop.example>"));
    assert!(
        mail.header("From")
            .unwrap()
            .contains("no-reply@shop.example")
    );
    assert_eq!(mail.header("To"), Some("ada@example.com"));
    assert!(
        mail.header("Content-Type")
            .unwrap()
            .starts_with("multipart/alternative"),
        "{:?}",
        mail.headers
    );
    // The subject is encoded (₦ is not ASCII); the bodies decode to what was sent.
    assert!(mail.header("Subject").is_some());
    assert_eq!(
        mail.text.as_deref().map(str::trim_end),
        Some(message("", "", None).text.trim_end())
    );
    assert_eq!(mail.html.as_deref().map(str::trim_end), Some(html));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_email_has_one_plain_body_and_a_retry_keeps_its_message_id() {
    let sink = SmtpSink::start().await;
    let channel = email_channel(&sink.url());
    let once = message("ntc-7", "bola@example.com", None);
    channel.send(&once).await.unwrap();
    channel.send(&once).await.unwrap();
    let mail = sink.wait_for(2, Duration::from_secs(5)).await;
    for copy in &mail {
        assert_eq!(copy.header("Message-ID"), Some("<ntc-7@shop.example>"));
        assert!(
            copy.header("Content-Type")
                .unwrap()
                .starts_with("text/plain")
        );
        assert!(
            copy.text
                .as_deref()
                .unwrap()
                .contains("New balance: ₦12,500.00")
        );
        assert_eq!(copy.html, None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_4xx_is_transient_and_a_refused_recipient_permanent() {
    let sink = SmtpSink::start().await;
    let channel = email_channel(&sink.url());
    sink.fail_next(1, 451);
    let first = channel
        .send(&message("ntc-1", "ada@example.com", None))
        .await;
    assert!(
        matches!(&first, Err(SendError::Transient(e)) if e.contains("451")),
        "{first:?}"
    );
    channel
        .send(&message("ntc-1", "ada@example.com", None))
        .await
        .unwrap();
    sink.refuse("gone@example.com", 550);
    let gone = channel
        .send(&message("ntc-2", "gone@example.com", None))
        .await;
    assert!(
        matches!(&gone, Err(SendError::Permanent(e)) if e.contains("550")),
        "{gone:?}"
    );
    let mail = sink.messages();
    assert_eq!(mail.len(), 1, "only the retried message was accepted");
    assert_eq!(mail[0].to, vec!["ada@example.com".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_down_is_transient_and_an_address_that_is_none_permanent() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let channel = email_channel(&format!("smtp://127.0.0.1:{closed}?tls=none"));
    let down = channel
        .send(&message("ntc-3", "ada@example.com", None))
        .await;
    assert!(matches!(down, Err(SendError::Transient(_))), "{down:?}");
    let sink = SmtpSink::start().await;
    let channel = email_channel(&sink.url());
    let bad = channel
        .send(&message("ntc-4", "not an address", None))
        .await;
    assert!(matches!(bad, Err(SendError::Permanent(_))), "{bad:?}");
    assert!(sink.messages().is_empty());
}

/// `smtp://` requires STARTTLS: a server that does not offer it (the sink)
/// is never sent the message nor the password in clear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starttls_is_required_and_a_server_without_it_gets_nothing() {
    let sink = SmtpSink::start().await;
    let url = format!(
        "smtp://{}:{}@127.0.0.1:{}",
        smtp_sink::USER,
        smtp_sink::PASSWORD,
        sink.port
    );
    let channel = email_channel(&url);
    let refused = channel
        .send(&message("ntc-5", "ada@example.com", None))
        .await;
    let Err(SendError::Transient(error)) = refused else {
        panic!("sent without STARTTLS: {refused:?}");
    };
    assert!(error.contains("STARTTLS"), "{error}");
    assert!(!error.contains(smtp_sink::PASSWORD), "{error}");
    assert!(sink.logins().is_empty(), "the password went out in clear");
    assert!(sink.messages().is_empty());
    // smtps:// speaks TLS from the first byte: the plain sink cannot answer it.
    let implicit = email_channel(&format!("smtps://127.0.0.1:{}", sink.port));
    let refused = implicit
        .send(&message("ntc-6", "ada@example.com", None))
        .await;
    assert!(
        matches!(refused, Err(SendError::Transient(_))),
        "{refused:?}"
    );
    assert!(sink.messages().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sms_goes_to_termii_on_the_dnd_route_in_both_answer_forms() {
    let fake = FakeTermii::start().await;
    let channel = sms_channel(&fake);
    assert_eq!(
        (channel.kind(), channel.name()),
        (ChannelKind::Sms, "termii")
    );
    let sms = Message {
        id: "ntc-9".into(),
        to: "08031234567".into(),
        subject: String::new(),
        text: "Your billpay code is 482913".into(),
        html: None,
    };
    let documented = channel.send(&sms).await.unwrap();
    fake.answer_in(AnswerForm::Numeric);
    let numeric = channel.send(&sms).await.unwrap();
    assert_eq!(
        documented.provider_id.as_deref(),
        Some("9122821270554876001")
    );
    assert_eq!(numeric.provider_id.as_deref(), Some("9122821270554876002"));
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0],
        json!({"api_key": termii::API_KEY, "to": "2348031234567", "from": termii::SENDER_ID,
               "sms": "Your billpay code is 482913", "type": "plain", "channel": "dnd"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn termii_refusals_are_permanent_and_its_outages_transient() {
    let fake = FakeTermii::start().await;
    let channel = sms_channel(&fake);
    let sms = |to: &str| Message {
        id: "ntc-10".into(),
        to: to.into(),
        subject: String::new(),
        text: "Your purchase failed and ₦500.00 was refunded".into(),
        html: None,
    };
    fake.fail_next(1, 500, json!({"message": "Internal Server Error"}));
    let outage = channel.send(&sms("2348031234567")).await;
    assert!(
        matches!(&outage, Err(SendError::Transient(e)) if e.contains("500")),
        "{outage:?}"
    );
    fake.fail_next(1, 400, json!({"message": "Phone number is invalid"}));
    let refused = channel.send(&sms("2348031234567")).await;
    assert_eq!(
        refused,
        Err(SendError::Permanent(
            "Termii refused the message: Phone number is invalid".into()
        ))
    );
    channel.send(&sms("2348031234567")).await.unwrap();
    let not_a_phone = channel.send(&sms("12345")).await;
    assert!(
        matches!(not_a_phone, Err(SendError::Permanent(_))),
        "{not_a_phone:?}"
    );
    assert_eq!(
        fake.requests().len(),
        3,
        "a number that is none is not sent"
    );

    let mut sections = ChannelSections::default();
    sections.termii.api_key = Some("TL-wrong-key".into());
    sections.termii.sender_id = Some("Unknown".into());
    sections.termii.base_url = fake.base.clone();
    let wrong_key = channels(&sections).unwrap().sms.unwrap();
    let refused = wrong_key.send(&sms("2348031234567")).await;
    let Err(SendError::Transient(error)) = refused else {
        panic!("a refused key must be retried once fixed: {refused:?}");
    };
    assert!(
        error.contains("401") && error.contains("BILLPAY_TERMII_API_KEY"),
        "{error}"
    );
    assert!(!error.contains("TL-wrong-key"), "{error}");
}
