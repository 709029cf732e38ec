//! The operator's actions, one function each over the store: resolving a
//! purchase, crediting a wallet, putting providers and plans on or off sale,
//! the account and API-key operations, resending a webhook. The CLI only
//! parses its input for these and prints what they answer; the console
//! calls the same functions, so each rule (refund once, which checks, a
//! reason where money moves) lives here once.
//!
//! Every action takes the [`Actor`] who did it and logs it with the actor:
//! the operator audit log is one column away.

pub mod accounts;
pub mod catalogue;
pub mod keys;
pub mod pricing;
pub mod reports;
pub mod transactions;
pub mod wallets;
pub mod webhooks;

use billpay_store::StoreError;
use std::fmt;

/// Who did an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// The operator CLI on a host with the database's credentials.
    Cli,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Cli => "cli",
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an action changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    /// An input broke its rule; nothing was looked up.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// What the action names does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The action does not apply to it as it is now.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    WebhookUrl(#[from] billpay_webhooks::UrlError),
    #[error(transparent)]
    Password(#[from] billpay_domain::password::PasswordError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type OpsResult<T> = Result<T, OpsError>;

/// An input that broke its rule: the `fields` it concerns (snake_case, as a
/// caller names its own inputs after them) and the rule, e.g. `amount` "must
/// be more than 0".
#[derive(Debug, thiserror::Error)]
#[error("{} {rule}", fields.join(" and "))]
pub struct Invalid {
    pub fields: &'static [&'static str],
    pub rule: String,
}

fn invalid(fields: &'static [&'static str], rule: impl Into<String>) -> OpsError {
    OpsError::Invalid(Invalid {
        fields,
        rule: rule.into(),
    })
}
