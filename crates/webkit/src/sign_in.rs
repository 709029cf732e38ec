//! Checking a sign-in, in the order that keeps it cheap: field lengths, then
//! the user's lookup, then a permit, then the try counted in the store's
//! throttle (every node's; refused while the email is locked out), and only
//! then the password hash; a second factor (the console's TOTP) only after
//! a right password, in the same try. Every refusal is a [`Refusal`] the UI
//! shows on its sign-in page.

use crate::{PageError, WebKit, Who};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use billpay_domain::email::canonical_or_typed;
use billpay_store::{ThrottleStore, secret_right, secret_try};
use serde::Deserialize;
use std::future::Future;
use std::time::Duration;

/// The longest email address (RFC 5321's limit on a forward path).
pub const MAX_EMAIL_CHARS: usize = 254;
/// Far past any password a person types; bounds the hashing input.
pub const MAX_PASSWORD_BYTES: usize = 1024;
/// What a busy refusal tells the browser to wait, in seconds.
const BUSY_RETRY_AFTER: &str = "2";

/// The sign-in form's fields (read with a [`SignInForm`](crate::SignInForm)).
#[derive(Deserialize)]
pub struct Credentials {
    /// The canonical address ([`canonical_or_typed`]).
    #[serde(deserialize_with = "canonical_email")]
    pub email: String,
    pub password: String,
}

impl Credentials {
    /// The address in its canonical form, as every account and operator
    /// is stored (or, not being an address, as typed: it then finds no one).
    pub fn email(&self) -> &str {
        self.email.trim()
    }
}

fn canonical_email<'de, D: serde::Deserializer<'de>>(reader: D) -> Result<String, D::Error> {
    String::deserialize(reader).map(|typed| canonical_or_typed(&typed))
}

/// Someone found by email, with their stored password hash (none: they
/// have no password and cannot sign in).
pub struct Found<U> {
    pub user: U,
    pub password_hash: Option<String>,
}

/// Why a sign-in did not sign anyone in.
pub enum Refusal {
    TooLong(String),
    LockedOut(Duration),
    Busy,
    WrongCredentials,
    Failed(PageError),
}

impl From<PageError> for Refusal {
    fn from(error: PageError) -> Self {
        Refusal::Failed(error)
    }
}

impl Refusal {
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::TooLong(_) => StatusCode::BAD_REQUEST,
            Refusal::LockedOut(_) => StatusCode::TOO_MANY_REQUESTS,
            Refusal::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Refusal::WrongCredentials => StatusCode::UNAUTHORIZED,
            Refusal::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn message(&self) -> String {
        match self {
            Refusal::TooLong(message) => message.clone(),
            Refusal::LockedOut(left) => {
                let minutes = left.as_secs().div_ceil(60);
                format!("Too many failed sign-ins. Try again in {minutes} minutes.")
            }
            Refusal::Busy => "Too many sign-ins at once. Try again in a moment.".to_owned(),
            Refusal::WrongCredentials => "Wrong email or password.".to_owned(),
            Refusal::Failed(_) => "Something went wrong. Please try again.".to_owned(),
        }
    }

    /// The UI's sign-in page (`page` given the message) with this refusal's
    /// status, and `Retry-After` when waiting helps; a failure is its own 500.
    pub fn respond(self, page: impl FnOnce(&str) -> Response) -> Response {
        let retry_after = match &self {
            Refusal::Failed(_) => None,
            Refusal::Busy => Some(HeaderValue::from_static(BUSY_RETRY_AFTER)),
            Refusal::LockedOut(left) => Some(HeaderValue::from(left.as_secs().max(1))),
            _ => None,
        };
        let (status, message) = (self.status(), self.message());
        if let Refusal::Failed(error) = self {
            return error.into_response();
        }
        let mut response = page(&message);
        *response.status_mut() = status;
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, seconds);
        }
        response
    }
}

impl WebKit {
    /// The user these credentials sign in, or why not. `find` looks the
    /// email up; the try is counted in `throttle` (the store's, every
    /// node's) once a permit to check the password is held.
    pub async fn sign_in<U>(
        &self,
        throttle: &(impl ThrottleStore + ?Sized),
        credentials: &Credentials,
        find: impl Future<Output = Result<Option<Found<U>>, PageError>>,
    ) -> Result<U, Refusal> {
        let no_second_factor = |user: U| async { Ok(Some(user)) };
        self.sign_in_with(throttle, credentials, find, no_second_factor)
            .await
    }

    /// [`sign_in`](Self::sign_in) with a second factor: `second` runs only
    /// once the password was right (so a right code with a wrong password
    /// uses nothing up), within the same counted try — `None` (a wrong or
    /// used code) fails the attempt like a wrong password.
    pub async fn sign_in_with<U, F, S>(
        &self,
        throttle: &(impl ThrottleStore + ?Sized),
        credentials: &Credentials,
        find: impl Future<Output = Result<Option<Found<U>>, PageError>>,
        second: F,
    ) -> Result<U, Refusal>
    where
        F: FnOnce(U) -> S,
        S: Future<Output = Result<Option<U>, PageError>>,
    {
        let (email, password) = (credentials.email(), &credentials.password);
        if email.chars().count() > MAX_EMAIL_CHARS {
            let message = format!("An email address is at most {MAX_EMAIL_CHARS} characters.");
            return Err(Refusal::TooLong(message));
        }
        if password.len() > MAX_PASSWORD_BYTES {
            let message = format!("A password is at most {MAX_PASSWORD_BYTES} bytes.");
            return Err(Refusal::TooLong(message));
        }
        let who = Who::new(self.scope.users, email);
        let (user, hash) = match find.await? {
            Some(found) => (Some(found.user), found.password_hash),
            None => (None, None),
        };
        let permit = self.passwords.permit().await.map_err(|_| Refusal::Busy)?;
        // Counted before the check, in one conditional statement: tries at
        // once, on any node, cannot check more than the bound.
        secret_try(throttle, who)
            .await
            .map_err(PageError::from)?
            .map_err(|locked| Refusal::LockedOut(locked.0))?;
        let verified = permit.verify(hash, password.clone()).await;
        let Some(user) = user.filter(|_| verified) else {
            return Err(Refusal::WrongCredentials);
        };
        match second(user).await? {
            Some(user) => {
                secret_right(throttle, who).await.map_err(PageError::from)?;
                Ok(user)
            }
            None => Err(Refusal::WrongCredentials),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PasswordCheck, Scope};
    use billpay_domain::throttle::ACCOUNT_SECRETS;
    use billpay_store::{SharedStore, Taken};

    fn kit(passwords: PasswordCheck) -> WebKit {
        let scope = Scope {
            users: billpay_domain::throttle::Kind::Account,
            name: "test",
            home: "/t",
            sign_in: "/t/login",
            session_cookie: "t",
            sign_in_cookie: "t_login",
            lifetime: Duration::from_secs(60),
        };
        WebKit { scope, passwords }
    }

    async fn store() -> (tempfile::TempDir, SharedStore) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        (dir, billpay_store::open(&url).await.unwrap())
    }

    /// The tries `email` has taken: one more is taken to see (the bound is 5).
    async fn tries(store: &SharedStore, email: &str) -> u32 {
        let key = Who::account(email).key();
        match store.take_throttle(ACCOUNT_SECRETS, &key).await.unwrap() {
            Taken::Counted { tries } => tries - 1,
            Taken::Locked { .. } => ACCOUNT_SECRETS.most,
        }
    }

    /// A sign-in of an email nobody has.
    async fn sign_in(
        kit: &WebKit,
        store: &SharedStore,
        email: &str,
        password: &str,
    ) -> Result<(), Refusal> {
        let (email, password) = (email.to_owned(), password.to_owned());
        let nobody = async { Ok(None::<Found<()>>) };
        let credentials = Credentials { email, password };
        kit.sign_in(store.as_ref(), &credentials, nobody).await
    }

    #[tokio::test]
    async fn a_sign_in_without_a_permit_is_busy_and_costs_no_attempt() {
        let (_dir, store) = store().await;
        let kit = kit(PasswordCheck::new(1, Duration::from_millis(20)));
        let held = kit.passwords.permit().await.unwrap();
        let refused = sign_in(&kit, &store, "a@x.com", "password").await;
        assert!(matches!(refused, Err(Refusal::Busy)));
        drop(held);
        assert_eq!(tries(&store, "a@x.com").await, 0, "no try counted");
        let checked = sign_in(&kit, &store, "b@x.com", "password").await;
        assert!(matches!(checked, Err(Refusal::WrongCredentials)));
        assert_eq!(
            tries(&store, "b@x.com").await,
            1,
            "a checked attempt counts"
        );
    }

    #[tokio::test]
    async fn the_second_factor_runs_only_after_a_right_password_and_counts() {
        let (_dir, store) = store().await;
        let kit = kit(PasswordCheck::new(1, Duration::from_millis(20)));
        let hash = billpay_domain::password::hash("right password").unwrap();
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let try_with = |password: &str, code_ok: bool| {
            let credentials = Credentials {
                email: "a@x.com".into(),
                password: password.into(),
            };
            let hash = hash.clone();
            let asked = &asked;
            let (kit, store) = (&kit, &store);
            async move {
                let find = async move {
                    Ok(Some(Found {
                        user: (),
                        password_hash: Some(hash),
                    }))
                };
                let second = |user: ()| async move {
                    asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    Ok(code_ok.then_some(user))
                };
                kit.sign_in_with(store.as_ref(), &credentials, find, second)
                    .await
            }
        };
        let wrong = try_with("wrong password", true).await;
        assert!(matches!(wrong, Err(Refusal::WrongCredentials)));
        assert_eq!(
            asked.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "no code used"
        );
        let bad_code = try_with("right password", false).await;
        assert!(matches!(bad_code, Err(Refusal::WrongCredentials)));
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1);
        for _ in 0..2 {
            assert!(matches!(
                try_with("wrong password", true).await,
                Err(Refusal::WrongCredentials)
            ));
        }
        assert!(try_with("right password", true).await.is_ok(), "the 5th");
        assert_eq!(
            tries(&store, "a@x.com").await,
            0,
            "a full success clears it"
        );
    }

    #[tokio::test]
    async fn five_failures_lock_the_email_whatever_its_case() {
        let (_dir, store) = store().await;
        let kit = kit(PasswordCheck::new(1, Duration::from_millis(20)));
        for email in ["A@x.com", "a@x.com", "a@X.com", "a@x.COM", "a@x.com"] {
            let refused = sign_in(&kit, &store, email, "password").await;
            assert!(matches!(refused, Err(Refusal::WrongCredentials)));
        }
        let Err(Refusal::LockedOut(left)) = sign_in(&kit, &store, "a@x.com", "p").await else {
            panic!("locked");
        };
        assert!(left > Duration::from_secs(14 * 60) && left <= Duration::from_secs(15 * 60));
        let other = sign_in(&kit, &store, "b@x.com", "password").await;
        assert!(matches!(other, Err(Refusal::WrongCredentials)));
    }

    #[tokio::test]
    async fn over_long_fields_are_refused_before_the_throttle() {
        let (_dir, store) = store().await;
        let kit = kit(PasswordCheck::new(1, Duration::from_millis(20)));
        let email = format!("{}@x.com", "e".repeat(250));
        let refused = sign_in(&kit, &store, &email, "password").await;
        assert!(matches!(refused, Err(Refusal::TooLong(_))));
        let password = "p".repeat(MAX_PASSWORD_BYTES + 1);
        let refused = sign_in(&kit, &store, "a@x.com", &password).await;
        assert!(matches!(refused, Err(Refusal::TooLong(_))));
        assert_eq!(tries(&store, "a@x.com").await, 0);
    }
}
