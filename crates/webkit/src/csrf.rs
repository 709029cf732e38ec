//! Form extractors: a form body is at most [`FORM_LIMIT`], and it reaches a
//! handler only with its CSRF proof checked, in constant time.
//!
//! - [`CsrfForm`]: a signed-in form; the proof is `SHA-256("csrf:" + session
//!   token)`, so it is tied to the session and useless with another.
//! - [`SignInForm`]: the sign-in form (no session yet); the proof is a
//!   double-submit cookie. Anyone can fetch one and post many forms with it:
//!   it stops cross-site posts, not a flood (the throttle and the bound on
//!   password checks do that).

use crate::{PageError, WebUi, cookie};
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use http_body_util::LengthLimitError;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The largest form body read (every form of the UIs is a few hundred bytes).
pub const FORM_LIMIT: usize = 16 * 1024;

/// The CSRF proof of the session with this token.
pub fn csrf_for(session_token: &str) -> String {
    hex::encode(Sha256::digest(format!("csrf:{session_token}").as_bytes()))
}

/// A signed-in form's fields, its proof checked against the session cookie.
/// Pair it with [`SignedIn`](crate::SignedIn), which checks the session itself.
/// A form that carries a file's text (the shop's bulk CSV) sets a larger `LIMIT`.
pub struct CsrfForm<T, const LIMIT: usize = FORM_LIMIT>(pub T);

/// The sign-in form's fields, its proof checked against the double-submit cookie.
pub struct SignInForm<T>(pub T);

/// A form with nothing but its CSRF proof (a sign-out, a button): `CsrfForm<NoFields>`.
#[derive(Deserialize)]
pub struct NoFields {}

impl<S: WebUi, T: DeserializeOwned, const LIMIT: usize> FromRequest<S> for CsrfForm<T, LIMIT> {
    type Rejection = PageError;

    async fn from_request(request: Request, state: &S) -> Result<Self, PageError> {
        let session = cookie(request.headers(), state.kit().scope.session_cookie);
        let expected = session.as_deref().map(csrf_for).unwrap_or_default();
        let body = form_body(request, LIMIT).await?;
        check_proof(&body, &expected, "Reload the page and try again.")?;
        Ok(CsrfForm(fields(&body)?))
    }
}

impl<S: WebUi, T: DeserializeOwned> FromRequest<S> for SignInForm<T> {
    type Rejection = PageError;

    async fn from_request(request: Request, state: &S) -> Result<Self, PageError> {
        let expected = cookie(request.headers(), state.kit().scope.sign_in_cookie);
        let body = form_body(request, FORM_LIMIT).await?;
        check_proof(
            &body,
            &expected.unwrap_or_default(),
            "Reload the sign-in page.",
        )?;
        Ok(SignInForm(fields(&body)?))
    }
}

#[derive(Deserialize)]
struct Proof {
    #[serde(default)]
    csrf: String,
}

fn check_proof(body: &[u8], expected: &str, advice: &str) -> Result<(), PageError> {
    let given = fields::<Proof>(body)?.csrf;
    if !given.is_empty() && same_secret(expected, &given) {
        return Ok(());
    }
    let message = format!("Invalid or missing CSRF token. {advice}");
    Err(PageError::status(StatusCode::FORBIDDEN, message))
}

fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn fields<T: DeserializeOwned>(body: &[u8]) -> Result<T, PageError> {
    serde_urlencoded::from_bytes(body).map_err(|e| {
        let message = format!("The form could not be read: {e}.");
        PageError::status(StatusCode::UNPROCESSABLE_ENTITY, message)
    })
}

/// The body of a urlencoded form, refused past `limit` bytes (by its
/// `Content-Length` before reading anything, or while reading a body sent
/// without one).
async fn form_body(request: Request, limit: usize) -> Result<Bytes, PageError> {
    let headers = request.headers();
    if !is_form(headers) {
        let message = "Send this form as application/x-www-form-urlencoded.";
        return Err(PageError::status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message,
        ));
    }
    if declared_length(headers).is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    axum::body::to_bytes(request.into_body(), limit)
        .await
        .map_err(|e| match e.into_inner() {
            e if e.is::<LengthLimitError>() => too_large(limit),
            _ => PageError::bad_request("The form could not be read. Please send it again."),
        })
}

fn too_large(limit: usize) -> PageError {
    let message = format!("This form is too large (at most {} KiB).", limit / 1024);
    PageError::status(StatusCode::PAYLOAD_TOO_LARGE, message)
}

fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim() == "application/x-www-form-urlencoded")
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_is_tied_to_its_session_and_checked_exactly() {
        assert_ne!(csrf_for("abc"), "abc");
        let proof = csrf_for("abc");
        assert!(check_proof(format!("csrf={proof}").as_bytes(), &proof, "").is_ok());
        for body in [
            format!("csrf={}", csrf_for("abd")),
            "csrf=".into(),
            "name=x".into(),
        ] {
            assert!(check_proof(body.as_bytes(), &proof, "").is_err(), "{body}");
        }
        assert!(
            check_proof(b"csrf=", "", "").is_err(),
            "an empty pair is no proof"
        );
    }
}
