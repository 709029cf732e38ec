//! The one error type of the HTTP edge. Each variant is a slug of the
//! contract; internal causes are logged, never sent.

use crate::envelope::{ErrorBody, Failure};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use billpay_domain::Kobo;
use billpay_operations::purchases::{self as said, PurchaseError};
use billpay_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("Request body is not valid JSON: {0}")]
    InvalidJson(String),
    #[error("Missing API key: send Authorization: Bearer <API_KEY>")]
    MissingApiKey,
    #[error("{}", said::INVALID_API_KEY)]
    InvalidApiKey,
    #[error("{0}")]
    Suspended(&'static str),
    #[error("{0}")]
    NotFound(String),
    #[error("Method not allowed on this path")]
    MethodNotAllowed,
    /// The body is over the route's limit (KiB): 64, or a batch's 1024.
    #[error("Request body is larger than {kib} KiB")]
    PayloadTooLarge { kib: usize },
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
    #[error("The request body did not arrive in time")]
    RequestTimeout,
    #[error("{0}")]
    Validation(String),
    #[error("{}", said::INVALID_PROVIDER)]
    InvalidProvider,
    #[error("{0}")]
    MinimumAmount(String),
    #[error("{0}")]
    MaximumAmount(String),
    #[error("{}", said::INVALID_PLAN)]
    InvalidPlan,
    #[error("{}", said::insufficient_balance(*.balance, *.needed))]
    InsufficientBalance {
        /// The balance when refused, when it could be read.
        balance: Option<Kobo>,
        /// What the purchase costs.
        needed: Option<Kobo>,
    },
    /// `insufficient_balance` of a balance other than the wallet's (the
    /// referral bonus), in its own words.
    #[error("{0}")]
    BalanceShort(String),
    /// `duplicate_reference` of a move whose reference was used with
    /// another amount, in its own words.
    #[error("{0}")]
    ReferenceReused(String),
    #[error("{}", said::duplicate_reference(.0.as_deref()))]
    DuplicateReference(
        /// The `reference_code` of the transaction that has the reference.
        Option<String>,
    ),
    #[error("Customer not found: no such {0}")]
    CustomerNotFound(&'static str),
    #[error("{}", said::rate_limited(*.retry_after))]
    RateLimited { retry_after: u64 },
    #[error("Internal error")]
    Internal(String),
    #[error("{}", said::SUPPLIER_UNAVAILABLE)]
    SupplierUnavailable,
    #[error("Bad request")]
    BadRequest,
    /// Over one of the account's limits (docs/limits.md): which, and what is left.
    #[error("{0}")]
    LimitExceeded(String),
    /// The account or the recipient is on the operator's blocklist.
    #[error("{}", billpay_store::BLOCKED)]
    Blocked,
    /// An identity check found the BVN or NIN but not the details given.
    #[error("{0}")]
    IdentityMismatch(String),
    /// An identity check found no such BVN or NIN.
    #[error("{0}")]
    IdentityNotFound(String),
    /// The identity check cannot be made: no gateway offers it, or it did not answer.
    #[error("{0}")]
    IdentityUnavailable(String),
    /// Today's identity checks are used; the next is allowed in `retry_after` seconds.
    #[error("{message}")]
    TooManyAttempts { retry_after: u64, message: String },
    /// The account's email address is not confirmed yet.
    #[error("{0}")]
    EmailUnconfirmed(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        use ApiError::*;
        match self {
            InvalidJson(_) | BadRequest => StatusCode::BAD_REQUEST,
            MissingApiKey | InvalidApiKey => StatusCode::UNAUTHORIZED,
            Suspended(_) | Blocked | EmailUnconfirmed(_) => StatusCode::FORBIDDEN,
            NotFound(_) => StatusCode::NOT_FOUND,
            MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Validation(_)
            | InvalidProvider
            | MinimumAmount(_)
            | MaximumAmount(_)
            | InvalidPlan
            | InsufficientBalance { .. }
            | BalanceShort(_)
            | ReferenceReused(_)
            | DuplicateReference(_)
            | LimitExceeded(_)
            | IdentityMismatch(_)
            | IdentityNotFound(_)
            | CustomerNotFound(_) => StatusCode::UNPROCESSABLE_ENTITY,
            RateLimited { .. } | TooManyAttempts { .. } => StatusCode::TOO_MANY_REQUESTS,
            Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            SupplierUnavailable | IdentityUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn slug(&self) -> &'static str {
        use ApiError::*;
        match self {
            InvalidJson(_) => "invalid_json",
            BadRequest => "bad_request",
            MissingApiKey => "missing_api_key",
            InvalidApiKey => "invalid_api_key",
            Suspended(_) => "suspended",
            NotFound(_) => "not_found",
            MethodNotAllowed => "method_not_allowed",
            PayloadTooLarge { .. } => "payload_too_large",
            RequestTimeout => "request_timeout",
            UnsupportedMediaType => "unsupported_media_type",
            Validation(_) => "validation_error",
            InvalidProvider => "invalid_provider",
            MinimumAmount(_) => "minimum_amount",
            MaximumAmount(_) => "maximum_amount",
            InvalidPlan => "invalid_plan",
            InsufficientBalance { .. } | BalanceShort(_) => "insufficient_balance",
            DuplicateReference(_) | ReferenceReused(_) => "duplicate_reference",
            CustomerNotFound(_) => "customer_not_found",
            RateLimited { .. } => "rate_limited",
            Internal(_) => "internal_error",
            SupplierUnavailable => "supplier_unavailable",
            LimitExceeded(_) => "limit_exceeded",
            Blocked => "blocked",
            IdentityMismatch(_) => "identity_mismatch",
            IdentityNotFound(_) => "identity_not_found",
            IdentityUnavailable(_) => "identity_unavailable",
            TooManyAttempts { .. } => "too_many_attempts",
            EmailUnconfirmed(_) => "email_unconfirmed",
        }
    }

    /// The error for a bare status produced outside our handlers (e.g. 405).
    pub fn from_status(status: StatusCode) -> ApiError {
        match status {
            StatusCode::NOT_FOUND => ApiError::NotFound("No such endpoint".into()),
            StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge { kib: 64 },
            StatusCode::REQUEST_TIMEOUT => ApiError::RequestTimeout,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType,
            StatusCode::UNAUTHORIZED => ApiError::MissingApiKey,
            StatusCode::TOO_MANY_REQUESTS => ApiError::RateLimited { retry_after: 1 },
            s if s.is_client_error() => ApiError::BadRequest,
            _ => ApiError::Internal(format!("unexpected status {status}")),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(cause) = &self {
            tracing::error!(%cause, "internal error");
        }
        let status = self.status();
        let body = ErrorBody {
            code: status.as_u16(),
            status: Failure::Error,
            message: self.to_string(),
            error: self.slug(),
            reference_code: match &self {
                ApiError::DuplicateReference(code) => code.clone(),
                _ => None,
            },
        };
        let mut response = (status, axum::Json(body)).into_response();
        if let ApiError::RateLimited { retry_after }
        | ApiError::TooManyAttempts { retry_after, .. } = self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        }
        response
    }
}

/// The purchase operation's refusals as the contract's errors (the same
/// words: `Display` is the operation's).
impl From<PurchaseError> for ApiError {
    fn from(e: PurchaseError) -> Self {
        match e {
            PurchaseError::KeyRevoked => ApiError::InvalidApiKey,
            PurchaseError::KeySuspended => ApiError::Suspended(said::KEY_SUSPENDED),
            PurchaseError::AccountSuspended => ApiError::Suspended(said::ACCOUNT_SUSPENDED),
            PurchaseError::RateLimited { retry_after } => ApiError::RateLimited { retry_after },
            PurchaseError::InvalidProvider => ApiError::InvalidProvider,
            PurchaseError::InvalidPlan => ApiError::InvalidPlan,
            PurchaseError::MinimumAmount(why) => ApiError::MinimumAmount(why),
            PurchaseError::MaximumAmount(why) => ApiError::MaximumAmount(why),
            PurchaseError::Invalid(why) => ApiError::Validation(why),
            PurchaseError::InsufficientBalance { balance, needed } => {
                ApiError::InsufficientBalance { balance, needed }
            }
            PurchaseError::DuplicateReference(code) => ApiError::DuplicateReference(code),
            PurchaseError::LimitExceeded(why) => ApiError::LimitExceeded(why),
            PurchaseError::Blocked => ApiError::Blocked,
            PurchaseError::SupplierUnavailable => ApiError::SupplierUnavailable,
            PurchaseError::Store(StoreError::NotFound(what)) => {
                ApiError::NotFound(format!("{what} not found"))
            }
            PurchaseError::Store(other) => ApiError::Internal(other.to_string()),
        }
    }
}

/// A store refusal as the purchase operation says it; not found is 404;
/// anything else internal.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        PurchaseError::from(e).into()
    }
}

impl From<billpay_domain::catalogue::LookupError> for ApiError {
    fn from(e: billpay_domain::catalogue::LookupError) -> Self {
        PurchaseError::from(e).into()
    }
}

impl From<billpay_domain::FieldError> for ApiError {
    fn from(e: billpay_domain::FieldError) -> Self {
        PurchaseError::from(e).into()
    }
}

impl From<billpay_domain::AmountError> for ApiError {
    fn from(e: billpay_domain::AmountError) -> Self {
        PurchaseError::from(e).into()
    }
}

impl From<billpay_domain::order::OrderError> for ApiError {
    fn from(e: billpay_domain::order::OrderError) -> Self {
        PurchaseError::from(e).into()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_after_is_said_in_good_english() {
        let one = ApiError::RateLimited { retry_after: 1 }.to_string();
        assert_eq!(one, "Rate limit exceeded; retry after 1 second");
        let two = ApiError::RateLimited { retry_after: 2 }.to_string();
        assert_eq!(two, "Rate limit exceeded; retry after 2 seconds");
    }

    #[test]
    fn refusals_say_what_they_know() {
        let short = ApiError::InsufficientBalance {
            balance: Some(Kobo(10_050)),
            needed: Some(Kobo(50_000)),
        };
        assert_eq!(
            short.to_string(),
            "Insufficient wallet balance: the balance is 100.50 Naira and this purchase needs 500.00 Naira"
        );
        let used = ApiError::DuplicateReference(Some("BP17".into()));
        assert_eq!(
            used.to_string(),
            "Duplicate reference: this reference has already been used by transaction BP17"
        );
        let response = used.into_response();
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    }
}
