//! One module per page group. Handlers load what the page shows for the
//! signed-in account only (another account's key, event or transaction is a 404).

pub mod keys;
pub mod login;
pub mod overview;
pub mod transactions;
pub mod wallet;
pub mod webhooks;

use crate::session::SignedIn;
use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use billpay_store::StoreError;

/// What the layout needs on every signed-in page.
pub struct Chrome {
    pub account_name: String,
    pub csrf: String,
    pub nav: &'static str,
}

impl Chrome {
    pub fn new(signed_in: &SignedIn, nav: &'static str) -> Self {
        Chrome {
            account_name: signed_in.account.name.clone(),
            csrf: signed_in.csrf.clone(),
            nav,
        }
    }
}

pub fn render(template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => PageError::internal(&e).into_response(),
    }
}

pub fn not_found() -> PageError {
    let page = Html("<h1>Not found</h1><p><a href=\"/dashboard\">Back to the dashboard</a></p>");
    (StatusCode::NOT_FOUND, page).into_response().into()
}

pub fn bad_request(message: &str) -> PageError {
    (StatusCode::BAD_REQUEST, message.to_owned())
        .into_response()
        .into()
}

pub type PageResult = Result<Response, PageError>;

/// What a page answers instead of itself: a ready response (the sign-in
/// redirect, 400, 403, 404), or a failure logged and answered 500 without
/// detail. A store error becomes one with `?`.
pub struct PageError(Box<Response>);

impl PageError {
    pub fn internal(error: &dyn std::fmt::Display) -> PageError {
        tracing::error!(%error, "dashboard error");
        let message = "Something went wrong. Please try again.";
        (StatusCode::INTERNAL_SERVER_ERROR, message)
            .into_response()
            .into()
    }
}

impl From<Response> for PageError {
    fn from(response: Response) -> Self {
        PageError(Box::new(response))
    }
}

impl From<StoreError> for PageError {
    fn from(error: StoreError) -> Self {
        PageError::internal(&error)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        *self.0
    }
}
