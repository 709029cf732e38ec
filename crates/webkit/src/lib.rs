//! The web kit: what every server-rendered UI of billpay needs, written once —
//! the account dashboard under `/dashboard` and the operator console under
//! `/admin`, each with its own users.
//!
//! - [`SignedIn`]: sessions generic over who signed in ([`WebUi::User`]), their
//!   cookies scoped by a [`Scope`] (cookie names, path, sign-in page, lifetime).
//! - [`CsrfForm`] / [`SignInForm`]: form extractors that bound the body and check
//!   the CSRF proof before a handler runs.
//! - [`WebKit::sign_in`]: field limits, the one throttle on checks of secrets
//!   (the store's counters, every node's, keyed by who is checked: [`Who`];
//!   the console's My account checks and the dashboard's later checks count
//!   in the same budget), and password hashing bounded by a semaphore
//!   ([`PasswordCheck`]), so a flood of sign-ins costs a fixed amount of memory.
//! - [`security_headers`], [`PageError`], [`render`] and [`error_page`] for
//!   every page, and [`catch_panics`], every UI router's layer that answers a
//!   handler's panic with a 500 page in the kit's style.
//! - [`chart`]: the day chart (stacked segments, line series) as inline SVG.
//! - [`filters`] and [`rows`]: what the transaction pages read and show alike
//!   (filters, paging links; list, field and ledger rows).
//! - [`KIT_CSS`]: the stylesheet both UIs share (a UI adds its own rules after it),
//!   and [`KIT_JS`], their script.

pub mod chart;
mod csrf;
pub mod filters;
pub mod format;
mod headers;
mod page;
mod password;
pub mod rows;
mod session;
mod sign_in;

pub use billpay_domain::throttle::{LockedOut, Who};
pub use chart::escape;
pub use csrf::{CsrfForm, FORM_LIMIT, NoFields, SignInForm, csrf_for};
pub use headers::{
    CONTENT_SECURITY_POLICY, KIT_CSS, KIT_JS, asset, kit_script, kit_stylesheet, security_headers,
    with_form_targets,
};
pub use page::{PageError, PageResult, PanicPage, catch_panics, error_page, render};
pub use password::{Busy, HashPermit, PasswordCheck};
pub use session::{Scope, SessionToken, SignInView, SignedIn, cookie, is_https};
pub use sign_in::{Credentials, Found, MAX_EMAIL_CHARS, MAX_PASSWORD_BYTES, Refusal};

use std::future::Future;

/// A web UI's state, as the kit's extractors see it.
pub trait WebUi: Clone + Send + Sync + 'static {
    /// Who signs in: a customer's account (the dashboard), an operator (the console).
    type User: Send;

    fn kit(&self) -> &WebKit;

    /// Who the session with this token hash belongs to, while it is valid and
    /// they may still use the UI (e.g. not suspended); `None` sends to sign-in.
    fn session_user(
        &self,
        token_hash: &str,
    ) -> impl Future<Output = Result<Option<Self::User>, PageError>> + Send;
}

/// One UI's share of the kit: its scope (whose users' secrets its sign-in
/// counts, [`Scope::users`]) and the process's bound on password checks
/// (shared by every UI).
pub struct WebKit {
    pub scope: Scope,
    pub passwords: PasswordCheck,
}

impl WebKit {
    pub fn new(scope: Scope) -> Self {
        WebKit {
            scope,
            passwords: PasswordCheck::shared(),
        }
    }
}
