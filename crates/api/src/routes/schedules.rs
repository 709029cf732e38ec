//! Schedules (issue 50; docs/schedules.md): a purchase bought again every
//! day, week or month. The body is a purchase's (`product` and that
//! product's fields, read by the purchase routes' own types) with `every`
//! and `starts_at`; `billpay_operations::schedules` checks it as a purchase
//! and keeps it, and its runner places each run through the one purchase
//! operation. Another account's schedule is a missing one (404).

use crate::envelope::{Envelope, Reply, ok};
use crate::error::ApiError;
use crate::extract::{ApiJson, Caller, from_object};
use crate::routes::purchases::{
    AirtimeIn, BetIn, CableIn, DataIn, EducationIn, ElectricityIn, EpinIn,
};
use crate::state::AppState;
use axum::extract::{Path, State};
use billpay_domain::{Kobo, Product, PurchaseRequest};
use billpay_operations::schedules::{self, Change, Plan, ScheduleError};
use billpay_store::cadence::Every;
use billpay_store::{Schedule, ScheduleRun};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(create, list))
        .routes(routes!(show, stop))
        .routes(routes!(pause))
        .routes(routes!(resume))
}

/// How often: `day`, `week` or `month` (a month's run keeps the start's day
/// of the month, or a shorter month's last day; Lagos time).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EveryIn {
    Day,
    Week,
    Month,
}

impl From<EveryIn> for Every {
    fn from(every: EveryIn) -> Every {
        match every {
            EveryIn::Day => Every::Day,
            EveryIn::Week => Every::Week,
            EveryIn::Month => Every::Month,
        }
    }
}

impl From<Every> for EveryIn {
    fn from(every: Every) -> EveryIn {
        match every {
            Every::Day => EveryIn::Day,
            Every::Week => EveryIn::Week,
            Every::Month => EveryIn::Month,
        }
    }
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"product": "airtime", "provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": "mum-airtime", "every": "month", "starts_at": "2026-12-01T09:00:00+01:00"}))]
pub struct ScheduleIn {
    /// airtime, data, cable, electricity, education, epin or betting; the
    /// body also holds that product's purchase fields (as its
    /// `POST /v1/<product>/purchase` body), `reference` being the
    /// schedule's: 8 to 90 characters, unique among the account's
    /// schedules. Run `n` is a purchase with the reference `{reference}-{n}`.
    #[schema(value_type = String, example = "airtime")]
    pub product: Product,
    pub every: EveryIn,
    /// The first run (RFC 3339, any offset), at most a day ago and within a year.
    #[schema(format = DateTime, example = "2026-12-01T09:00:00+01:00")]
    pub starts_at: String,
    /// `true`: a run that cannot be paid (balance, a limit, the product off
    /// sale) is tried again every hour until the day ends (Lagos time).
    /// Default false: it is skipped. Either way the customer is told.
    #[serde(default)]
    pub retry_later_today: bool,
    /// The product's fields and `reference`.
    #[serde(flatten)]
    #[schema(schema_with = product_fields)]
    pub fields: Map<String, Value>,
}

/// A schedule.
#[derive(Serialize, ToSchema)]
pub struct ScheduleOut {
    pub reference: String,
    #[schema(value_type = String, example = "airtime")]
    pub product: Product,
    /// The provider's slug.
    pub provider: String,
    /// What each run buys, e.g. "MTN Airtime ₦500".
    pub item: String,
    pub recipient: String,
    /// One run's price when the schedule was made (Naira); each run is priced as it is made.
    #[schema(value_type = f64)]
    pub amount: Kobo,
    pub every: EveryIn,
    pub starts_at: String,
    /// The next run (RFC 3339; a retry later today when the last could not
    /// be paid); null while paused or stopped.
    pub next_run_at: Option<String>,
    /// active, paused or stopped (for good).
    pub status: String,
    /// Why it is paused or stopped.
    pub status_reason: Option<String>,
    pub retry_later_today: bool,
    /// Runs made so far (placed or skipped).
    pub runs: u64,
    pub created_at: String,
    /// `GET /v1/schedules/{reference}` only: the last runs, newest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<RunOut>>,
}

/// A run of a schedule.
#[derive(Serialize, ToSchema)]
pub struct RunOut {
    pub n: u64,
    /// The purchase's reference: `{reference}-{n}`.
    pub reference: String,
    pub due_at: String,
    /// When it was (last) tried.
    pub at: String,
    /// placed, retrying, skipped or stopped.
    pub outcome: String,
    /// The purchase (`GET /v1/transaction/status?reference_code=…`), when placed.
    pub reference_code: Option<String>,
    /// Why it was not placed.
    pub reason: Option<String>,
    /// Earlier runs not made because the service was not running when they
    /// fell due (only the last one due is made).
    pub missed: u64,
}

#[derive(Serialize, ToSchema)]
pub struct SchedulesOut {
    pub schedules: Vec<ScheduleOut>,
}

/// Runs a schedule's history shows.
const HISTORY: u32 = 50;

impl ScheduleOut {
    fn of(schedule: Schedule, history: Option<Vec<ScheduleRun>>) -> ScheduleOut {
        let next_run_at = schedules::next_run(&schedule).map(str::to_owned);
        let runs = |runs: Vec<ScheduleRun>| {
            let run = |r: ScheduleRun| RunOut {
                reference: schedules::run_reference(&schedule.reference, r.n),
                n: r.n,
                due_at: r.due_at,
                at: r.at,
                outcome: r.outcome.as_str().to_owned(),
                reference_code: r.transaction_code,
                reason: r.reason,
                missed: r.missed,
            };
            runs.into_iter().map(run).collect()
        };
        let history = history.map(runs);
        ScheduleOut {
            reference: schedule.reference,
            product: schedule.product,
            provider: schedule.provider,
            item: schedule.label,
            recipient: schedule.recipient,
            amount: schedule.amount,
            every: schedule.every.into(),
            starts_at: schedule.starts_at,
            next_run_at,
            status: schedule.status.as_str().to_owned(),
            status_reason: schedule.status_reason,
            retry_later_today: schedule.retry_today,
            runs: schedule.runs,
            created_at: schedule.created_at,
            history,
        }
    }
}

impl From<ScheduleError> for ApiError {
    fn from(e: ScheduleError) -> Self {
        match e {
            ScheduleError::Purchase(e) => e.into(),
            ScheduleError::Invalid(why) => ApiError::Validation(why),
            ScheduleError::CustomerNotFound => ApiError::CustomerNotFound("smartcard"),
            ScheduleError::NotFound => ApiError::NotFound("Schedule not found".into()),
            stopped @ ScheduleError::Stopped => ApiError::Validation(stopped.to_string()),
        }
    }
}

/// The body's purchase, read by its product's purchase body and checked as
/// that route checks it.
fn purchase_request(
    product: Product,
    fields: Map<String, Value>,
) -> Result<PurchaseRequest, ApiError> {
    let fields = Value::Object(fields);
    match product {
        Product::Airtime => from_object::<AirtimeIn>(fields)?.try_into(),
        Product::Data => from_object::<DataIn>(fields)?.try_into(),
        Product::Epin => from_object::<EpinIn>(fields)?.try_into(),
        Product::Cable => from_object::<CableIn>(fields)?.try_into(),
        Product::Electricity => from_object::<ElectricityIn>(fields)?.try_into(),
        Product::Education => from_object::<EducationIn>(fields)?.try_into(),
        Product::Betting => from_object::<BetIn>(fields)?.try_into(),
    }
}

/// Make a schedule: the purchase is checked as `POST /v1/<product>/purchase`
/// checks it (a cable smartcard verified), nothing is charged; each run is
/// a purchase with the reference `{reference}-{n}`, from `starts_at`.
#[utoipa::path(post, path = "/schedules", tag = "schedules", request_body = ScheduleIn,
    responses((status = 200, body = Envelope<ScheduleOut>), (status = 422, description = "validation_error, invalid_provider, invalid_plan, minimum_amount, maximum_amount, duplicate_reference (a schedule of the account has it), customer_not_found (cable)"), (status = 503, description = "supplier_unavailable: the smartcard could not be verified")))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson { value, .. }: ApiJson<ScheduleIn>,
) -> Reply<ScheduleOut> {
    let request = purchase_request(value.product, value.fields)?;
    let plan = Plan {
        every: value.every.into(),
        starts_at: value.starts_at,
        retry_later_today: value.retry_later_today,
    };
    let made = schedules::create(&state.purchasing, &caller.buyer(), request, plan).await?;
    ok(ScheduleOut::of(made, None))
}

/// The account's schedules, newest first, each with its next run.
#[utoipa::path(get, path = "/schedules", tag = "schedules",
    responses((status = 200, body = Envelope<SchedulesOut>)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> Reply<SchedulesOut> {
    let found = state.purchasing.store.schedules(caller.account_id).await?;
    let schedules = found
        .into_iter()
        .map(|s| ScheduleOut::of(s, None))
        .collect();
    ok(SchedulesOut { schedules })
}

/// A schedule with its last runs.
#[utoipa::path(get, path = "/schedules/{reference}", tag = "schedules",
    params(("reference" = String, Path, description = "The schedule's reference")),
    responses((status = 200, body = Envelope<ScheduleOut>), (status = 404, description = "not_found")))]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(reference): Path<String>,
) -> Reply<ScheduleOut> {
    let store = &state.purchasing.store;
    let schedule = store
        .schedule(caller.account_id, &reference)
        .await?
        .ok_or(ScheduleError::NotFound)?;
    let history = store.schedule_runs(&schedule.id, HISTORY).await?;
    ok(ScheduleOut::of(schedule, Some(history)))
}

/// Stop a schedule for good (its reference stays used); a run already
/// placed goes on as any purchase.
#[utoipa::path(delete, path = "/schedules/{reference}", tag = "schedules",
    params(("reference" = String, Path, description = "The schedule's reference")),
    responses((status = 200, body = Envelope<ScheduleOut>), (status = 404, description = "not_found")))]
pub async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    Path(reference): Path<String>,
) -> Reply<ScheduleOut> {
    changed(&state, caller, &reference, Change::Stop).await
}

/// Pause a schedule: no run until it is resumed.
#[utoipa::path(post, path = "/schedules/{reference}/pause", tag = "schedules",
    params(("reference" = String, Path, description = "The schedule's reference")),
    responses((status = 200, body = Envelope<ScheduleOut>), (status = 404, description = "not_found"), (status = 422, description = "validation_error: the schedule is stopped")))]
pub async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    Path(reference): Path<String>,
) -> Reply<ScheduleOut> {
    changed(&state, caller, &reference, Change::Pause).await
}

/// Resume a paused schedule at its next run due from now (runs that fell
/// due while it was paused are not made).
#[utoipa::path(post, path = "/schedules/{reference}/resume", tag = "schedules",
    params(("reference" = String, Path, description = "The schedule's reference")),
    responses((status = 200, body = Envelope<ScheduleOut>), (status = 404, description = "not_found"), (status = 422, description = "validation_error: the schedule is stopped")))]
pub async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    Path(reference): Path<String>,
) -> Reply<ScheduleOut> {
    changed(&state, caller, &reference, Change::Resume).await
}

async fn changed(
    state: &AppState,
    caller: Caller,
    reference: &str,
    change: Change,
) -> Reply<ScheduleOut> {
    let store = state.purchasing.store.as_ref();
    let schedule = schedules::change(store, caller.account_id, reference, change).await?;
    ok(ScheduleOut::of(schedule, None))
}

/// The body's product fields as the document states them: one of the seven
/// purchase bodies, the one `product` names, its `reference` at most 90
/// characters (run numbers are added to it).
fn product_fields() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::Ref;
    use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, OneOfBuilder, Type};
    const BODIES: [(&str, &str); 7] = [
        ("airtime", "AirtimeIn"),
        ("data", "DataIn"),
        ("cable", "CableIn"),
        ("electricity", "ElectricityIn"),
        ("education", "EducationIn"),
        ("epin", "EpinIn"),
        ("betting", "BetIn"),
    ];
    let one_of = BODIES
        .iter()
        .fold(OneOfBuilder::new(), |one_of, (product, body)| {
            let named = ObjectBuilder::new().property(
                "product",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some([*product])),
            );
            let body = AllOfBuilder::new()
                .item(Ref::from_schema_name(*body))
                .item(named);
            one_of.item(body)
        });
    let short = ObjectBuilder::new().property(
        "reference",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(90)),
    );
    AllOfBuilder::new()
        .description(Some(
            "The product's purchase fields and the schedule's `reference` (8 to 90 characters)",
        ))
        .item(one_of)
        .item(short)
        .build()
        .into()
}
