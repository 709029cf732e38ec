//! Sessions, CSRF and sign-in throttling.
//!
//! - The session cookie holds 256 random bits; the store keeps only SHA-256 of it.
//! - Cookie: HttpOnly, SameSite=Lax, Path=/dashboard, Max-Age = session lifetime,
//!   Secure when the request came over https (`X-Forwarded-Proto: https`).
//! - CSRF: each form carries `SHA-256("csrf:" + session token)`, checked in constant
//!   time; sign-in (no session yet) uses a double-submit cookie.
//! - Five failed sign-ins for one email within 15 minutes lock it for 15 minutes.

use crate::DashboardState;
use crate::pages::PageError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use billpay_domain::keys::random_hex;
use billpay_store::issue::session_token_hash;
use billpay_store::{Account, AccountStatus};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

pub const SESSION_COOKIE: &str = "billpay_session";
pub const LOGIN_CSRF_COOKIE: &str = "billpay_login_csrf";
pub const SESSION_LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);
const MAX_FAILURES: usize = 5;
const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);

pub fn csrf_for(session_token: &str) -> String {
    hex::encode(Sha256::digest(format!("csrf:{session_token}").as_bytes()))
}

pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

pub fn new_token() -> String {
    random_hex(32)
}

pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

pub fn is_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"))
}

/// `Set-Cookie` for `name=value`; `max_age` 0 deletes it.
pub fn set_cookie(name: &str, value: &str, max_age: Duration, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/dashboard; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        max_age.as_secs()
    ))
    .expect("cookie is ASCII")
}

/// The signed-in account of a dashboard request. Anything else is sent to sign in.
pub struct SignedIn {
    pub account: Account,
    pub csrf: String,
    pub token_hash: String,
}

impl SignedIn {
    /// Refuses a form whose CSRF proof is missing or wrong.
    pub fn check_csrf(&self, given: &str) -> Result<(), PageError> {
        if same_secret(&self.csrf, given) {
            Ok(())
        } else {
            let message = "Invalid or missing CSRF token. Reload the page and try again.";
            Err((StatusCode::FORBIDDEN, message).into_response().into())
        }
    }
}

impl FromRequestParts<DashboardState> for SignedIn {
    type Rejection = PageError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &DashboardState,
    ) -> Result<Self, PageError> {
        let to_login = || PageError::from(Redirect::to("/dashboard/login").into_response());
        let token = cookie(&parts.headers, SESSION_COOKIE).ok_or_else(to_login)?;
        let token_hash = session_token_hash(&token);
        let session = state
            .store
            .session(&token_hash)
            .await?
            .ok_or_else(to_login)?;
        let account = state
            .store
            .account(session.account_id)
            .await?
            .filter(|a| a.status == AccountStatus::Active)
            .ok_or_else(to_login)?;
        Ok(SignedIn {
            account,
            csrf: csrf_for(&token),
            token_hash,
        })
    }
}

/// Failed sign-ins per email, in this process.
#[derive(Default)]
pub struct LoginThrottle {
    failures: Mutex<HashMap<String, Vec<Instant>>>,
}

impl LoginThrottle {
    /// Time left on a lock for this email, if locked.
    pub fn locked_for(&self, email: &str) -> Option<Duration> {
        let mut failures = self.failures.lock().expect("throttle poisoned");
        let list = failures.entry(email.to_lowercase()).or_default();
        list.retain(|t| t.elapsed() < FAILURE_WINDOW);
        (list.len() >= MAX_FAILURES).then(|| FAILURE_WINDOW.saturating_sub(list[0].elapsed()))
    }

    pub fn record_failure(&self, email: &str) {
        let mut failures = self.failures.lock().expect("throttle poisoned");
        failures
            .entry(email.to_lowercase())
            .or_default()
            .push(Instant::now());
    }

    pub fn clear(&self, email: &str) {
        self.failures
            .lock()
            .expect("throttle poisoned")
            .remove(&email.to_lowercase());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_after_five_failures() {
        let t = LoginThrottle::default();
        for _ in 0..4 {
            t.record_failure("A@x.com");
        }
        assert!(t.locked_for("a@x.com").is_none());
        t.record_failure("a@x.com");
        assert!(t.locked_for("a@X.com").is_some());
        assert!(t.locked_for("b@x.com").is_none());
        t.clear("a@x.com");
        assert!(t.locked_for("a@x.com").is_none());
    }

    #[test]
    fn cookies_parse_and_csrf_differs_from_token() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; billpay_session=abc; b=2"),
        );
        assert_eq!(cookie(&h, SESSION_COOKIE).as_deref(), Some("abc"));
        assert_ne!(csrf_for("abc"), "abc");
        assert!(same_secret(&csrf_for("abc"), &csrf_for("abc")));
        assert!(!same_secret(&csrf_for("abc"), &csrf_for("abd")));
    }
}
