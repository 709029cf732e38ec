//! One module per page group. Every change is an operations call with the
//! signed-in operator as the actor; a refusal of its role is a 403 page.

pub mod account;
pub mod audit;
pub mod brand;
pub mod customers;
pub mod limits;
pub mod login;
pub mod notifications;
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

/// The notices the console issues after an action, each a code in the
/// redirect (`?done=totp-on`) and its sentence. Only these are ever shown:
/// an unknown code shows nothing, so no link can put words on a console page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    PasswordChanged,
    TotpOn,
    TotpOff,
    AccountCreated,
    AccountActive,
    AccountSuspended,
    AccountClosed,
    AccountErased,
    Credited,
    Debited,
    ReferenceUsed,
    TierChanged,
    DashboardPasswordSet,
    PasswordResetSent,
    KeyRateLimitSet,
    KeyActive,
    KeySuspended,
    KeyRevoked,
    PaymentAssigned,
    AccountsHeld,
    AccountsPending,
    OperatorCreated,
    OperatorActive,
    OperatorDisabled,
    OperatorPasswordSet,
    TierCreated,
    TierDeveloperAccess,
    RuleSet,
    RuleSetBelowCost,
    RuleRemoved,
    ListPriceSet,
    NoSuchRule,
    OnSale,
    OffSale,
    PinLockCleared,
    PinNotLocked,
    DeveloperAccessOn,
    DeveloperAccessOff,
    SchedulesPaused,
    Requeried,
    MarkedSuccessful,
    MarkedFailed,
    HeldReleased,
    HeldRejected,
    WebhookQueued,
    Resent,
    AlertsSaved,
    AlertChannelsSaved,
    LevelLimitsSet,
    LevelRenamed,
    KycLevelSet,
    AccountLimitsSet,
    Blocked,
    AlreadyBlocked,
    Unblocked,
    NotBlocked,
    BrandSaved,
    TierOffered,
    OfferWithdrawn,
    Downgraded,
    DowngradedRefunded,
    ReferralVoided,
    ReferralRateSet,
    ReferralSettingsSet,
}

impl Notice {
    /// Every notice: its code and its sentence (after "Done: ").
    const TABLE: [(Notice, &'static str, &'static str); 64] = [
        (
            Notice::PasswordChanged,
            "password-changed",
            "password changed; your other sessions ended",
        ),
        (Notice::TotpOn, "totp-on", "TOTP is on"),
        (Notice::TotpOff, "totp-off", "TOTP is off"),
        (Notice::AccountCreated, "account-created", "account created"),
        (Notice::AccountActive, "account-active", "account active"),
        (
            Notice::AccountSuspended,
            "account-suspended",
            "account suspended",
        ),
        (Notice::AccountClosed, "account-closed", "account closed"),
        (
            Notice::AccountErased,
            "account-erased",
            "the customer's personal data is erased",
        ),
        (Notice::Credited, "credited", "wallet credited"),
        (Notice::Debited, "debited", "wallet debited"),
        (
            Notice::ReferenceUsed,
            "reference-used",
            "that reference was used before, nothing changed",
        ),
        (Notice::TierChanged, "tier-changed", "tier changed"),
        (
            Notice::TierOffered,
            "tier-offered",
            "tier offered to customers",
        ),
        (
            Notice::OfferWithdrawn,
            "offer-withdrawn",
            "offer withdrawn; upgrades bought stay",
        ),
        (
            Notice::Downgraded,
            "downgraded",
            "back to list prices, nothing refunded",
        ),
        (
            Notice::ReferralVoided,
            "referral-voided",
            "referral voided: it earns its referrer nothing from now on",
        ),
        (
            Notice::ReferralRateSet,
            "referral-rate-set",
            "referral commission set",
        ),
        (
            Notice::ReferralSettingsSet,
            "referral-settings-set",
            "referral bonus and least move set",
        ),
        (
            Notice::DowngradedRefunded,
            "downgraded-refunded",
            "back to list prices, the upgrade fee refunded",
        ),
        (
            Notice::PasswordResetSent,
            "password-reset-sent",
            "password-reset link emailed to the customer",
        ),
        (
            Notice::PinLockCleared,
            "pin-lock-cleared",
            "PIN lock cleared: the customer can buy again",
        ),
        (
            Notice::DeveloperAccessOn,
            "developer-access-on",
            "developer access on: the customer's dashboard shows API keys and webhooks",
        ),
        (
            Notice::DeveloperAccessOff,
            "developer-access-off",
            "developer access off: API keys and webhooks are hidden from their dashboard (their keys still work)",
        ),
        (
            Notice::SchedulesPaused,
            "schedules-paused",
            "the customer's schedules are paused: no run until they resume one",
        ),
        (
            Notice::PinNotLocked,
            "pin-not-locked",
            "purchases were not locked, nothing changed",
        ),
        (
            Notice::DashboardPasswordSet,
            "dashboard-password-set",
            "dashboard password set; their dashboard sessions ended",
        ),
        (
            Notice::KeyRateLimitSet,
            "key-rate-limit-set",
            "key rate limit set",
        ),
        (Notice::KeyActive, "key-active", "key active"),
        (Notice::KeySuspended, "key-suspended", "key suspended"),
        (Notice::KeyRevoked, "key-revoked", "key revoked"),
        (
            Notice::PaymentAssigned,
            "payment-assigned",
            "payment credited to the account, less the funding fee",
        ),
        (
            Notice::AccountsHeld,
            "accounts-held",
            "virtual accounts held at the gateway",
        ),
        (
            Notice::AccountsPending,
            "accounts-pending",
            "the gateway is assigning the accounts: they appear here when it has",
        ),
        (
            Notice::OperatorCreated,
            "operator-created",
            "operator created",
        ),
        (Notice::OperatorActive, "operator-active", "operator active"),
        (
            Notice::OperatorDisabled,
            "operator-disabled",
            "operator disabled",
        ),
        (
            Notice::OperatorPasswordSet,
            "operator-password-set",
            "password set; their sessions ended",
        ),
        (Notice::TierCreated, "tier-created", "tier created"),
        (
            Notice::TierDeveloperAccess,
            "tier-developer-access",
            "the tier's developer access changed",
        ),
        (Notice::RuleSet, "rule-set", "rule set"),
        (
            Notice::RuleSetBelowCost,
            "rule-set-below-cost",
            "rule set, below cost as you confirmed",
        ),
        (Notice::ListPriceSet, "list-price-set", "list price changed"),
        (Notice::RuleRemoved, "rule-removed", "rule removed"),
        (
            Notice::NoSuchRule,
            "no-such-rule",
            "the tier had no such rule, nothing changed",
        ),
        (Notice::OnSale, "on-sale", "put on sale"),
        (Notice::OffSale, "off-sale", "taken off sale"),
        (Notice::Requeried, "requeried", "requeried"),
        (
            Notice::MarkedSuccessful,
            "marked-successful",
            "marked successful",
        ),
        (Notice::MarkedFailed, "marked-failed", "marked failed"),
        (
            Notice::HeldReleased,
            "held-released",
            "released: it goes to the supplier now",
        ),
        (
            Notice::HeldRejected,
            "held-rejected",
            "rejected: failed, and the wallet refunded once",
        ),
        (
            Notice::WebhookQueued,
            "webhook-queued",
            "webhook event queued again",
        ),
        (Notice::Resent, "notice-queued", "notice queued again"),
        (Notice::AlertsSaved, "alerts-saved", "your alerts are saved"),
        (
            Notice::AlertChannelsSaved,
            "alert-channels-saved",
            "how you get alerts is saved",
        ),
        (
            Notice::LevelLimitsSet,
            "level-limits-set",
            "the level's limits are saved: the next purchase is checked against them",
        ),
        (
            Notice::LevelRenamed,
            "level-renamed",
            "the level's name is saved",
        ),
        (
            Notice::KycLevelSet,
            "kyc-level-set",
            "KYC level set: the next purchase is checked against its limits",
        ),
        (
            Notice::AccountLimitsSet,
            "account-limits-set",
            "the account's own limits are saved",
        ),
        (
            Notice::Blocked,
            "blocked",
            "added to the blocklist: its purchases are refused",
        ),
        (
            Notice::AlreadyBlocked,
            "already-blocked",
            "it was on the blocklist already, nothing changed",
        ),
        (Notice::Unblocked, "unblocked", "removed from the blocklist"),
        (
            Notice::NotBlocked,
            "not-blocked",
            "it was not on the blocklist, nothing changed",
        ),
        (
            Notice::BrandSaved,
            "brand-saved",
            "the brand is saved: customer pages and emails wear it within a second",
        ),
    ];

    fn entry(self) -> (Notice, &'static str, &'static str) {
        let found = Self::TABLE.into_iter().find(|(n, _, _)| *n == self);
        found.expect("every notice is in the table")
    }

    pub fn code(self) -> &'static str {
        self.entry().1
    }

    pub fn sentence(self) -> &'static str {
        self.entry().2
    }

    /// The notice of a code, `None` for any other text.
    pub fn of_code(code: &str) -> Option<Notice> {
        let found = Self::TABLE.into_iter().find(|(_, c, _)| *c == code);
        found.map(|(notice, _, _)| notice)
    }
}

/// What the layout needs on every signed-in page.
pub struct Chrome {
    pub email: String,
    pub role: &'static str,
    pub owner: bool,
    pub csrf: String,
    pub nav: &'static str,
    /// What the last action did (`?done=<code>` after its redirect).
    pub done: Option<&'static str>,
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
            done: done.notice().map(Notice::sentence),
        }
    }
}

/// `?done=<code>`: the notice an action's redirect shows ([`Notice`]).
#[derive(Deserialize, Default)]
pub struct Done {
    #[serde(default)]
    pub done: Option<String>,
}

impl Done {
    pub fn notice(&self) -> Option<Notice> {
        self.done.as_deref().and_then(Notice::of_code)
    }
}

/// The operator of this request, as the operations know actors.
pub fn actor(signed_in: &SignedIn) -> Actor {
    Actor::operator(&signed_in.user)
}

/// Back to `to` with a notice of what was done (303: the browser GETs it).
pub fn done(to: &str, notice: Notice) -> Response {
    let separator = if to.contains('?') { '&' } else { '?' };
    Redirect::to(&format!("{to}{separator}done={}", notice.code())).into_response()
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
        OpsError::LockedOut(_) => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::BAD_REQUEST,
    };
    let page = format!(
        "<!doctype html><title>Refused · billpay console</title>\
         <link rel=\"stylesheet\" href=\"/admin/assets/kit.css\">\
         <link rel=\"stylesheet\" href=\"/admin/assets/style.css\">\
         <main><div class=\"card\"><h1>Not done</h1><p class=\"error\" role=\"alert\" id=\"refusal\">{}</p>\
         <p><a href=\"/admin\">Back to the console</a></p></div></main>",
        // the refusal text is ours, but it may quote what was typed
        billpay_webkit::escape(&error.to_string())
    );
    (status, axum::response::Html(page)).into_response().into()
}

/// A page only an actor with `permission` sees (the operators, the log).
pub fn require(signed_in: &SignedIn, permission: Permission) -> Result<(), PageError> {
    actor(signed_in).require(permission).map_err(refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_notice_has_one_code_and_a_sentence() {
        for (notice, code, sentence) in Notice::TABLE {
            assert_eq!(Notice::of_code(code), Some(notice), "{code} is unique");
            assert_eq!(notice.code(), code);
            assert!(!sentence.is_empty());
            let safe = |c: char| c.is_ascii_lowercase() || c == '-';
            assert!(code.chars().all(safe), "{code} needs no encoding");
        }
        assert_eq!(Notice::of_code("TOTP is on"), None);
        assert_eq!(Notice::of_code(""), None);
    }
}
