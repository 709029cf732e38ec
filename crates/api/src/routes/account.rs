//! `GET /v1/account`: the caller's account, its KYC level, its limits and
//! what it used of them (docs/limits.md). The balance stays its own
//! endpoint, so its hot path reads nothing more.
//!
//! `POST /v1/account/identity`: the customer's own BVN or NIN check, which
//! raises a level-0 account to level 1 (docs/limits.md "Level 1 by BVN or
//! NIN"): the shop's flow, `billpay_operations::identity::verify`. The
//! number is an `IdNumber` from the moment the body is read: no answer, error
//! or log line of this route holds more than its last 4 digits. It has no
//! `/test` twin: it is not a purchase, and a test check would either pay the
//! gateway's fee or answer something no registry said.

use crate::envelope::{Envelope, Reply, ok};
use crate::error::ApiError;
use crate::extract::{ApiJson, Caller};
use crate::schema;
use crate::state::AppState;
use axum::extract::State;
use billpay_domain::{Kobo, Phone};
use billpay_funding::identity::{Claim, IdKind, IdNumber};
use billpay_operations::identity::{
    self, Outcome, Request, birth_date, fields_in_words, full_name, left_in_words,
};
use billpay_store::limits::{IDENTITY_CHECKS_PER_DAY, Kyc, Limits};
use serde::{Deserialize, Deserializer, Serialize};
use time::macros::format_description;
use time::{Date, OffsetDateTime};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(account))
        .routes(routes!(verify_identity))
}

/// Limits in Naira or purchases; `null`: no limit.
#[derive(Serialize, ToSchema)]
pub struct LimitsOut {
    /// Largest single purchase, Naira.
    #[schema(value_type = Option<f64>, example = 10000.0)]
    pub max_purchase: Option<Kobo>,
    /// Spent per Lagos day, Naira.
    #[schema(value_type = Option<f64>, example = 50000.0)]
    pub daily_value: Option<Kobo>,
    /// Purchases per Lagos day.
    #[schema(example = 20)]
    pub daily_count: Option<i64>,
    /// Spent over the last 30 Lagos days, Naira.
    #[schema(value_type = Option<f64>, example = 300000.0)]
    pub monthly_value: Option<Kobo>,
    /// Purchases over the last 30 Lagos days.
    #[schema(example = 300)]
    pub monthly_count: Option<i64>,
    /// Largest wallet balance, Naira: above it, level 0's limits apply.
    #[schema(value_type = Option<f64>, example = 300000.0)]
    pub max_balance: Option<Kobo>,
    /// Spent on one recipient per Lagos day, Naira.
    #[schema(value_type = Option<f64>, example = 20000.0)]
    pub per_recipient_daily: Option<Kobo>,
}

impl From<Limits> for LimitsOut {
    fn from(l: Limits) -> Self {
        LimitsOut {
            max_purchase: l.max_purchase,
            daily_value: l.daily_value,
            daily_count: l.daily_count,
            monthly_value: l.monthly_value,
            monthly_count: l.monthly_count,
            max_balance: l.max_balance,
            per_recipient_daily: l.per_recipient_daily,
        }
    }
}

/// What the account spent: today (Lagos) and over the last 30 Lagos days.
#[derive(Serialize, ToSchema)]
pub struct UsageOut {
    #[schema(value_type = f64, example = 3500.0)]
    pub daily_value: Kobo,
    #[schema(example = 3)]
    pub daily_count: i64,
    #[schema(value_type = f64, example = 42000.0)]
    pub monthly_value: Kobo,
    #[schema(example = 31)]
    pub monthly_count: i64,
}

#[derive(Serialize, ToSchema)]
pub struct AccountOut {
    #[schema(example = "0b0e3c1e-8a4f-4b7e-9d6a-2f1c3e4d5a6b")]
    pub account_id: String,
    #[schema(example = "Test Co")]
    pub name: String,
    /// 0 (email verified: every account starts there), 1 (BVN or NIN verified), 2 (approved by the operator).
    #[schema(example = 1)]
    pub kyc_level: u8,
    /// The limits that apply (the account's own over its level's).
    pub limits: LimitsOut,
    pub usage: UsageOut,
    /// Naira that the daily and 30-day value limits still let the account
    /// spend today (`null`: neither applies).
    #[schema(value_type = Option<f64>, example = 46500.0)]
    pub left_today: Option<Kobo>,
    /// The balance is over the largest balance: level 0's limits apply until
    /// the operator reviews the account.
    pub held_to_level0: bool,
}

/// The caller's account: its KYC level, its limits and what it used of them.
#[utoipa::path(get, path = "/account", tag = "wallet",
    responses((status = 200, body = Envelope<AccountOut>)))]
pub async fn account(State(state): State<AppState>, caller: Caller) -> Reply<AccountOut> {
    let id = caller.account_id;
    let account = state.purchasing.store.account(id).await?;
    let account =
        account.ok_or_else(|| crate::error::ApiError::NotFound("account not found".into()))?;
    let view = state.purchasing.store.account_limits(id).await?;
    let left_today = view.left_today();
    ok(AccountOut {
        account_id: id.to_string(),
        name: account.name,
        kyc_level: view.kyc.level,
        limits: view.limits.into(),
        usage: UsageOut {
            daily_value: view.usage.daily_value,
            daily_count: view.usage.daily_count,
            monthly_value: view.usage.monthly_value,
            monthly_count: view.usage.monthly_count,
        },
        left_today,
        held_to_level0: view.held_to_level0,
    })
}

/// Which number an identity check is of.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum IdMethod {
    Bvn,
    Nin,
}

/// A customer's own BVN or NIN check: the number and the person's details
/// as on it. Names are compared with the registry's in any order.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"method": "bvn", "number": "22222222226", "first_name": "Olatunde", "last_name": "Ogunboyejo", "date_of_birth": "1993-04-27", "phone": "08142223149"}))]
pub struct IdentityIn {
    pub method: IdMethod,
    /// The 11-digit BVN or NIN, as a string (spaces and dashes allowed).
    /// Never stored, logged or sent back: only its last 4 digits are kept.
    #[serde(deserialize_with = "id_number")]
    #[schema(schema_with = schema::id_number)]
    pub number: IdNumber,
    #[schema(schema_with = schema::first_name)]
    pub first_name: String,
    #[serde(default)]
    #[schema(schema_with = schema::middle_name)]
    pub middle_name: Option<String>,
    #[schema(schema_with = schema::first_name)]
    pub last_name: String,
    #[schema(schema_with = schema::birth_date)]
    pub date_of_birth: String,
    /// For a BVN (required then): the phone number registered with it.
    #[serde(default)]
    #[schema(schema_with = schema::optional_phone)]
    pub phone: Option<String>,
}

/// The identity body as the document states it: one variant per method, so
/// the rule `request_of` applies (a BVN's check needs the phone registered
/// with it; a NIN's reads none) is in the schema too and a client or a fuzzer
/// reading the document sends what the route takes. Each variant is
/// [`IdentityIn`]'s fields with its method's own constraints added.
pub struct IdentityRequest;

impl utoipa::PartialSchema for IdentityRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, OneOfBuilder, Type};
        let method = |name: &str| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some([name]))
        };
        let bvn = ObjectBuilder::new()
            .property("method", method("bvn"))
            .property("phone", schema::phone())
            .required("method")
            .required("phone")
            .description(Some(
                "A BVN: the phone number registered with it is required.",
            ));
        let nin = ObjectBuilder::new()
            .property("method", method("nin"))
            .required("method")
            .description(Some("A NIN: a phone, if given, is checked but not used."));
        let variant = |own: ObjectBuilder| {
            AllOfBuilder::new()
                .item(utoipa::openapi::Ref::from_schema_name(IdentityIn::name()))
                .item(own)
        };
        OneOfBuilder::new()
            .item(variant(bvn))
            .item(variant(nin))
            .into()
    }
}

impl ToSchema for IdentityRequest {
    /// The variants refer to `IdentityIn`: it is in the document's schemas.
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.push((IdentityIn::name().into(), IdentityIn::schema()));
        <IdentityIn as ToSchema>::schemas(schemas);
    }
}

/// The number, read without ever putting it in an error (serde's own
/// messages quote the value).
fn id_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<IdNumber, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => {
            IdNumber::parse(&text).map_err(|_| D::Error::custom("must be 11 digits"))
        }
        _ => Err(D::Error::custom("must be a string of 11 digits")),
    }
}

/// The body read into a check, or what is wrong with it (the field named).
fn request_of(body: IdentityIn) -> Result<Request, ApiError> {
    let kind = match body.method {
        IdMethod::Bvn => IdKind::Bvn,
        IdMethod::Nin => IdKind::Nin,
    };
    let invalid = |message: &str| ApiError::Validation(message.to_owned());
    for (field, value, required) in [
        ("first_name", body.first_name.as_str(), true),
        (
            "middle_name",
            body.middle_name.as_deref().unwrap_or_default(),
            false,
        ),
        ("last_name", body.last_name.as_str(), true),
    ] {
        if required && value.trim().is_empty() {
            return Err(ApiError::Validation(format!("{field}: must not be blank")));
        }
        if value.chars().count() > schema::NAME_PART_MAX {
            return Err(ApiError::Validation(format!(
                "{field}: at most {} characters",
                schema::NAME_PART_MAX
            )));
        }
    }
    let typed = [
        body.first_name.as_str(),
        body.middle_name.as_deref().unwrap_or_default(),
        body.last_name.as_str(),
    ]
    .join(" ");
    let name = full_name(&typed).ok_or_else(|| invalid("first_name: must not be blank"))?;
    let iso = format_description!("[year]-[month]-[day]");
    let date_of_birth = Date::parse(&body.date_of_birth, iso)
        .ok()
        .and(birth_date(&body.date_of_birth))
        .ok_or_else(|| {
            invalid("date_of_birth: must be a date before today, from 1900, as YYYY-MM-DD")
        })?;
    // A phone given is checked whatever the method (the document's rule);
    // only a BVN's check reads it.
    let phone = match body.phone.as_deref() {
        Some(phone) => Some(
            Phone::parse(phone)
                .map_err(|_| invalid("phone: must be a Nigerian phone number (0XXXXXXXXXX)"))?
                .as_str()
                .to_owned(),
        ),
        None => None,
    };
    let phone = match kind {
        IdKind::Bvn if phone.is_none() => {
            return Err(invalid("phone: is required for a BVN check"));
        }
        IdKind::Bvn => phone,
        IdKind::Nin => None,
    };
    Ok(Request {
        kind,
        number: body.number,
        claim: Claim {
            name,
            date_of_birth,
            phone,
        },
    })
}

/// `data` of an identity check that passed (or was not needed).
#[derive(Serialize, ToSchema)]
pub struct IdentityOut {
    /// The account's KYC level now: 1 after a pass, or the level it had
    /// already (1 or 2) when no check was needed.
    #[schema(example = 1)]
    pub kyc_level: u8,
    /// How the level was reached: `bvn`, `nin`, `operator` or `created`
    /// (`null` for an account whose level nobody set since the levels came).
    #[schema(example = "bvn")]
    pub method: Option<String>,
    /// The last 4 digits of the BVN or NIN verified (the only ones kept).
    #[schema(example = "2226")]
    pub last4: Option<String>,
    /// Whether this request checked the number (`false`: the account was
    /// at level 1 or 2 already, so nothing was checked or counted).
    pub checked: bool,
}

fn out(kyc: Kyc, checked: bool) -> IdentityOut {
    IdentityOut {
        kyc_level: kyc.level,
        method: kyc.method,
        last4: kyc.last4,
        checked,
    }
}

/// The caller's own BVN or NIN check: on a match the account moves from
/// level 0 to level 1 at once (its limits rise). At most 3 checks per
/// account per Lagos day, counted before the gateway is asked; the number
/// is never stored, logged or sent back (only its last 4 digits).
#[utoipa::path(post, path = "/account/identity", tag = "wallet", operation_id = "verify_identity", request_body = IdentityRequest,
    responses(
        (status = 200, body = Envelope<IdentityOut>),
        (status = 403, description = "suspended: the key or its account; email_unconfirmed: the account's email address is not confirmed yet"),
        (status = 422, description = "validation_error; identity_mismatch: the number is known but the name, date of birth or phone number given did not match; identity_not_found: no such BVN or NIN"),
        (status = 429, description = "rate_limited: retry after `Retry-After` seconds; too_many_attempts: the day's 3 checks are used; retry after `Retry-After` seconds (the next Lagos midnight)"),
        (status = 503, description = "identity_unavailable: no identity checks are configured, or the verification service did not answer (that check counts)"),
    ))]
pub async fn verify_identity(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson { value: body, .. }: ApiJson<IdentityIn>,
) -> Reply<IdentityOut> {
    let request = request_of(body)?;
    let title = request.kind.title();
    let checker = state.identity_check();
    let outcome = identity::verify(
        state.purchasing.store.as_ref(),
        checker,
        caller.account_id,
        request,
    )
    .await?;
    match outcome {
        Outcome::Passed(kyc) => ok(out(kyc, true)),
        Outcome::AlreadyVerified(kyc) => ok(out(kyc, false)),
        Outcome::Failed { mismatched, left } => Err(ApiError::IdentityMismatch(format!(
            "Your {title} was found, but {} did not match what it holds. Nothing has changed. {}",
            fields_in_words(&mismatched),
            left_in_words(left)
        ))),
        Outcome::Unknown { left } => Err(ApiError::IdentityNotFound(format!(
            "There is no {title} with those 11 digits. Nothing has changed. {}",
            left_in_words(left)
        ))),
        Outcome::NoAnswer { left } => Err(ApiError::IdentityUnavailable(format!(
            "The check could not be made just now: the verification service did not answer. Nothing has changed; try again later. {}",
            left_in_words(left)
        ))),
        Outcome::TooMany { retry_at } => {
            let retry_after = (retry_at - OffsetDateTime::now_utc())
                .whole_seconds()
                .max(1) as u64;
            Err(ApiError::TooManyAttempts {
                retry_after,
                message: format!(
                    "This account has used today's {IDENTITY_CHECKS_PER_DAY} identity checks. Try again from {} 00:00 WAT (midnight in Lagos), or ask the business to verify the account.",
                    retry_at.to_offset(billpay_store::clock::LAGOS).date()
                ),
            })
        }
        Outcome::Unconfirmed => Err(ApiError::EmailUnconfirmed(
            "Confirm the account's email address first (the code emailed at sign-up), then check again.".into(),
        )),
        Outcome::Unavailable => Err(ApiError::IdentityUnavailable(
            "Identity checks are not offered here: no verification service is configured. Ask the business to verify the account.".into(),
        )),
    }
}
