//! One canonical address (hardening finding 2): look-alike spellings of a
//! customer's address open no second account, over HTTP against the real
//! server, and the sign-up form still answers alike whether or not the
//! address has an account.

use super::sign_up::{OPEN, notices_to, text_rows};
use super::*;

/// The sign-up form posted from its own client address (the open forms are
/// counted per client: each post here comes from a fresh one).
async fn sign_up(server: &TestServer, email: &str) -> (u16, String) {
    static CLIENT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = CLIENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let client = format!("203.0.{}.{}", n / 250, n % 250 + 1);
    let http = no_redirects();
    let shown = http
        .get(server.url("/dashboard/login"))
        .send()
        .await
        .unwrap();
    let cookie = shown.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let csrf = csrf_in(&shown.text().await.unwrap());
    let form = [
        ("name", "Ada"),
        ("email", email),
        ("phone", "0803 123 4567"),
        ("password", PASSWORD),
        ("password_again", PASSWORD),
        ("csrf", &csrf),
    ];
    let answer = http
        .post(server.url("/dashboard/signup"))
        .header("Cookie", cookie)
        .header("X-Forwarded-For", client)
        .form(&form)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

/// How many accounts there are.
async fn accounts(server: &TestServer) -> usize {
    let sql = "SELECT CAST(count(*) AS TEXT) FROM accounts WHERE email <> $1";
    let rows = text_rows(server, sql, "").await;
    rows[0][0].as_deref().unwrap().parse().unwrap()
}

/// The addresses stored for accounts, as stored.
async fn stored(server: &TestServer) -> Vec<String> {
    let sql = "SELECT email FROM accounts WHERE email <> $1 ORDER BY email";
    let rows = text_rows(server, sql, "").await;
    rows.into_iter().map(|r| r[0].clone().unwrap()).collect()
}

/// A page with its CSRF proof and the local parts given blanked out.
fn comparable(html: &str, locals: &[&str]) -> String {
    let mut rest = locals
        .iter()
        .fold(html.to_owned(), |h, l| h.replace(l, "LOCAL"));
    let mut out = String::new();
    while let Some(at) = rest.find("name=\"csrf\" value=\"") {
        let end = (at + 19 + 64).min(rest.len());
        out.push_str(&rest[..at + 19]);
        rest = rest[end..].to_owned();
    }
    out + &rest
}

/// An address spelled around a local part.
type Spelling = fn(&str) -> String;

/// `text` in full-width letters, digits and signs (U+FF01…).
fn full_width(text: &str) -> String {
    let wide = |c: char| char::from_u32(c as u32 + 0xFEE0).unwrap();
    text.chars()
        .map(|c| if c.is_ascii_graphic() { wide(c) } else { c })
        .collect()
}

#[tokio::test]
async fn look_alike_spellings_of_an_address_open_no_second_account() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let suffix = rand_suffix();
    let (taken, fresh) = (format!("ada-{suffix}"), format!("fresh-{suffix}"));
    let address = |local: &str| format!("{local}@example.com");
    let (status, _) = sign_up(&server, &address(&taken)).await;
    assert_eq!(status, 200);
    assert_eq!(accounts(&server).await, 1);

    // Refused with a sentence, alike for a taken and a fresh address.
    let refused: [(Spelling, &str); 4] = [
        (
            |l: &str| format!("x<{l}@example.com>"),
            "without a name or angle brackets",
        ),
        (
            |l: &str| format!("\"{l}\"@example.com"),
            "without quotation marks",
        ),
        (
            |l: &str| format!("{l}@example.com\u{200B}"),
            "invisible or control character",
        ),
        (
            |l: &str| format!("{l}\u{200B}@example.com"),
            "invisible or control character",
        ),
    ];
    for (spelling, sentence) in refused {
        let (status, page) = sign_up(&server, &spelling(&taken)).await;
        assert_eq!(status, 422, "{}", spelling(&taken));
        assert!(page.contains(sentence), "{sentence}: {page}");
        let (fresh_status, fresh_page) = sign_up(&server, &spelling(&fresh)).await;
        assert_eq!(fresh_status, 422);
        assert_eq!(
            comparable(&page, &[&taken]),
            comparable(&fresh_page, &[&fresh]),
            "the answer does not tell whether {} has an account",
            spelling(&taken)
        );
    }

    // The same address in other letters: the code page, as for a fresh
    // address, and the owner told; still one account.
    let (status, fresh_page) = sign_up(&server, &address(&fresh.to_uppercase())).await;
    assert_eq!(status, 200);
    for spelling in [
        address(&taken.to_uppercase()),
        address(&full_width(&taken)),
        format!("  {}  ", address(&taken)),
    ] {
        let (status, page) = sign_up(&server, &spelling).await;
        assert_eq!(status, 200, "{spelling}");
        assert_eq!(
            comparable(&page, &[&taken]),
            comparable(&fresh_page, &[&fresh]),
            "{spelling}: the answer does not tell"
        );
    }
    let told = notices_to(&server, &address(&taken)).await;
    assert!(
        told.iter().any(|(kind, _)| kind == "account_exists"),
        "{told:?}"
    );
    assert_eq!(
        stored(&server).await,
        [address(&taken), address(&fresh)],
        "one account each, stored canonical"
    );
}

#[tokio::test]
async fn an_accented_capital_and_its_small_letter_are_one_account() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let suffix = rand_suffix();
    let (status, _) = sign_up(&server, &format!("ÉMILE-{suffix}@example.com")).await;
    assert_eq!(status, 200);
    let (status, _) = sign_up(&server, &format!("émile-{suffix}@example.com")).await;
    assert_eq!(status, 200);
    // A decomposed é (e + combining acute) too.
    let (status, _) = sign_up(&server, &format!("e\u{301}mile-{suffix}@example.com")).await;
    assert_eq!(status, 200);
    assert_eq!(
        stored(&server).await,
        [format!("émile-{suffix}@example.com")]
    );
}

#[tokio::test]
async fn the_cli_refuses_a_display_name_and_stores_the_canonical_address() {
    let server = TestServer::spawn().await;
    let suffix = rand_suffix();
    let (ok, refused) = server.cli_result(&[
        "account",
        "create",
        "--name",
        "Ada",
        "--email",
        &format!("x<ada-{suffix}@example.com>"),
    ]);
    assert!(!ok);
    let message = refused["error"].as_str().unwrap();
    assert!(
        message.contains("without a name or angle brackets"),
        "{refused}"
    );
    let created = server.cli(&[
        "account",
        "create",
        "--name",
        "Ada",
        "--email",
        &format!("ADA-{suffix}@Example.COM"),
    ]);
    assert_eq!(created["email"], format!("ada-{suffix}@example.com"));
    let (ok, again) = server.cli_result(&[
        "account",
        "create",
        "--name",
        "Ada",
        "--email",
        &format!("ａｄａ-{suffix}@example.com"),
    ]);
    assert!(!ok, "the full-width spelling is the same address: {again}");
    let message = again["error"].as_str().unwrap();
    assert!(
        message.contains(&format!("ada-{suffix}@example.com")),
        "{again}"
    );
}
