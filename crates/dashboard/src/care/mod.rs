//! Sign-up and account care (issue 31): the forms anyone may post (sign up,
//! prove the address with the emailed code, forgot password, a reset link)
//! and the signed-in customer's own account page (profile, password, email),
//! signing in and out, notification choices and the identity (KYC) check.
//!
//! The open forms answer the same whatever the address: a sign-up with an
//! address that has an account emails its owner instead; a reset or a new
//! code for an unknown address sends nothing. Each is counted per client
//! address and per email first ([`crate::policy::OpenForms`]).

pub mod account;
pub mod identity;
pub mod login;
pub mod my_data;
pub mod notifications;
pub mod reset;
pub mod signup;
pub mod verify;

use crate::DashboardState;
use crate::policy::client_address;
use crate::session::SCOPE;
use axum::Router;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use billpay_domain::EmailAddress;
use billpay_webkit::{LockedOut, MAX_PASSWORD_BYTES};
use std::net::{IpAddr, SocketAddr};

/// The client's address (see [`client_address`]); `None` when the server
/// was not told the connection's peer.
pub struct Client(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        let forwarded = parts
            .headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok());
        Ok(Client(client_address(peer, forwarded)))
    }
}

/// What a person reads when an open form was posted too often.
pub fn too_often(locked: LockedOut) -> String {
    format!(
        "Too many requests from here or for this address. Try again in {} minutes.",
        locked.minutes()
    )
}

/// The canonical address of what was typed ([`EmailAddress::parse`]: the
/// one form every account is stored and found by), or why it is not one.
pub fn email_field(typed: &str) -> Result<String, String> {
    EmailAddress::parse(typed)
        .map(EmailAddress::into_string)
        .map_err(|refused| refused.to_string())
}

/// A new password as typed twice, or why it will not do.
pub fn new_password(password: &str, again: &str) -> Result<String, String> {
    use billpay_domain::password::MIN_LENGTH;
    if password.chars().count() < MIN_LENGTH {
        return Err(format!(
            "Choose a password of at least {MIN_LENGTH} characters."
        ));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(format!("A password is at most {MAX_PASSWORD_BYTES} bytes."));
    }
    if password != again {
        return Err("The two passwords are not the same.".into());
    }
    Ok(password.to_owned())
}

/// A person's name as typed, or why it will not do.
pub fn name_field(typed: &str) -> Result<String, &'static str> {
    let name = typed.trim();
    match name.chars().count() {
        0 => Err("Enter your name."),
        1..=100 => Ok(name.to_owned()),
        _ => Err("A name is at most 100 characters."),
    }
}

/// A Nigerian mobile number in its local form, or why it is not one.
pub fn phone_field(typed: &str) -> Result<String, &'static str> {
    billpay_domain::phone::Phone::parse(typed)
        .map(|p| p.as_str().to_owned())
        .map_err(|_| "Enter a Nigerian mobile number, like 0803 123 4567.")
}

/// An open form's page (a fresh sign-in CSRF cookie) with `status`.
pub fn open_page(
    headers: &HeaderMap,
    status: StatusCode,
    page: impl FnOnce(String) -> Response,
) -> Response {
    let mut response = SCOPE.sign_in_page(headers, page);
    *response.status_mut() = status;
    response
}

/// An open page reached by an emailed link (a reset): the link's token
/// stays out of other sites' logs (`Referrer-Policy: no-referrer`).
pub fn link_page(
    headers: &HeaderMap,
    status: StatusCode,
    page: impl FnOnce(String) -> Response,
) -> Response {
    let mut response = open_page(headers, status, page);
    let no_referrer = axum::http::HeaderValue::from_static("no-referrer");
    response
        .headers_mut()
        .insert(axum::http::header::REFERRER_POLICY, no_referrer);
    response
}

/// The address reset links and notices point at.
pub fn public_url(state: &DashboardState) -> &str {
    &state.care.public_url
}

/// Account care's pages, under `/dashboard`.
pub fn routes() -> Router<DashboardState> {
    Router::new()
        .route("/dashboard/login", get(login::form).post(login::submit))
        .route("/dashboard/logout", post(login::logout))
        .route("/dashboard/signup", get(signup::form).post(signup::submit))
        .route("/dashboard/verify", get(verify::form).post(verify::submit))
        .route("/dashboard/verify/resend", post(verify::resend))
        .route(
            "/dashboard/forgot",
            get(reset::forgot_form).post(reset::forgot),
        )
        .route(
            "/dashboard/reset/{token}",
            get(reset::reset_form).post(reset::reset),
        )
        .route("/dashboard/account", get(account::page))
        .route("/dashboard/account/profile", post(account::save_profile))
        .route(
            "/dashboard/account/password",
            post(account::change_password),
        )
        .route("/dashboard/account/email", post(account::change_email))
        .route(
            "/dashboard/account/developer",
            post(account::set_developer_access),
        )
        .route("/dashboard/account/code", post(account::enter_code))
        .route("/dashboard/account/data", post(my_data::download))
        .route("/dashboard/account/code/resend", post(account::resend_code))
        .route(
            "/dashboard/notifications",
            get(notifications::page).post(notifications::save),
        )
        .route(
            "/dashboard/notifications/phone",
            post(notifications::send_phone_code),
        )
        .route(
            "/dashboard/notifications/phone/code",
            post(notifications::enter_phone_code),
        )
        .route(
            "/dashboard/identity",
            get(identity::page).post(identity::check),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_checked_for_a_person() {
        assert_eq!(email_field(" Ada@Example.com ").unwrap(), "ada@example.com");
        for bad in [
            "",
            "ada",
            "ada@example",
            "a da@example.com",
            "@example.com",
            "x<a@b.co>",
        ] {
            assert!(email_field(bad).is_err(), "{bad}");
        }
        assert!(new_password("short", "short").is_err());
        assert!(new_password("long enough", "long enougH").is_err());
        assert!(new_password("long enough", "long enough").is_ok());
        assert_eq!(phone_field("+234 803 123 4567").unwrap(), "08031234567");
        assert!(phone_field("12345").is_err());
        assert!(name_field("   ").is_err());
    }
}
