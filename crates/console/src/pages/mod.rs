//! One module per page group. Every change is an operations call with the
//! signed-in operator as the actor; a refusal of its role is a 403 page.

pub mod account;
pub mod audit;
pub mod customers;
pub mod login;
pub mod operators;
pub mod overview;
pub mod payments_received;
pub mod prices;
pub mod reports;
pub mod suppliers;
pub mod transactions;

use crate::session::{SCOPE, SignedIn};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use billpay_operations::{Actor, OpsError, Permission};
pub use billpay_webkit::{PageError, PageResult, render};
use serde::Deserialize;

/// What the layout needs on every signed-in page.
pub struct Chrome {
    pub email: String,
    pub role: &'static str,
    pub owner: bool,
    pub csrf: String,
    pub nav: &'static str,
    /// What the last action did (`?done=…` after its redirect).
    pub done: Option<String>,
}

impl Chrome {
    pub fn new(signed_in: &SignedIn, nav: &'static str, done: &Done) -> Self {
        let actor = actor(signed_in);
        Chrome {
            email: signed_in.user.email.clone(),
            role: signed_in.user.role.as_str(),
            owner: actor.may(Permission::ManageOperators),
            csrf: signed_in.csrf.clone(),
            nav,
            done: done
                .done
                .clone()
                .filter(|d| !d.is_empty() && d.len() <= 200),
        }
    }
}

/// `?done=…`: the notice an action's redirect shows.
#[derive(Deserialize, Default)]
pub struct Done {
    #[serde(default)]
    pub done: Option<String>,
}

/// The operator of this request, as the operations know actors.
pub fn actor(signed_in: &SignedIn) -> Actor {
    Actor::operator(&signed_in.user)
}

/// Back to `to` with a notice of what was done (303: the browser GETs it).
pub fn done(to: &str, notice: &str) -> Response {
    let notice = billpay_webkit::filters::url_encode(notice);
    let separator = if to.contains('?') { '&' } else { '?' };
    Redirect::to(&format!("{to}{separator}done={notice}")).into_response()
}

pub fn not_found() -> PageError {
    PageError::not_found(&SCOPE)
}

/// An action's refusal as a page: its role (403), its input (400), what it
/// names (404), its state now (409); a store failure is a 500.
pub fn refused(error: OpsError) -> PageError {
    let status = match &error {
        OpsError::Forbidden(_) => StatusCode::FORBIDDEN,
        OpsError::NotFound(_) => StatusCode::NOT_FOUND,
        OpsError::Refused(_) => StatusCode::CONFLICT,
        OpsError::Store(billpay_store::StoreError::Refused(_)) => StatusCode::CONFLICT,
        OpsError::Store(billpay_store::StoreError::EmailTaken(_)) => StatusCode::CONFLICT,
        OpsError::Store(billpay_store::StoreError::NotFound(_)) => StatusCode::NOT_FOUND,
        OpsError::Store(e) => return PageError::internal(e),
        _ => StatusCode::BAD_REQUEST,
    };
    let page = format!(
        "<!doctype html><title>Refused · billpay console</title>\
         <link rel=\"stylesheet\" href=\"/admin/assets/kit.css\">\
         <link rel=\"stylesheet\" href=\"/admin/assets/style.css\">\
         <main><div class=\"card\"><h1>Not done</h1><p class=\"error\" role=\"alert\" id=\"refusal\">{}</p>\
         <p><a href=\"/admin\">Back to the console</a></p></div></main>",
        escape(&error.to_string())
    );
    (status, axum::response::Html(page)).into_response().into()
}

/// The refusal text is ours, but it may quote what was typed.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A page only an actor with `permission` sees (the operators, the log).
pub fn require(signed_in: &SignedIn, permission: Permission) -> Result<(), PageError> {
    actor(signed_in).require(permission).map_err(refused)
}
