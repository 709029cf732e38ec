//! Sessions of a web UI, whoever signs in to it.
//!
//! - The session cookie holds 256 random bits; only SHA-256 of it is stored
//!   (where is the UI's business: [`WebUi::session_user`]).
//! - Cookies: HttpOnly, SameSite=Lax, `Path` = the UI's home, Max-Age = the
//!   session lifetime, Secure when the request came over https
//!   (`X-Forwarded-Proto: https`).
//! - Anything without a valid session is sent to the UI's sign-in page.

use crate::csrf::csrf_for;
use crate::{PageError, WebUi};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use billpay_domain::throttle::Kind;
use billpay_store::issue::session_token_hash;
use std::time::Duration;

/// Where a UI lives and what its cookies are called.
#[derive(Clone, Copy)]
pub struct Scope {
    /// Its name on pages ("dashboard": "Back to the dashboard").
    pub name: &'static str,
    /// Its home page; also the `Path` of its cookies.
    pub home: &'static str,
    /// Its sign-in page, where anyone without a session is sent.
    pub sign_in: &'static str,
    pub session_cookie: &'static str,
    /// The sign-in form's double-submit CSRF cookie.
    pub sign_in_cookie: &'static str,
    pub lifetime: Duration,
    /// Who signs in, as the secret throttle keys them.
    pub users: Kind,
}

/// How long a sign-in page's CSRF cookie is good for.
const SIGN_IN_FORM_LIFETIME: Duration = Duration::from_secs(3600);

/// What every UI's sign-in page shows.
pub struct SignInView {
    /// The form's CSRF proof (also set as the sign-in cookie).
    pub csrf: String,
    /// What was typed, kept after a refusal.
    pub email: String,
    pub error: Option<String>,
}

impl Scope {
    /// `Set-Cookie` for `name=value` on this UI's path; `max_age` 0 deletes it.
    pub fn set_cookie(
        &self,
        name: &str,
        value: &str,
        max_age: Duration,
        secure: bool,
    ) -> HeaderValue {
        let secure = if secure { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{name}={value}; Path={}; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            self.home,
            max_age.as_secs()
        ))
        .expect("cookie is ASCII")
    }

    /// The sign-in form (again after a refusal: `email` kept, `error` shown,
    /// answered with `status`), each UI's own template made by `page`.
    pub fn sign_in_form(
        &self,
        request: &HeaderMap,
        email: &str,
        error: Option<&str>,
        status: StatusCode,
        page: impl FnOnce(SignInView) -> Response,
    ) -> Response {
        let mut response = self.sign_in_page(request, |csrf| {
            page(SignInView {
                csrf,
                email: email.to_owned(),
                error: error.map(str::to_owned),
            })
        });
        *response.status_mut() = status;
        response
    }

    /// The sign-in page made by `page` from a fresh CSRF proof, with that
    /// proof's double-submit cookie.
    pub fn sign_in_page(
        &self,
        request: &HeaderMap,
        page: impl FnOnce(String) -> Response,
    ) -> Response {
        let proof = billpay_domain::keys::random_hex(32);
        let mut response = page(proof.clone());
        let cookie = self.set_cookie(
            self.sign_in_cookie,
            &proof,
            SIGN_IN_FORM_LIFETIME,
            is_https(request),
        );
        response.headers_mut().append(header::SET_COOKIE, cookie);
        response
    }

    /// After a sign-in: home, with the session cookie; the sign-in form's
    /// cookie is deleted.
    pub fn signed_in(&self, request: &HeaderMap, session_token: &str) -> Response {
        let secure = is_https(request);
        let mut response = Redirect::to(self.home).into_response();
        let cookies = response.headers_mut();
        let session = self.set_cookie(self.session_cookie, session_token, self.lifetime, secure);
        cookies.append(header::SET_COOKIE, session);
        let form = self.set_cookie(self.sign_in_cookie, "", Duration::ZERO, secure);
        cookies.append(header::SET_COOKIE, form);
        response
    }

    /// After a sign-out: the sign-in page, the session cookie deleted.
    pub fn signed_out(&self, request: &HeaderMap) -> Response {
        let mut response = Redirect::to(self.sign_in).into_response();
        let cookie = self.set_cookie(self.session_cookie, "", Duration::ZERO, is_https(request));
        response.headers_mut().append(header::SET_COOKIE, cookie);
        response
    }
}

/// The value of cookie `name` in a request.
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

/// Whether the request reached the TLS proxy in front of us over https.
pub fn is_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"))
}

/// Who signed in to a UI, for a request with a valid session; anyone else
/// is sent to the UI's sign-in page. Forms pair it with a [`CsrfForm`](crate::CsrfForm).
pub struct SignedIn<U> {
    pub user: U,
    /// This session's CSRF proof, for the page's forms.
    pub csrf: String,
    /// The stored form of the session token (to end the session).
    pub token_hash: String,
}

impl<S: WebUi> FromRequestParts<S> for SignedIn<S::User> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, PageError> {
        let token = SessionToken::from_request_parts(parts, state).await?;
        let user = state.session_user(&token.token_hash).await?;
        token.signed_in(user)
    }
}

/// A request's session cookie, its user not yet read: for a page that reads
/// the user with the rest of what it shows, in one store call. Without the
/// cookie the request is sent to the UI's sign-in page.
pub struct SessionToken {
    token: String,
    /// The stored form of the token, to look the session up by.
    pub token_hash: String,
    sign_in: &'static str,
}

impl SessionToken {
    /// The [`SignedIn`] of the session's user; no user (no such session, or
    /// not one allowed in) is sent to sign in, as [`SignedIn`]'s extractor does.
    pub fn signed_in<U>(self, user: Option<U>) -> Result<SignedIn<U>, PageError> {
        let (signed_in, ()) = self.signed_in_with(user.map(|u| (u, ())))?;
        Ok(signed_in)
    }

    /// [`Self::signed_in`] for a user read with what the page shows (`X`).
    pub fn signed_in_with<U, X>(
        self,
        found: Option<(U, X)>,
    ) -> Result<(SignedIn<U>, X), PageError> {
        let (user, with) = found.ok_or_else(|| to_sign_in(self.sign_in))?;
        let signed_in = SignedIn {
            user,
            csrf: csrf_for(&self.token),
            token_hash: self.token_hash,
        };
        Ok((signed_in, with))
    }
}

fn to_sign_in(sign_in: &'static str) -> PageError {
    PageError::from(Redirect::to(sign_in).into_response())
}

impl<S: WebUi> FromRequestParts<S> for SessionToken {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, PageError> {
        let scope = &state.kit().scope;
        let token = cookie(&parts.headers, scope.session_cookie)
            .ok_or_else(|| to_sign_in(scope.sign_in))?;
        Ok(SessionToken {
            token_hash: session_token_hash(&token),
            token,
            sign_in: scope.sign_in,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_name_and_scoped_to_the_ui() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; billpay_session=abc; b=2"),
        );
        assert_eq!(cookie(&h, "billpay_session").as_deref(), Some("abc"));
        assert_eq!(cookie(&h, "billpay_other"), None);
        let scope = Scope {
            users: billpay_domain::throttle::Kind::Account,
            name: "console",
            home: "/admin",
            sign_in: "/admin/login",
            session_cookie: "op",
            sign_in_cookie: "op_login",
            lifetime: Duration::from_secs(60),
        };
        let set = scope.set_cookie("op", "x", scope.lifetime, true);
        assert_eq!(
            set,
            "op=x; Path=/admin; HttpOnly; SameSite=Lax; Max-Age=60; Secure"
        );
    }
}
