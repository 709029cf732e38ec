//! Schedules in the shop (issue 50; docs/schedules.md): "Repeat this" on a
//! receipt makes a schedule of that purchase (with the transaction PIN, as
//! a purchase asks it: each run charges the wallet), through
//! `billpay_operations::schedules` as `POST /v1/schedules` does, under the
//! account's shop key; `/dashboard/schedules` lists them with their next
//! run and their last runs, in Lagos time, to pause, resume or stop.

use super::shop::forms::Product;
use super::shop::{self, Refused, refill};
use crate::DashboardState;
use crate::format::naira;
use crate::page::{Chrome, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use billpay_domain::Reference;
use billpay_operations::purchases::Buyer;
use billpay_operations::schedules::{self, Change, Plan};
use billpay_store::cadence::Every;
use billpay_store::{RunOutcome, Schedule, TxLookup};
use billpay_webkit::filters::url_encode;
use billpay_webkit::format::lagos_time;
use billpay_webkit::{CsrfForm, NoFields};
use serde::Deserialize;

/// Runs each schedule's card shows.
const HISTORY: u32 = 5;

pub struct Listed {
    pub reference: String,
    /// `/dashboard/schedules/{reference}`: its pause, resume and stop posts.
    pub path: String,
    pub what: String,
    pub recipient: String,
    pub amount: String,
    /// "Every month", "Every week", "Every day".
    pub every: &'static str,
    pub status: &'static str,
    pub status_reason: Option<String>,
    /// Lagos time; none while paused or stopped.
    pub next: Option<String>,
    pub runs: Vec<RunLine>,
}

pub struct RunLine {
    pub when: String,
    pub outcome: &'static str,
    /// What happened, for a person.
    pub said: String,
    pub receipt: Option<String>,
}

#[derive(Template)]
#[template(path = "buyer/schedules.html")]
struct SchedulesPage {
    chrome: Chrome,
    schedules: Vec<Listed>,
    message: Option<String>,
    made: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Shown {
    /// The schedule just made (its reference).
    made: Option<String>,
}

pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(shown): Query<Shown>,
) -> PageResult {
    listing(&state, &signed_in, None, shown.made).await
}

async fn listing(
    state: &DashboardState,
    signed_in: &SignedIn,
    message: Option<String>,
    made: Option<String>,
) -> PageResult {
    let mut listed = Vec::new();
    for schedule in state.store.schedules(signed_in.user.id).await? {
        let runs = state.store.schedule_runs(&schedule.id, HISTORY).await?;
        listed.push(listed_of(schedule, runs));
    }
    Ok(render(&SchedulesPage {
        chrome: Chrome::new(signed_in, "schedules"),
        schedules: listed,
        message,
        made,
    }))
}

fn listed_of(schedule: Schedule, runs: Vec<billpay_store::ScheduleRun>) -> Listed {
    let line = |run: billpay_store::ScheduleRun| {
        let late = run.missed > 0;
        let said = match (run.outcome, &run.reason) {
            (RunOutcome::Placed, _) if late => format!(
                "Bought late, once, for {} runs missed while the service was down",
                run.missed + 1
            ),
            (RunOutcome::Placed, _) => "Bought".to_owned(),
            (RunOutcome::Retrying, Some(why)) => format!("Not paid yet, trying again today: {why}"),
            (RunOutcome::Skipped, Some(why)) => format!("Skipped: {why}"),
            (RunOutcome::Stopped, Some(why)) => format!("Stopped: {why}"),
            (outcome, _) => outcome.as_str().to_owned(),
        };
        RunLine {
            when: lagos_time(&run.at),
            outcome: run.outcome.as_str(),
            said,
            receipt: run
                .transaction_code
                .map(|code| format!("/dashboard/receipts/{}", url_encode(&code))),
        }
    };
    Listed {
        next: schedules::next_run(&schedule).map(lagos_time),
        every: every_words(schedule.every),
        status: schedule.status.as_str(),
        status_reason: schedule.status_reason.clone(),
        what: schedule.label,
        recipient: schedule.recipient,
        amount: naira(schedule.amount),
        path: format!("/dashboard/schedules/{}", url_encode(&schedule.reference)),
        reference: schedule.reference,
        runs: runs.into_iter().map(line).collect(),
    }
}

fn every_words(every: Every) -> &'static str {
    match every {
        Every::Day => "Every day",
        Every::Week => "Every week",
        Every::Month => "Every month",
    }
}

/// "Repeat this": a receipt's purchase, how often, from when.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct RepeatForm {
    /// The purchase repeated.
    code: String,
    /// Minted when the receipt was shown: a form sent twice makes one schedule.
    reference: String,
    every: String,
    /// `YYYY-MM-DDTHH:MM`, Lagos time (a `datetime-local` input).
    first: String,
    /// A checkbox: present when ticked.
    retry: Option<String>,
    pin: String,
}

/// `POST /dashboard/schedules`: the PIN, then the schedule; 303 to the list.
pub async fn create(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<RepeatForm>,
) -> PageResult {
    match repeat(&state, &signed_in, &form).await {
        Ok(reference) => {
            let to = format!("/dashboard/schedules?made={}", url_encode(&reference));
            Ok(Redirect::to(&to).into_response())
        }
        Err(Refused::Page(e)) => Err(e),
        Err(Refused::Say(message) | Refused::Short(message)) => {
            let page = listing(&state, &signed_in, Some(message), None).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
    }
}

/// Checks the form, the gate and the PIN, then makes the schedule; its reference.
async fn repeat(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: &RepeatForm,
) -> Result<String, Refused> {
    let purchasing = shop::purchasing(state)?;
    shop::may_buy(&signed_in.user).map_err(Refused::Say)?;
    let account = signed_in.user.id;
    let lookup = TxLookup::Code(form.code.clone());
    let tx = state
        .store
        .transaction(Some(account), lookup)
        .await?
        .ok_or_else(crate::page::not_found)?;
    let product = Product::of(tx.product).ok_or_else(crate::page::not_found)?;
    let every: Every = form.every.parse().map_err(|_| say("Choose how often."))?;
    let reference =
        Reference::parse(&form.reference).map_err(|_| say("Open the receipt again."))?;
    let filled = refill::form(product, &refill::of_purchase(&tx));
    let request = shop::forms::request(product, reference, &filled).map_err(Refused::Say)?;
    let key_id = shop::pin::check(state, account, &form.pin).await?;
    let plan = Plan {
        every,
        starts_at: format!("{}:00+01:00", form.first.trim()),
        retry_later_today: form.retry.is_some(),
    };
    let buyer = Buyer {
        account_id: account,
        key_id,
    };
    match schedules::create(purchasing, &buyer, request, plan).await {
        Ok(made) => Ok(made.reference),
        Err(schedules::ScheduleError::Purchase(e)) => Err(shop::refusal(e)),
        Err(schedules::ScheduleError::Invalid(why)) if why.starts_with("starts_at") => Err(say(
            "Choose when the first run is: from today, within a year.",
        )),
        Err(e) => Err(Refused::Say(format!("{e}."))),
    }
}

fn say(message: &str) -> Refused {
    Refused::Say(message.to_owned())
}

/// `POST /dashboard/schedules/{reference}/{change}`: pause, resume or stop.
pub async fn change(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path((reference, change)): Path<(String, String)>,
    _: CsrfForm<NoFields>,
) -> PageResult {
    let change = match change.as_str() {
        "pause" => Change::Pause,
        "resume" => Change::Resume,
        "stop" => Change::Stop,
        _ => return Err(crate::page::not_found()),
    };
    let account = signed_in.user.id;
    match schedules::change(state.store.as_ref(), account, &reference, change).await {
        Ok(_) => Ok(Redirect::to("/dashboard/schedules").into_response()),
        Err(schedules::ScheduleError::NotFound) => Err(crate::page::not_found()),
        Err(e) => {
            let page = listing(&state, &signed_in, Some(format!("{e}.")), None).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
    }
}
