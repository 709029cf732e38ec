//! The sign-in under abuse, through the real binary (issue 18, findings 3, 4
//! and 6): a flood of sign-ins keeps the server's memory flat (password hashing
//! is bounded), huge forms are refused before they cost anything, and
//! concurrent wrong passwords for one email reach the password check at most
//! five times.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

const MIB: u64 = 1024 * 1024;
/// argon2id's memory for one password check (the crate's default parameters).
const HASH_MEMORY: u64 = 19 * MIB;

/// A sign-in page's double-submit pair. Anyone can fetch one and post any
/// number of forms with it: the sign-in CSRF is no defence against a flood.
#[derive(Clone)]
struct SignInForm {
    cookie: String,
    csrf: String,
}

async fn sign_in_form(server: &TestServer) -> SignInForm {
    let page = no_redirects()
        .get(server.url("/dashboard/login"))
        .send()
        .await
        .unwrap();
    let cookie = page.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let csrf = csrf_in(&page.text().await.unwrap());
    SignInForm { cookie, csrf }
}

/// Posts one sign-in; answers its status and body.
async fn post_sign_in(
    url: String,
    form: SignInForm,
    email: String,
    password: String,
) -> (u16, String) {
    let response = no_redirects()
        .post(url)
        .header("Cookie", form.cookie)
        .form(&[
            ("email", email.as_str()),
            ("password", &password),
            ("csrf", &form.csrf),
        ])
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response.headers().contains_key("retry-after");
    let body = response.text().await.unwrap();
    let busy_page =
        retry_after && body.contains("Too many sign-ins at once. Try again in a moment.");
    assert!(
        status != 503 || busy_page,
        "a 503 without Retry-After or its message"
    );
    (status, body)
}

/// Posts every (email, password) at once; answers the statuses.
async fn post_together(
    server: &TestServer,
    form: &SignInForm,
    attempts: Vec<(String, String)>,
) -> Vec<u16> {
    let mut posts = JoinSet::new();
    for (email, password) in attempts {
        let url = server.url("/dashboard/login");
        posts.spawn(post_sign_in(url, form.clone(), email, password));
    }
    let mut statuses = Vec::new();
    while let Some(done) = posts.join_next().await {
        statuses.push(done.unwrap().0);
    }
    statuses
}

/// The server's resident memory now and at its peak (VmRSS, VmHWM), in bytes.
fn memory(server: &TestServer) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// How many password checks the server runs at once (the README's bound:
/// twice the cores, at least 2), as the server sees this machine.
fn hashing_permits() -> u64 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    (2 * cores).max(2)
}

/// 48 sign-ins at once with random emails: the old code hashed them all at
/// once (+19 MiB each, kept: 34 → 948 MiB). Bounded, the peak grows by at
/// most the permits' hashes plus slack, and once the sign-ins stop none of
/// them stays.
#[tokio::test]
async fn a_sign_in_flood_keeps_the_servers_memory_flat() {
    let server = TestServer::spawn().await;
    let form = sign_in_form(&server).await;
    // One sign-in first, so what every sign-in shares (the unknown-user hash) exists.
    let warm = post_together(&server, &form, vec![(email(), "wrong password".into())]);
    assert_eq!(warm.await, [401]);
    let (before, _) = memory(&server);

    let flood = 48.max(6 * hashing_permits());
    let attempts = (0..flood).map(|_| (email(), "wrong password".into()));
    let statuses = post_together(&server, &form, attempts.collect()).await;

    assert!(
        statuses.iter().all(|s| [401, 503].contains(s)),
        "{statuses:?}"
    );
    assert!(statuses.contains(&401), "no sign-in was checked at all");
    let (ended, peak) = memory(&server);
    let bound = hashing_permits() * HASH_MEMORY + 40 * MIB;
    assert!(
        peak - before <= bound,
        "RSS {} MiB before the flood, peak {} MiB, {} MiB as it ended: more than {} MiB growth",
        before / MIB,
        peak / MIB,
        ended / MIB,
        bound / MIB
    );
    // Kept for the next check while they come, every 19 MiB is given back
    // within seconds of the last (the domain's `SPARE_IDLE`, 2 s, and its
    // releaser's 1 s look).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let after = loop {
        let (now, _) = memory(&server);
        if now.saturating_sub(before) < HASH_MEMORY || std::time::Instant::now() > deadline {
            break now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    assert!(
        after.saturating_sub(before) < HASH_MEMORY,
        "RSS {} MiB before the flood, {} MiB 10 s after: a check's memory stayed",
        before / MIB,
        after / MIB
    );
}

fn email() -> String {
    format!("flood-{}@example.com", rand_suffix())
}

/// 60 failed sign-ins with 1.9 MB emails: the old code took each form (2 MB
/// allowed) and kept every email in the throttle's table (+240 MiB here).
/// Now each is refused at the body limit and memory stays flat.
#[tokio::test]
async fn huge_sign_in_forms_are_refused_cheaply_and_memory_stays_flat() {
    let server = TestServer::spawn().await;
    let form = sign_in_form(&server).await;
    let url = server.url("/dashboard/login");
    let warm = post_sign_in(url.clone(), form.clone(), email(), "wrong".into());
    assert_eq!(warm.await.0, 401);
    let (before, _) = memory(&server);
    for i in 0..60 {
        let huge = format!("{i}{}@example.com", "x".repeat(1_900_000));
        let answer = post_raw(&server, &form, &huge).await;
        assert!(
            answer.starts_with("HTTP/1.1 413"),
            "{}",
            &answer[..answer.len().min(300)]
        );
        assert!(
            answer.contains("This form is too large (at most 16 KiB)."),
            "{answer}"
        );
    }
    let (after, _) = memory(&server);
    assert!(
        after < before + 16 * MIB,
        "RSS grew from {} to {} MiB",
        before / MIB,
        after / MIB
    );
}

/// A sign-in with this email, posted on a raw connection that reads the
/// answer while it writes: the server may answer from the headers and close
/// before taking the whole body (as curl or a browser would see it; an HTTP
/// client that stops at its first write error would not).
async fn post_raw(server: &TestServer, form: &SignInForm, email: &str) -> String {
    let body = format!("email={email}&password=wrong&csrf={}", form.csrf);
    let head = format!(
        "POST /dashboard/login HTTP/1.1\r\nHost: {}\r\nCookie: {}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        server.base,
        form.cookie,
        body.len()
    );
    let (mut reader, mut writer) = TcpStream::connect(&server.base).await.unwrap().into_split();
    let writing = tokio::spawn(async move {
        let _ = writer.write_all(head.as_bytes()).await;
        let _ = writer.write_all(body.as_bytes()).await;
        writer
    });
    let mut answer = Vec::new();
    // until the server closes the connection (or resets it: what came first is kept)
    let _ = reader.read_to_end(&mut answer).await;
    writing.abort();
    String::from_utf8_lossy(&answer).into_owned()
}

/// Under the body limit, an email over 254 characters or a password over
/// 1024 bytes is refused with a clear message, before any password check.
#[tokio::test]
async fn over_long_emails_and_passwords_are_refused_with_a_clear_message() {
    let server = TestServer::spawn().await;
    account_with_password(&server, "long@example.com", "10000");
    let form = sign_in_form(&server).await;
    let url = server.url("/dashboard/login");
    let long_email = format!("{}@example.com", "x".repeat(243));
    assert_eq!(long_email.chars().count(), 255);
    let (status, body) = post_sign_in(url.clone(), form.clone(), long_email, PASSWORD.into()).await;
    assert_eq!(status, 400);
    assert!(body.contains("at most 254 characters"), "{body}");

    let long_password = "p".repeat(1025);
    let (status, body) = post_sign_in(
        url.clone(),
        form.clone(),
        "long@example.com".into(),
        long_password,
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.contains("at most 1024 bytes"), "{body}");
    // neither counted as a failure: the right password still signs in
    assert!(sign_in(&server, "long@example.com", PASSWORD).await.is_ok());
}

/// 40 wrong passwords for one email at once: the old code read the lock
/// before the check and recorded failures after it, so all 40 were checked
/// (40 × 401). A slot is now reserved before the check: at most five reach
/// it, the rest are refused as locked out, and then so is the right password.
#[tokio::test]
async fn concurrent_wrong_passwords_reach_the_password_check_at_most_five_times() {
    let server = TestServer::spawn().await;
    account_with_password(&server, "target@example.com", "10000");
    let form = sign_in_form(&server).await;
    let attempts = (0..40).map(|i| ("target@example.com".into(), format!("guess number {i}")));
    let statuses = post_together(&server, &form, attempts.collect()).await;
    let count = |status| statuses.iter().filter(|&&s| s == status).count();
    let (checked, locked, busy) = (count(401), count(429), count(503));
    assert!(
        checked <= 5,
        "{checked} wrong passwords were checked: {statuses:?}"
    );
    // a slot whose check found no free permit (a loaded machine) is given back, not checked
    assert_eq!(checked + locked + busy, 40, "{statuses:?}");
    if checked == 5 {
        let right = sign_in(&server, "target@example.com", PASSWORD).await;
        assert_eq!(right, Err(429), "five failures lock the email");
    }
}
