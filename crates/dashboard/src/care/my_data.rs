//! `POST /dashboard/account/data`: "Download my data" (NDPA, issue 32). The
//! signed-in customer's own data — profile, notification choices, API keys
//! (prefix and status, never a secret), webhook URLs, saved recipients,
//! every wallet statement line and every purchase — as one JSON document or
//! one CSV file, times in Lagos time (WAT).
//!
//! The current password is asked again (under the account's throttle, like
//! a change of email): the file is a whole history, and a session left open
//! on a shared computer should not be enough to take it. Everything is read
//! by the signed-in account's id only. The statement and the purchases are
//! streamed a page at a time ([`PAGE`] rows per read), so a large account is
//! never held in memory at once.

use super::account::{current_password, refuse};
use crate::DashboardState;
use crate::session::SignedIn;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use billpay_domain::AccountId;
use billpay_store::{
    Account, LedgerEntry, NoticeTopic, PurchaseCursor, PurchaseRecord, SharedStore, StoreError,
};
use billpay_webkit::format::sortable_time;
use billpay_webkit::{CsrfForm, PageResult};
use futures_util::stream::{self, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};

/// Rows read from the store at a time.
const PAGE: u32 = 500;

#[derive(Deserialize)]
pub struct DataFields {
    #[serde(default)]
    current: String,
    #[serde(default)]
    format: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Csv,
}

pub async fn download(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(typed): CsrfForm<DataFields>,
) -> PageResult {
    let format = match typed.format.as_str() {
        "json" => Format::Json,
        "csv" => Format::Csv,
        _ => return refuse(&state, &signed_in, "Choose JSON or CSV.").await,
    };
    if let Err(message) = current_password(&state, &signed_in, &typed.current).await? {
        return refuse(&state, &signed_in, message).await;
    }
    let account = &signed_in.user;
    let head = head(&state, account, format).await?;
    let body = Body::from_stream(rows(state.store.clone(), account.id, format, head));
    let (kind, extension) = match format {
        Format::Json => ("application/json", "json"),
        Format::Csv => ("text/csv; charset=utf-8", "csv"),
    };
    let filename = format!(
        "attachment; filename=\"billpay-my-data-{}.{extension}\"",
        billpay_store::clock::lagos_today()
    );
    tracing::info!(account = %account.id, format = extension, "customer downloaded their data");
    Ok((
        [
            (header::CONTENT_TYPE, kind.to_owned()),
            (header::CONTENT_DISPOSITION, filename),
            (header::CACHE_CONTROL, "no-store".to_owned()),
        ],
        body,
    )
        .into_response())
}

/// A stored time as the file shows it: Lagos time, saying so.
fn lagos(rfc3339: &str) -> String {
    format!("{} WAT", sortable_time(rfc3339))
}

fn lagos_opt(rfc3339: Option<&str>) -> Value {
    rfc3339.map_or(Value::Null, |t| Value::String(lagos(t)))
}

/// Everything but the statement and the purchases (a few rows each), and
/// the start of the long sections.
async fn head(
    state: &DashboardState,
    account: &Account,
    format: Format,
) -> Result<String, billpay_webkit::PageError> {
    let store = &state.store;
    let tier = billpay_operations::pricing::account_tier(store.as_ref(), account.id)
        .await
        .map_err(|e| billpay_webkit::PageError::internal(&e))?;
    let preferences = store.notice_preferences(account.id).await?;
    let stored_keys = store.api_keys(account.id).await?;
    let beneficiaries = store.all_beneficiaries(account.id).await?;
    let kyc = store.account_limits(account.id).await?.kyc;
    let profile = json!({
        "account_id": account.id,
        "name": account.name,
        "email": account.email,
        "phone": account.phone,
        "created": lagos(&account.created_at),
        "email_verified": lagos_opt(account.email_verified_at.as_deref()),
        "signed_up": account.signed_up.as_str(),
        "price_tier": tier,
        "status": account.status.as_str(),
        // the identity check's record: the level, how it was reached, only
        // the last 4 digits of a BVN or NIN (the rest is kept nowhere)
        "kyc_level": kyc.level,
        "kyc_method": kyc.method,
        "kyc_last4": kyc.last4,
        "kyc_set": lagos_opt(kyc.set_at.as_deref()),
    });
    let choices: Vec<Value> = NoticeTopic::ALL
        .iter()
        .map(|topic| {
            let choice = preferences.topic(*topic);
            json!({ "topic": topic.as_str(), "email": choice.email, "sms": choice.sms })
        })
        .collect();
    let notifications = json!({
        "sms_phone": preferences.phone,
        "low_balance_below_naira": preferences.low_balance_below.map(|k| k.to_string()),
        "topics": choices,
    });
    let keys: Vec<Value> = stored_keys
        .iter()
        .map(|k| {
            json!({ "prefix": k.display_prefix, "name": k.name, "status": k.status.as_str(),
                    "created": lagos(&k.created_at) })
        })
        .collect();
    let webhooks: Vec<Value> = stored_keys
        .iter()
        .filter_map(|k| {
            let url = k.webhook_url.as_ref()?;
            Some(json!({ "key_prefix": k.display_prefix, "url": url }))
        })
        .collect();
    let saved: Vec<Value> = beneficiaries
        .iter()
        .map(|b| {
            json!({ "product": b.product.service(), "recipient": b.recipient,
                    "nickname": b.nickname })
        })
        .collect();
    Ok(match format {
        Format::Json => {
            let mut text = json!({
                "exported": lagos(&billpay_store::clock::now_rfc3339()),
                "times": "Lagos time (WAT, UTC+01:00)",
                "amounts": "Naira, 2 decimal places",
                "profile": profile,
                "notification_choices": notifications,
                "api_keys": keys,
                "webhook_urls": webhooks,
                "beneficiaries": saved,
            })
            .to_string();
            text.pop(); // the closing brace: the long sections follow
            text.push_str(",\"wallet_statement\":[");
            text
        }
        Format::Csv => {
            let mut csv = String::from(CSV_HEADER);
            for (field, value) in profile.as_object().into_iter().flatten() {
                csv_row(&mut csv, ["profile", field, "", &plain(value)], None);
            }
            for choice in &choices {
                let topic = plain(&choice["topic"]);
                let said = format!("email {}, sms {}", choice["email"], choice["sms"]);
                csv_row(&mut csv, ["notification_choice", &topic, "", &said], None);
            }
            for (field, value) in notifications.as_object().into_iter().flatten() {
                if field != "topics" {
                    csv_row(
                        &mut csv,
                        ["notification_choice", field, "", &plain(value)],
                        None,
                    );
                }
            }
            for key in &keys {
                let (prefix, created) = (plain(&key["prefix"]), plain(&key["created"]));
                let row: [&str; 4] = ["api_key", &prefix, &created, &plain(&key["name"])];
                csv_row(
                    &mut csv,
                    row,
                    Some(["", "", "", &plain(&key["status"]), ""]),
                );
            }
            for hook in &webhooks {
                let (prefix, url) = (plain(&hook["key_prefix"]), plain(&hook["url"]));
                csv_row(&mut csv, ["webhook_url", &prefix, "", &url], None);
            }
            for saved in &saved {
                let product = plain(&saved["product"]);
                let (nickname, recipient) = (plain(&saved["nickname"]), plain(&saved["recipient"]));
                let rest = [recipient.as_str(), "", "", "", ""];
                csv_row(
                    &mut csv,
                    ["beneficiary", &product, "", &nickname],
                    Some(rest),
                );
            }
            csv
        }
    })
}

/// A JSON value as a cell: text without quotes, nothing for null.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

const CSV_HEADER: &str = "section,item,time (Lagos; WAT),description,recipient,amount_naira,\
                          balance_after_naira,status,details\n";

/// One CSV row: the first four cells, then recipient, amount, balance
/// after, status and details (empty when `None`).
fn csv_row(out: &mut String, first: [&str; 4], rest: Option<[&str; 5]>) {
    let rest = rest.unwrap_or([""; 5]);
    let cells: Vec<String> = first
        .iter()
        .chain(rest.iter())
        .map(|cell| crate::buyer::wallet::csv_field(cell))
        .collect();
    out.push_str(&cells.join(","));
    out.push('\n');
}

/// Where the long sections are.
enum Step {
    Ledger {
        after_id: i64,
        first: bool,
    },
    Purchases {
        after: Option<PurchaseCursor>,
        first: bool,
    },
    Done,
}

/// The head, then the statement and the purchases a page at a time, then
/// the end of the document.
fn rows(
    store: SharedStore,
    account: AccountId,
    format: Format,
    head: String,
) -> impl futures_util::Stream<Item = Result<String, StoreError>> + Send {
    let start = Step::Ledger {
        after_id: 0,
        first: true,
    };
    let pages = stream::try_unfold(start, move |step| {
        let store = store.clone();
        async move { next_page(&store, account, format, step).await }
    });
    stream::once(async move { Ok(head) }).chain(pages)
}

async fn next_page(
    store: &SharedStore,
    account: AccountId,
    format: Format,
    step: Step,
) -> Result<Option<(String, Step)>, StoreError> {
    match step {
        Step::Ledger { after_id, first } => {
            let entries = store.ledger_page(account, after_id, PAGE).await?;
            let mut text = ledger_text(&entries, format, first);
            let next = match entries.last() {
                Some(last) if entries.len() == PAGE as usize => Step::Ledger {
                    after_id: last.id,
                    first: false,
                },
                _ => {
                    if format == Format::Json {
                        text.push_str("],\"purchases\":[");
                    }
                    Step::Purchases {
                        after: None,
                        first: true,
                    }
                }
            };
            Ok(Some((text, next)))
        }
        Step::Purchases { after, first } => {
            let purchases = store.purchases_page(account, after, PAGE).await?;
            let mut text = purchases_text(&purchases, format, first);
            let next = match purchases.last() {
                Some(last) if purchases.len() == PAGE as usize => Step::Purchases {
                    after: Some(PurchaseCursor {
                        created_at: last.created_at.clone(),
                        code: last.code.clone(),
                    }),
                    first: false,
                },
                _ => {
                    if format == Format::Json {
                        text.push_str("]}");
                    }
                    Step::Done
                }
            };
            Ok(Some((text, next)))
        }
        Step::Done => Ok(None),
    }
}

fn ledger_text(entries: &[LedgerEntry], format: Format, first: bool) -> String {
    let mut out = String::new();
    for (i, e) in entries.iter().enumerate() {
        let reference = e
            .transaction_code
            .as_deref()
            .or(e.credit_reference.as_deref())
            .unwrap_or_default();
        match format {
            Format::Json => {
                if !(first && i == 0) {
                    out.push(',');
                }
                let line = json!({
                    "time": lagos(&e.created_at),
                    "kind": e.kind.as_str(),
                    "amount_naira": e.amount.to_string(),
                    "balance_after_naira": e.balance_after.to_string(),
                    "reference": reference,
                    "source": e.credit_source.as_ref().map(billpay_store::CreditSource::as_str),
                });
                out.push_str(&line.to_string());
            }
            Format::Csv => {
                let (amount, after) = (e.amount.to_string(), e.balance_after.to_string());
                let row: [&str; 4] = [
                    "statement",
                    reference,
                    &lagos(&e.created_at),
                    e.kind.as_str(),
                ];
                csv_row(&mut out, row, Some(["", &amount, &after, "", ""]));
            }
        }
    }
    out
}

fn purchases_text(purchases: &[PurchaseRecord], format: Format, first: bool) -> String {
    let mut out = String::new();
    for (i, p) in purchases.iter().enumerate() {
        let face_value = p.face_value.unwrap_or(p.amount).to_string();
        let completed = p.completed_at.as_deref().map(lagos);
        match format {
            Format::Json => {
                if !(first && i == 0) {
                    out.push(',');
                }
                let line = json!({
                    "reference": p.reference,
                    "code": p.code,
                    "product": p.product,
                    "provider": p.provider,
                    "description": p.label,
                    "recipient": p.recipient,
                    "amount_charged_naira": p.amount.to_string(),
                    "face_value_naira": face_value,
                    "status": p.status,
                    "message": p.message,
                    "created": lagos(&p.created_at),
                    "completed": completed,
                });
                out.push_str(&line.to_string());
            }
            Format::Csv => {
                let details = format!(
                    "code {}; {} {}; face value {face_value}; completed {}; {}",
                    p.code,
                    p.product,
                    p.provider,
                    completed.as_deref().unwrap_or("—"),
                    p.message
                );
                let amount = p.amount.to_string();
                let row: [&str; 4] = ["purchase", &p.reference, &lagos(&p.created_at), &p.label];
                let rest: [&str; 5] = [p.recipient.as_str(), &amount, "", &p.status, &details];
                csv_row(&mut out, row, Some(rest));
            }
        }
    }
    out
}
