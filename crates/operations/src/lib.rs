//! The operator's actions, one function each over the store: resolving a
//! purchase, crediting a wallet, putting providers and plans on or off sale,
//! the account and API-key operations, resending a webhook. The CLI only
//! parses its input for these and prints what they answer; the console
//! calls the same functions, so each rule (refund once, which checks, a
//! reason where money moves) lives here once.
//!
//! Every action takes the [`Actor`] who did it, checks the actor's role once
//! ([`Actor::require`]: the console's `support` operators read, requery and
//! resolve purchases and resend webhooks; only an `owner` or the CLI moves
//! money or changes anything else), and records a line in the operator log
//! (`who, when, action, subject, before → after, reason`). A change the store
//! can log in its own transaction (money moves, account status, a purchase's
//! resolution, operators) is logged there: both are stored or neither.

pub mod accounts;
pub mod audit;
pub mod bank_transfers;
pub mod batches;
pub mod brand;
pub mod catalogue;
pub mod identity;
pub mod keys;
pub mod limits;
pub mod notices;
pub mod operators;
pub mod pricing;
pub mod purchases;
pub mod rate_limit;
pub mod referrals;
pub mod reports;
pub mod schedules;
pub mod sync;
pub mod transactions;
pub mod upgrades;
pub mod wallets;
pub mod webhooks;

use billpay_store::{NewLogEntry, Operator, OperatorRole, StoreError};
use std::fmt;

/// Who did an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The operator CLI on a host with the database's credentials: may do anything.
    Cli,
    /// An operator signed in to the console.
    Operator {
        id: i64,
        email: String,
        role: OperatorRole,
    },
}

/// What an action needs the actor to be allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Look anything up.
    Read,
    /// Requery a purchase now, or resolve one whose outcome is unknown.
    ResolvePurchases,
    /// Queue a webhook event again.
    ResendWebhooks,
    /// Queue an email or SMS notice again.
    ResendNotices,
    /// Send a customer a password-reset link (to their own address).
    HelpCustomers,
    /// Credit or debit a wallet.
    MoveMoney,
    /// Create, suspend or change accounts and their keys.
    ManageAccounts,
    /// Put providers and plans on or off sale; prices.
    ChangeCatalogue,
    /// Create, disable or re-password operators.
    ManageOperators,
    /// The business's name, colour, contacts and credit on customer pages.
    ChangeBrand,
}

impl fmt::Display for Permission {
    /// What the permission covers, as a person reads it ("managing operators").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Permission::Read => "reading",
            Permission::ResolvePurchases => "requerying or resolving purchases",
            Permission::ResendWebhooks => "resending webhooks",
            Permission::ResendNotices => "resending notices",
            Permission::HelpCustomers => "sending customers password-reset links",
            Permission::MoveMoney => "moving money",
            Permission::ManageAccounts => "managing accounts and their keys",
            Permission::ChangeCatalogue => "changing the catalogue and prices",
            Permission::ManageOperators => "managing operators",
            Permission::ChangeBrand => "changing the brand",
        })
    }
}

/// Text a person typed, quoted for a message about it (“MTN”), never as
/// Rust's `Debug` would print it.
pub(crate) fn quoted(text: &str) -> String {
    format!("“{text}”")
}

impl Actor {
    /// An operator of the console, as stored.
    pub fn operator(operator: &Operator) -> Actor {
        Actor::Operator {
            id: operator.id,
            email: operator.email.clone(),
            role: operator.role,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Actor::Cli => "cli",
            Actor::Operator { .. } => "operator",
        }
    }

    /// Whether the actor may do what `permission` covers: `support` reads,
    /// requeries and resolves purchases, resends webhooks, sends a customer
    /// a password-reset link; an `owner` and
    /// the CLI may do everything.
    pub fn may(&self, permission: Permission) -> bool {
        match self {
            Actor::Cli => true,
            Actor::Operator { role, .. } => match role {
                OperatorRole::Owner => true,
                OperatorRole::Support => matches!(
                    permission,
                    Permission::Read
                        | Permission::ResolvePurchases
                        | Permission::ResendWebhooks
                        | Permission::ResendNotices
                        | Permission::HelpCustomers
                ),
            },
        }
    }

    /// [`Self::may`], as a refusal that changes nothing.
    pub fn require(&self, permission: Permission) -> OpsResult<()> {
        if self.may(permission) {
            return Ok(());
        }
        Err(OpsError::Forbidden(format!(
            "{self} may not do this: {permission} needs an owner"
        )))
    }

    /// A log line of this actor doing `action` to `subject`.
    pub fn log(&self, action: &str, subject: impl Into<String>) -> NewLogEntry {
        let (operator_id, operator_email) = match self {
            Actor::Cli => (None, None),
            Actor::Operator { id, email, .. } => (Some(*id), Some(email.clone())),
        };
        NewLogEntry {
            actor: self.as_str().to_owned(),
            operator_id,
            operator_email,
            action: action.to_owned(),
            subject: subject.into(),
            ..NewLogEntry::default()
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Cli => f.write_str("cli"),
            Actor::Operator { email, role, .. } => write!(f, "{email} ({role})"),
        }
    }
}

/// A reason typed for an action: trimmed, 1 to 500 characters.
fn reason_of(reason: Option<&str>) -> OpsResult<String> {
    let reason = reason.map(str::trim).unwrap_or_default();
    if reason.is_empty() || reason.chars().count() > 500 {
        return Err(invalid(&["reason"], "must be 1 to 500 characters"));
    }
    Ok(reason.to_owned())
}

/// An optional reason: `None` when blank, else as [`reason_of`].
fn optional_reason(reason: Option<&str>) -> OpsResult<Option<String>> {
    match reason.map(str::trim) {
        None | Some("") => Ok(None),
        Some(_) => reason_of(reason).map(Some),
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
    /// The actor's role does not allow the action.
    #[error("{0}")]
    Forbidden(String),
    /// A price rule would sell plans below their last known supplier cost;
    /// set again with the owner's confirmation (`allow_below_cost`).
    #[error("{}", below_cost_text(.0))]
    BelowCost(Vec<pricing::PlanMargin>),
    #[error(transparent)]
    WebhookUrl(#[from] billpay_webhooks::UrlError),
    #[error(transparent)]
    Password(#[from] billpay_domain::password::PasswordError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Too many wrong secrets of this person lately (the throttle's lockout).
    #[error(transparent)]
    LockedOut(#[from] billpay_domain::throttle::LockedOut),
}

pub(crate) use accounts::email_of;

/// The first few plans below cost, and how many more.
pub fn below_cost_text(below: &[pricing::PlanMargin]) -> String {
    const SHOWN: usize = 3;
    let mut text: Vec<String> = below.iter().take(SHOWN).map(ToString::to_string).collect();
    if below.len() > SHOWN {
        text.push(format!("and {} more plans", below.len() - SHOWN));
    }
    text.join("; ")
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
