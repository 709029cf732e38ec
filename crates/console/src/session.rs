//! The console's sessions: operators signed in under `/admin`, with the web
//! kit's cookies, CSRF forms and sign-in checks. A session lasts at most
//! [`SCOPE`]'s lifetime and ends after [`IDLE_TIMEOUT`] without a request;
//! disabling an operator or changing its password deletes its sessions.

use crate::ConsoleState;
use billpay_store::{Operator, OperatorStatus};
use billpay_webkit::{PageError, Scope, WebKit, WebUi};
use std::time::Duration;

pub const SCOPE: Scope = Scope {
    users: billpay_domain::throttle::Kind::Operator,
    name: "console",
    home: "/admin",
    sign_in: "/admin/login",
    session_cookie: "billpay_admin",
    sign_in_cookie: "billpay_admin_login",
    lifetime: Duration::from_secs(8 * 60 * 60),
};

/// A console left alone this long asks for the password again.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// A session's last request is stamped at most this often (it is a write).
const TOUCH_EVERY_MS: i64 = 30_000;

/// The signed-in operator of a console request.
pub type SignedIn = billpay_webkit::SignedIn<Operator>;

impl WebUi for ConsoleState {
    type User = Operator;

    fn kit(&self) -> &WebKit {
        &self.kit
    }

    async fn session_user(&self, token_hash: &str) -> Result<Option<Operator>, PageError> {
        let Some(session) = self.store.operator_session(token_hash).await? else {
            return Ok(None);
        };
        let now = billpay_store::clock::now_ms();
        let idle = now - session.last_seen_ms;
        if idle > IDLE_TIMEOUT.as_millis() as i64 {
            self.store.delete_operator_session(token_hash).await?;
            return Ok(None);
        }
        if idle > TOUCH_EVERY_MS {
            self.store.touch_operator_session(token_hash).await?;
        }
        let operator = self.store.operator(session.operator_id).await?;
        Ok(operator.filter(|o| o.status == OperatorStatus::Active))
    }
}
