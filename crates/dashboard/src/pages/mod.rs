//! One module per page group. Handlers load what the page shows for the
//! signed-in account only (another account's key, event or transaction is a 404).

pub mod keys;
pub mod login;
pub mod overview;
pub mod transactions;
pub mod wallet;
pub mod webhooks;

use crate::session::{SignedIn, internal};
use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

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
        Err(e) => internal(&e),
    }
}

pub fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Html("<h1>Not found</h1><p><a href=\"/dashboard\">Back to the dashboard</a></p>"),
    )
        .into_response()
}

pub fn bad_request(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, message.to_owned()).into_response()
}

pub type PageResult = Result<Response, Response>;
