//! What every signed-in page of the three rooms shares: the layout's
//! [`Chrome`], the page errors, and the sentence an unverified account meets.
//! Handlers load what the page shows for the signed-in account only (another
//! account's key, event or transaction is a 404).

use crate::session::{SCOPE, SignedIn};
use billpay_domain::brand::Brand;
pub use billpay_webkit::{PageError, PageResult, render};
use std::sync::Arc;

/// What the layout needs on every signed-in page.
pub struct Chrome {
    pub account_name: String,
    pub csrf: String,
    pub nav: &'static str,
    /// The address is not proven yet: every page says so (no buying or funding until it is).
    pub unverified: bool,
    /// The business's brand (name, logo, colour, contacts, credit).
    pub brand: Arc<Brand>,
    /// The account has developer access: the menu shows API keys and webhooks.
    pub developer: bool,
}

impl Chrome {
    pub fn new(signed_in: &SignedIn, nav: &'static str) -> Self {
        Chrome {
            account_name: signed_in.user.name.clone(),
            csrf: signed_in.csrf.clone(),
            nav,
            unverified: !signed_in.user.verified(),
            brand: brand(),
            developer: signed_in.user.developer_access.is_some(),
        }
    }

    /// The menu item a page is under: the PIN, notification choices and
    /// the identity check are the account's; a receipt is the history's.
    pub fn menu(&self) -> &'static str {
        match self.nav {
            "pin" | "notifications" | "identity" | "account" => "account",
            "receipt" | "transactions" => "history",
            "bulk" => "buy",
            other => other,
        }
    }
}

/// The brand in force for this request: what the layouts wear
/// (`base.html` through [`Chrome`], `public.html` by calling this).
pub fn brand() -> Arc<Brand> {
    crate::brand::current()
}

/// Said when an account whose email is not verified asks for what would
/// send it a notice (a key, a webhook URL, a phone code): until then it is
/// sent nothing but its verification code.
pub const VERIFY_FIRST: &str = "Verify your email address first: enter the 6-digit code we emailed you (on your Account page). Until then we send you nothing else.";

pub fn not_found() -> PageError {
    PageError::not_found(&SCOPE)
}

pub fn bad_request(message: &str) -> PageError {
    PageError::bad_request(message)
}
