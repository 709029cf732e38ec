//! One webhook delivery attempt over HTTP.

use std::error::Error;
use std::fmt;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use reqwest::redirect::Policy;
use url::{Host, Url};

use crate::guard::{GuardedResolver, LookupFailed, Refused};
use crate::signature::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use crate::webhook_url;

/// `User-Agent` sent with every webhook: `billpay-webhooks/<crate version>`.
pub const USER_AGENT: &str = concat!("billpay-webhooks/", env!("CARGO_PKG_VERSION"));

/// How many bytes of the receiver's answer are kept in
/// [`DeliveryOutcome::response_excerpt`].
const EXCERPT_LEN: usize = 512;

/// Settings of a [`DeliveryClient`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryConfig {
    /// Total time allowed for one attempt, from DNS lookup to the end of the
    /// (excerpt of the) response. Default 10 s, as the spec promises
    /// receivers.
    pub timeout: Duration,
    /// Time allowed to establish the TCP connection. Default 5 s.
    pub connect_timeout: Duration,
    /// Allow loopback, private, link-local and other non-public targets
    /// (see [`forbidden_reason`](crate::forbidden_reason)). Default `false`;
    /// meant for tests and for self-hosters whose receivers are on their
    /// own network.
    pub allow_private: bool,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            allow_private: false,
        }
    }
}

/// One webhook to send.
#[derive(Clone, Copy)]
pub struct DeliveryRequest<'a> {
    /// The receiver's URL (see [`validate_url`](crate::validate_url)).
    pub url: &'a str,
    /// The JSON body, sent byte for byte.
    pub body: &'a [u8],
    /// The webhook secret if signing is enabled on the key: the
    /// `X-Service-Timestamp` and `X-Service-Signature` headers are then
    /// added. `None`: neither header is sent.
    pub secret: Option<&'a str>,
}

impl fmt::Debug for DeliveryRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeliveryRequest")
            .field("url", &self.url)
            .field("body_len", &self.body.len())
            .field("secret", &self.secret.map(|_| "<redacted>"))
            .finish()
    }
}

/// The result of one delivery attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryOutcome {
    /// `true` only if the receiver answered with a 2xx status.
    pub delivered: bool,
    /// The receiver's status code, if it answered at all.
    pub http_status: Option<u16>,
    /// A short human reason when not delivered, e.g. `"HTTP 500"`,
    /// `"timed out after 10s"`, `"connection refused"`,
    /// `"redirects are not followed (HTTP 302)"` or
    /// `"refused: 127.0.0.1 is a loopback address"`. `None` when delivered.
    pub error: Option<String>,
    /// Wall time of the attempt, in milliseconds.
    pub latency_ms: u64,
    /// The first 512 bytes of the response body, as lossy UTF-8 (empty if
    /// there was no response).
    pub response_excerpt: String,
    /// The `X-Service-Timestamp` value of a signed attempt (Unix seconds).
    /// `None` if unsigned, or if the attempt was rejected before a request
    /// was built (invalid URL, or an IP-literal host that is refused).
    pub signed_at: Option<i64>,
}

/// Sends webhooks. Build it once and share it: it holds a connection pool.
///
/// * Redirects are never followed (a 3xx answer is a failure).
/// * Proxies from the environment (`HTTP_PROXY`, ...) are ignored, so that
///   the private-address guard sees the real target.
/// * Unless [`DeliveryConfig::allow_private`] is set, targets that are not
///   public addresses are refused; host names are checked after DNS
///   resolution, on every address they resolve to, by the resolver the
///   connection is made with (so DNS rebinding cannot bypass the check).
#[derive(Debug, Clone)]
pub struct DeliveryClient {
    client: reqwest::Client,
    config: DeliveryConfig,
}

impl DeliveryClient {
    /// Builds the client.
    ///
    /// # Panics
    ///
    /// If the TLS backend cannot be initialised (not expected with the
    /// bundled rustls configuration).
    pub fn new(config: DeliveryConfig) -> Self {
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .user_agent(USER_AGENT)
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: config.allow_private,
            }))
            .build()
            .expect("building the webhook HTTP client");
        DeliveryClient { client, config }
    }

    /// The settings this client was built with.
    pub fn config(&self) -> &DeliveryConfig {
        &self.config
    }

    /// Makes one delivery attempt. Never panics and never returns an error:
    /// every failure is described in the [`DeliveryOutcome`].
    pub async fn deliver(&self, request: &DeliveryRequest<'_>) -> DeliveryOutcome {
        let started = Instant::now();
        let failed = |error: String, signed_at: Option<i64>| DeliveryOutcome {
            delivered: false,
            http_status: None,
            error: Some(error),
            latency_ms: elapsed_ms(started),
            response_excerpt: String::new(),
            signed_at,
        };

        let url = match webhook_url::parse(request.url) {
            Ok(url) => url,
            Err(err) => return failed(err.to_string(), None),
        };
        if !self.config.allow_private {
            // reqwest connects to IP-literal hosts without asking the resolver.
            if let Some(refused) = literal_ip(&url).and_then(Refused::check) {
                return failed(refused.to_string(), None);
            }
        }

        let mut builder = self
            .client
            .post(url)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(request.body.to_vec());
        let mut signed_at = None;
        if let Some(secret) = request.secret {
            let timestamp = unix_now();
            builder = builder
                .header(TIMESTAMP_HEADER, timestamp.to_string())
                .header(SIGNATURE_HEADER, sign(secret, timestamp, request.body));
            signed_at = Some(timestamp);
        }

        let mut response = match builder.send().await {
            Ok(response) => response,
            Err(err) => return failed(describe(&err, &self.config), signed_at),
        };
        let status = response.status();
        let response_excerpt = read_excerpt(&mut response).await;
        let error = if status.is_success() {
            None
        } else if status.is_redirection() {
            Some(format!(
                "redirects are not followed (HTTP {})",
                status.as_u16()
            ))
        } else {
            Some(format!("HTTP {}", status.as_u16()))
        };
        DeliveryOutcome {
            delivered: status.is_success(),
            http_status: Some(status.as_u16()),
            error,
            latency_ms: elapsed_ms(started),
            response_excerpt,
            signed_at,
        }
    }
}

/// The host of `url` if it is an IP address.
fn literal_ip(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        Host::Domain(_) => None,
    }
}

/// Reads at most [`EXCERPT_LEN`] bytes of the body; stops at the first error
/// (e.g. the total timeout) and keeps what it has.
async fn read_excerpt(response: &mut reqwest::Response) -> String {
    let mut excerpt = Vec::new();
    while excerpt.len() < EXCERPT_LEN {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = EXCERPT_LEN - excerpt.len();
                excerpt.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&excerpt).into_owned()
}

/// A short human reason for a failed request.
fn describe(err: &reqwest::Error, config: &DeliveryConfig) -> String {
    let chain = || error_chain(err);
    if let Some(refused) = chain().find_map(|e| e.downcast_ref::<Refused>()) {
        return refused.to_string();
    }
    if let Some(lookup) = chain().find_map(|e| e.downcast_ref::<LookupFailed>()) {
        return lookup.to_string();
    }
    if err.is_timeout() {
        return if err.is_connect() {
            format!("connect timed out after {}", human(config.connect_timeout))
        } else {
            format!("timed out after {}", human(config.timeout))
        };
    }
    if let Some(io) = chain().find_map(|e| e.downcast_ref::<io::Error>()) {
        let reason = match io.kind() {
            io::ErrorKind::ConnectionRefused => Some("connection refused"),
            io::ErrorKind::ConnectionReset => Some("connection reset by peer"),
            io::ErrorKind::ConnectionAborted => Some("connection aborted"),
            io::ErrorKind::HostUnreachable => Some("host unreachable"),
            io::ErrorKind::NetworkUnreachable => Some("network unreachable"),
            _ => None,
        };
        if let Some(reason) = reason {
            return reason.to_owned();
        }
    }
    let innermost = chain().last().map_or_else(String::new, |e| e.to_string());
    if err.is_connect() {
        format!("connection failed: {innermost}")
    } else {
        format!("request failed: {innermost}")
    }
}

/// `err` and its sources, outermost first.
fn error_chain<'a>(
    err: &'a (dyn Error + 'static),
) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(err), |&e| e.source())
}

/// `10s`, `1500ms`, `300ms`.
fn human(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config() {
        let config = DeliveryConfig::default();
        assert_eq!(config.timeout, Duration::from_secs(10));
        assert_eq!(config.connect_timeout, Duration::from_secs(5));
        assert!(!config.allow_private);
    }

    #[test]
    fn human_durations() {
        assert_eq!(human(Duration::from_secs(10)), "10s");
        assert_eq!(human(Duration::from_millis(300)), "300ms");
        assert_eq!(human(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn user_agent_has_version() {
        assert_eq!(
            USER_AGENT,
            format!("billpay-webhooks/{}", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn debug_redacts_secret() {
        let request = DeliveryRequest {
            url: "https://example.com/hook",
            body: b"{}",
            secret: Some("whsec_very_secret"),
        };
        let debug = format!("{request:?}");
        assert!(!debug.contains("whsec_very_secret"), "{debug}");
        assert!(debug.contains("<redacted>"));
    }

    #[test]
    fn literal_hosts() {
        let ip = |u: &str| literal_ip(&Url::parse(u).unwrap());
        assert_eq!(
            ip("http://127.0.0.1:8080/x"),
            Some("127.0.0.1".parse().unwrap())
        );
        assert_eq!(ip("http://[::1]/"), Some("::1".parse().unwrap()));
        // WHATWG URL parsing normalises the odd IPv4 spellings.
        assert_eq!(ip("http://2130706433/"), Some("127.0.0.1".parse().unwrap()));
        assert_eq!(ip("http://0x7f.1/"), Some("127.0.0.1".parse().unwrap()));
        assert_eq!(ip("http://example.com/"), None);
    }
}
