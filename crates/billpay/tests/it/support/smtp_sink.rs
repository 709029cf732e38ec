//! A local SMTP sink: a small SMTP server on loopback (RFC 5321: EHLO/HELO,
//! AUTH PLAIN and LOGIN (RFC 4954, any credentials accepted and recorded),
//! MAIL, RCPT, DATA, RSET, NOOP, QUIT), in clear (no STARTTLS offered). It
//! records every message it accepts (envelope, headers, bodies decoded) and
//! can be told to refuse: the next N messages, or one recipient, with a
//! reply code (4xx or 5xx) at RCPT.
//!
//! ```ignore
//! let sink = SmtpSink::start().await;
//! // BILLPAY_SMTP_URL = sink.url()  (smtp://…?tls=none, loopback)
//! let mail = sink.wait_for(1, Duration::from_secs(10)).await;
//! ```

use base64::Engine;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

pub const USER: &str = "sink-user";
pub const PASSWORD: &str = "sink-password-0123";

/// One message the sink accepted.
#[derive(Debug, Clone)]
pub struct SunkMessage {
    /// `MAIL FROM`'s address.
    pub from: String,
    /// Every `RCPT TO` address.
    pub to: Vec<String>,
    /// The AUTH user the session gave, if any.
    pub auth_user: Option<String>,
    /// Every header (unfolded), in order.
    pub headers: Vec<(String, String)>,
    /// The text/plain body, decoded.
    pub text: Option<String>,
    /// The text/html body, decoded.
    pub html: Option<String>,
    /// The whole message as received (dot-stuffing removed).
    pub raw: String,
}

impl SunkMessage {
    /// The first header of this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let found = self
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name));
        found.map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    messages: Vec<SunkMessage>,
    /// (reply code, how many more messages get it).
    fail_next: Option<(u16, usize)>,
    /// Recipients always refused, with their reply code.
    refused: HashMap<String, u16>,
    /// Credentials seen (user, password), for tests that check them.
    logins: Vec<(String, String)>,
}

#[derive(Clone)]
pub struct SmtpSink {
    pub port: u16,
    state: Arc<Mutex<State>>,
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(session(stream, shared.clone()));
            }
        });
        SmtpSink { port, state }
    }

    /// `BILLPAY_SMTP_URL` for this sink, with the sink's credentials.
    pub fn url(&self) -> String {
        format!("smtp://{USER}:{PASSWORD}@127.0.0.1:{}?tls=none", self.port)
    }

    /// The environment that sends billpay's email here.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("BILLPAY_SMTP_URL", self.url()),
            (
                "BILLPAY_EMAIL_FROM",
                "Test Shop <no-reply@shop.example>".into(),
            ),
        ]
    }

    /// Every message accepted so far.
    pub fn messages(&self) -> Vec<SunkMessage> {
        self.state.lock().unwrap().messages.clone()
    }

    /// Every (user, password) an AUTH gave.
    pub fn logins(&self) -> Vec<(String, String)> {
        self.state.lock().unwrap().logins.clone()
    }

    /// The next `count` messages are refused at RCPT with `code` (e.g. 451, 550).
    pub fn fail_next(&self, count: usize, code: u16) {
        self.state.lock().unwrap().fail_next = Some((code, count));
    }

    /// `address` is always refused at RCPT with `code`.
    pub fn refuse(&self, address: &str, code: u16) {
        let mut state = self.state.lock().unwrap();
        state.refused.insert(address.to_ascii_lowercase(), code);
    }

    /// Waits until at least `count` messages were accepted (panics after `timeout`).
    pub async fn wait_for(&self, count: usize, timeout: Duration) -> Vec<SunkMessage> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let messages = self.messages();
            if messages.len() >= count {
                return messages;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the SMTP sink got {} messages, not {count}, within {timeout:?}",
                messages.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The RCPT reply for `address`: a refusal code, if one applies.
    fn refusal(&self, address: &str) -> Option<u16> {
        let mut state = self.state.lock().unwrap();
        if let Some(code) = state.refused.get(&address.to_ascii_lowercase()) {
            return Some(*code);
        }
        match &mut state.fail_next {
            Some((code, left)) if *left > 0 => {
                *left -= 1;
                Some(*code)
            }
            _ => None,
        }
    }
}

/// What one connection has said so far.
#[derive(Default)]
struct Envelope {
    from: Option<String>,
    to: Vec<String>,
    auth_user: Option<String>,
}

async fn session(stream: tokio::net::TcpStream, state: Arc<Mutex<State>>) {
    let sink = SmtpSink { port: 0, state };
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut envelope = Envelope::default();
    macro_rules! reply {
        ($($text:tt)*) => {
            if write.write_all(format!("{}\r\n", format!($($text)*)).as_bytes()).await.is_err() {
                return;
            }
        };
    }
    reply!("220 sink.test ESMTP ready");
    while let Ok(Some(line)) = lines.next_line().await {
        let upper = line.to_ascii_uppercase();
        let verb = upper.split_whitespace().next().unwrap_or("");
        match verb {
            "EHLO" => reply!(
                "250-sink.test\r\n250-AUTH PLAIN LOGIN\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n250 SIZE 10485760"
            ),
            "HELO" => reply!("250 sink.test"),
            "AUTH" => {
                let words: Vec<&str> = line.split_whitespace().collect();
                let login = match words.get(1).map(|m| m.to_ascii_uppercase()).as_deref() {
                    Some("PLAIN") => {
                        let initial = match words.get(2) {
                            Some(initial) => initial.to_string(),
                            None => {
                                reply!("334 ");
                                lines.next_line().await.ok().flatten().unwrap_or_default()
                            }
                        };
                        let decoded = decode64(&initial);
                        let mut parts = decoded.split('\0').skip(1);
                        let user = parts.next().unwrap_or_default().to_owned();
                        (user, parts.next().unwrap_or_default().to_owned())
                    }
                    Some("LOGIN") => {
                        reply!("334 VXNlcm5hbWU6");
                        let user =
                            decode64(&lines.next_line().await.ok().flatten().unwrap_or_default());
                        reply!("334 UGFzc3dvcmQ6");
                        let pass =
                            decode64(&lines.next_line().await.ok().flatten().unwrap_or_default());
                        (user, pass)
                    }
                    _ => {
                        reply!("504 5.5.4 mechanism not supported");
                        continue;
                    }
                };
                envelope.auth_user = Some(login.0.clone());
                sink.state.lock().unwrap().logins.push(login);
                reply!("235 2.7.0 Authentication successful");
            }
            "MAIL" => {
                envelope.from = Some(address_in(&line));
                envelope.to.clear();
                reply!("250 2.1.0 Ok");
            }
            "RCPT" => {
                let address = address_in(&line);
                match sink.refusal(&address) {
                    Some(code) if code >= 500 => reply!(
                        "{code} 5.1.1 <{address}>: Recipient address rejected: mailbox unavailable"
                    ),
                    Some(code) => reply!("{code} 4.3.0 <{address}>: try again later"),
                    None => {
                        envelope.to.push(address);
                        reply!("250 2.1.5 Ok");
                    }
                }
            }
            "DATA" => {
                if envelope.to.is_empty() {
                    reply!("554 5.5.1 No valid recipients");
                    continue;
                }
                reply!("354 End data with <CR><LF>.<CR><LF>");
                let mut raw = String::new();
                while let Ok(Some(data)) = lines.next_line().await {
                    if data == "." {
                        break;
                    }
                    raw.push_str(data.strip_prefix('.').unwrap_or(&data));
                    raw.push_str("\r\n");
                }
                let message = parse(&envelope, raw);
                let number = {
                    let mut state = sink.state.lock().unwrap();
                    state.messages.push(message);
                    state.messages.len()
                };
                envelope.from = None;
                envelope.to.clear();
                reply!("250 2.0.0 Ok: queued as SINK{number}");
            }
            "RSET" => {
                envelope.from = None;
                envelope.to.clear();
                reply!("250 2.0.0 Ok");
            }
            "NOOP" => reply!("250 2.0.0 Ok"),
            "QUIT" => {
                reply!("221 2.0.0 Bye");
                return;
            }
            _ => reply!("502 5.5.2 Error: command not recognized"),
        }
    }
}

/// The address between `<` and `>` of a MAIL or RCPT line.
fn address_in(line: &str) -> String {
    let start = line.find('<').map_or(0, |i| i + 1);
    let end = line[start..].find('>').map_or(line.len(), |i| start + i);
    line[start..end].to_owned()
}

fn decode64(text: &str) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A message as received: its headers, and its text and HTML bodies
/// (a single part, or the parts of a multipart body), decoded.
fn parse(envelope: &Envelope, raw: String) -> SunkMessage {
    let (headers, body) = split_part(&raw);
    let mut message = SunkMessage {
        from: envelope.from.clone().unwrap_or_default(),
        to: envelope.to.clone(),
        auth_user: envelope.auth_user.clone(),
        headers,
        text: None,
        html: None,
        raw: String::new(),
    };
    collect_bodies(&message.headers.clone(), body, &mut message);
    message.raw = raw;
    message
}

/// Headers (unfolded) and the body of a part.
fn split_part(part: &str) -> (Vec<(String, String)>, &str) {
    let (head, body) = part.split_once("\r\n\r\n").unwrap_or((part, ""));
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in head.split("\r\n") {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = headers.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    (headers, body)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    let found = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name));
    found.map_or("", |(_, v)| v.as_str())
}

fn collect_bodies(headers: &[(String, String)], body: &str, into: &mut SunkMessage) {
    let content_type = header(headers, "Content-Type").to_ascii_lowercase();
    if content_type.starts_with("multipart/") {
        let original = header(headers, "Content-Type");
        let Some(boundary) = original.split(';').find_map(|p| {
            let p = p.trim();
            let value = p
                .strip_prefix("boundary=")
                .or_else(|| p.strip_prefix("BOUNDARY="))?;
            Some(value.trim_matches('"').to_owned())
        }) else {
            return;
        };
        let delimiter = format!("--{boundary}");
        for part in body.split(delimiter.as_str()).skip(1) {
            if part.starts_with("--") {
                break;
            }
            let part = part.strip_prefix("\r\n").unwrap_or(part);
            let (part_headers, part_body) = split_part(part);
            collect_bodies(&part_headers, part_body, into);
        }
        return;
    }
    let decoded = decode_body(header(headers, "Content-Transfer-Encoding"), body);
    if content_type.starts_with("text/html") {
        into.html = Some(decoded);
    } else if content_type.is_empty() || content_type.starts_with("text/plain") {
        into.text = Some(decoded);
    }
}

/// A body decoded, its line ends written `\n` (as the text was given).
fn decode_body(encoding: &str, body: &str) -> String {
    let body = body.trim_end_matches("\r\n");
    let decoded = match encoding.to_ascii_lowercase().as_str() {
        "base64" => decode64(&body.replace("\r\n", "")),
        "quoted-printable" => quoted_printable(body),
        _ => body.to_owned(),
    };
    decoded.replace("\r\n", "\n")
}

/// RFC 2045 6.7: `=XX` is a byte, `=` at a line's end joins it to the next.
fn quoted_printable(body: &str) -> String {
    let joined = body.replace("=\r\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
