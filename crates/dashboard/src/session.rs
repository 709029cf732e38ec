//! The dashboard's sessions: customers (accounts) signed in under
//! `/dashboard`, with the web kit's cookies, CSRF forms and sign-in checks.
//! A session belongs to an active account; suspending the account or
//! changing its password deletes its sessions.

use crate::DashboardState;
use billpay_store::{Account, AccountStatus};
use billpay_webkit::{PageError, Scope, WebKit, WebUi};
use std::time::Duration;

pub const SCOPE: Scope = Scope {
    users: billpay_domain::throttle::Kind::Account,
    name: "dashboard",
    home: "/dashboard",
    sign_in: "/dashboard/login",
    session_cookie: "billpay_session",
    sign_in_cookie: "billpay_login_csrf",
    lifetime: Duration::from_secs(8 * 60 * 60),
};

/// The signed-in account of a dashboard request.
pub type SignedIn = billpay_webkit::SignedIn<Account>;

impl WebUi for DashboardState {
    type User = Account;

    fn kit(&self) -> &WebKit {
        &self.kit
    }

    async fn session_user(&self, token_hash: &str) -> Result<Option<Account>, PageError> {
        let account = self.store.session_account(token_hash).await?;
        Ok(account.filter(allowed_in))
    }
}

/// Whether a session's account may use the dashboard: only an active one.
pub fn allowed_in(account: &Account) -> bool {
    account.status == AccountStatus::Active
}
