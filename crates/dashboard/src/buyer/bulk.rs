//! Bulk buying (issue 50, docs/bulk.md): a business uploads a CSV of
//! numbers — `phone,amount` for airtime, `phone,plan` for data, a `network`
//! column optional (else the number's prefix says it) —, sees every row
//! checked with the total before paying, pays with the PIN, watches the
//! batch's progress and downloads the results. The rows are checked by the
//! batches' test twin and bought as one batch
//! ([`billpay_operations::batches::Batches`], the API's own value), each row
//! an ordinary purchase; nothing here places a purchase itself.
//!
//! Idempotent like the shop's forms: the check page mints the batch's
//! reference, so paying twice (a double tap, a resubmitted form) answers
//! the same batch.

use super::shop::{Refused, may_buy, pin};
use super::wallet::csv_field;
use crate::DashboardState;
use crate::format::{naira, short_time};
use crate::page::{Chrome, PageError, PageResult, not_found, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use billpay_domain::keys::random_hex;
use billpay_domain::network::Network;
use billpay_domain::{Kobo, Phone, Product};
use billpay_operations::batches::{
    Batches, ItemCheck, ItemSaid, ItemState, MAX_ITEMS, Refused as ItemRefused,
};
use billpay_operations::purchases::Buyer;
use billpay_store::{Batch, BatchItem, BatchStatus, NewBatchItem};
use billpay_webkit::CsrfForm;
use billpay_webkit::filters::url_encode;
use serde::Deserialize;
use serde_json::{Value, json};

/// A bulk form may carry a CSV of up to [`MAX_ITEMS`] rows (about 40 bytes
/// a row once form-encoded).
const BULK_FORM_LIMIT: usize = 64 * 1024;

/// What a bulk form sends: the product, the CSV's text (the file input fills
/// it in; it can be pasted too), and on paying the reference and the PIN.
#[derive(Deserialize, Default)]
pub struct BulkForm {
    #[serde(default)]
    product: String,
    #[serde(default)]
    csv: String,
    #[serde(default)]
    reference: String,
    #[serde(default)]
    pin: String,
}

/// What can be bought in bulk from the shop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Airtime,
    Data,
}

impl Kind {
    fn parse(slug: &str) -> Kind {
        if slug == "data" {
            Kind::Data
        } else {
            Kind::Airtime
        }
    }

    fn product(self) -> Product {
        match self {
            Kind::Airtime => Product::Airtime,
            Kind::Data => Product::Data,
        }
    }
}

/// One row, checked.
pub struct Row {
    /// Its place in the list, from 1 (the header line aside).
    pub line: usize,
    pub phone: String,
    pub network: String,
    /// The amount or the plan, as written.
    pub what: String,
    /// What it costs, when it fits.
    pub price: Option<String>,
    /// Why it cannot be bought, for a person.
    pub problem: Option<String>,
}

/// The rows and their items (those without a problem found here), in order.
struct Checked {
    rows: Vec<Row>,
    items: Vec<(usize, NewBatchItem)>,
    total: Kobo,
}

impl Checked {
    fn problems(&self) -> usize {
        self.rows.iter().filter(|r| r.problem.is_some()).count()
    }
}

#[derive(Template)]
#[template(path = "buyer/bulk.html")]
struct BulkPage {
    chrome: Chrome,
    balance: String,
    product: &'static str,
    csv: String,
    error: Option<String>,
    /// After a check: the rows, the total and whether it may be paid.
    rows: Vec<Row>,
    checked: bool,
    problems: usize,
    total: String,
    reference: String,
    batches: Vec<Listed>,
}

/// A past batch on the page.
pub struct Listed {
    pub reference: String,
    pub when: String,
    pub status: &'static str,
    pub summary: String,
}

fn status_word(status: BatchStatus) -> &'static str {
    match status {
        BatchStatus::Placing | BatchStatus::Fulfilling => "in progress",
        BatchStatus::Completed => "completed",
    }
}

fn summary(batch: &Batch) -> String {
    let c = batch.counts;
    format!(
        "{} rows: {} successful, {} failed and refunded, {} refused, {} waiting · charged {}",
        c.items,
        c.successful,
        c.failed,
        c.refused,
        c.queued + c.processing,
        naira(c.charged)
    )
}

fn batches_of(state: &DashboardState) -> Result<&Batches, PageError> {
    state.bulk.as_ref().ok_or_else(|| {
        PageError::status(
            StatusCode::SERVICE_UNAVAILABLE,
            "Bulk buying is not available on this server.",
        )
    })
}

/// `GET /dashboard/bulk`: the upload form and the account's batches.
pub async fn page(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    let form = BulkForm::default();
    show(&state, &signed_in, &form, None, None, StatusCode::OK).await
}

async fn show(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: &BulkForm,
    checked: Option<Checked>,
    error: Option<String>,
    status: StatusCode,
) -> PageResult {
    let account = signed_in.user.id;
    let listed = state.store.batches(account, 10).await?;
    let kind = Kind::parse(&form.product);
    let (rows, problems, total, was_checked) = match checked {
        Some(c) => {
            let problems = c.problems();
            (c.rows, problems, naira(c.total), true)
        }
        None => (Vec::new(), 0, naira(Kobo(0)), false),
    };
    let reference = if form.reference.is_empty() {
        format!("bulk-{}", random_hex(8))
    } else {
        form.reference.clone()
    };
    let page = render(&BulkPage {
        chrome: Chrome::new(signed_in, "bulk"),
        balance: naira(state.store.balance(account).await?),
        product: kind.product().service(),
        csv: form.csv.clone(),
        error,
        rows,
        checked: was_checked,
        problems,
        total,
        reference,
        batches: listed
            .iter()
            .map(|b| Listed {
                reference: b.reference.clone(),
                when: short_time(&b.created_at),
                status: status_word(b.status),
                summary: summary(b),
            })
            .collect(),
    });
    Ok((status, page).into_response())
}

/// `POST /dashboard/bulk/check`: every row checked, the total, nothing paid.
pub async fn check(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<BulkForm, BULK_FORM_LIMIT>,
) -> PageResult {
    let checked = match check_rows(&state, &signed_in, &form).await {
        Ok(checked) => checked,
        Err(said) => {
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            return show(&state, &signed_in, &form, None, Some(said), status).await;
        }
    };
    let status = match checked.problems() {
        0 => StatusCode::OK,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    show(&state, &signed_in, &form, Some(checked), None, status).await
}

/// `POST /dashboard/bulk/pay`: the PIN, the rows checked again (all must
/// fit), then the batch; 303 to its progress.
pub async fn pay(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<BulkForm, BULK_FORM_LIMIT>,
) -> PageResult {
    let refused = match place(&state, &signed_in, &form).await {
        Ok(reference) => {
            let to = format!("/dashboard/bulk/{}", url_encode(&reference));
            return Ok(Redirect::to(&to).into_response());
        }
        Err(refused) => refused,
    };
    let status = StatusCode::UNPROCESSABLE_ENTITY;
    match refused {
        Paying::Rows(checked) => show(&state, &signed_in, &form, Some(checked), None, status).await,
        Paying::Said(said) => {
            let checked = check_rows(&state, &signed_in, &form).await.ok();
            show(&state, &signed_in, &form, checked, Some(said), status).await
        }
        Paying::Page(e) => Err(e),
    }
}

/// Why a batch was not paid.
enum Paying {
    /// A row does not fit (any more): the rows, said.
    Rows(Checked),
    Said(String),
    Page(PageError),
}

impl From<Refused> for Paying {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Say(said) | Refused::Short(said) => Paying::Said(said),
            Refused::Page(e) => Paying::Page(e),
        }
    }
}

async fn place(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: &BulkForm,
) -> Result<String, Paying> {
    may_buy(&signed_in.user).map_err(Paying::Said)?;
    let batches = batches_of(state).map_err(Paying::Page)?;
    let purchasing = state.shop.as_ref().ok_or_else(|| {
        Paying::Page(PageError::status(
            StatusCode::SERVICE_UNAVAILABLE,
            "The shop is not available on this server.",
        ))
    })?;
    let reference = billpay_domain::Reference::parse(&form.reference)
        .map_err(|e| Paying::Said(format!("Reference {e}")))?;
    let key_id = pin::check(state, signed_in.user.id, &form.pin).await?;
    let buyer = purchasing
        .admit_key(signed_in.user.id, key_id, signed_in.user.status)
        .await
        .map_err(|e| Paying::Said(e.to_string()))?;
    // a batch already paid with this reference is answered as it is
    if state
        .store
        .batch(buyer.account_id, reference.as_str())
        .await
        .map_err(store_failed)?
        .is_some()
    {
        return Ok(reference.to_string());
    }
    let checked = check_with(batches, &buyer, form)
        .await
        .map_err(Paying::Said)?;
    if checked.problems() > 0 || checked.items.is_empty() {
        return Err(Paying::Rows(checked));
    }
    let items = checked.items.into_iter().map(|(_, item)| item).collect();
    batches
        .create(&buyer, reference.to_string(), items)
        .await
        .map_err(|e| Paying::Said(e.to_string()))?;
    Ok(reference.to_string())
}

fn store_failed(e: billpay_store::StoreError) -> Paying {
    Paying::Page(e.into())
}

/// The rows checked for the signed-in account (its shop key: set with its PIN).
async fn check_rows(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: &BulkForm,
) -> Result<Checked, String> {
    let batches = batches_of(state).map_err(|_| "Bulk buying is not available.".to_owned())?;
    let account = signed_in.user.id;
    let pin = state.store.transaction_pin(account).await.map_err(|e| {
        tracing::error!(error = %e, "reading the transaction PIN failed");
        "Something went wrong on our side; try again shortly.".to_owned()
    })?;
    let Some(pin) = pin else {
        return Err("Set your transaction PIN first (Buy → Transaction PIN).".to_owned());
    };
    let buyer = Buyer {
        account_id: account,
        key_id: pin.shop_key,
    };
    check_with(batches, &buyer, form).await
}

/// Reads the CSV into rows, finds each row's network, then checks the rows
/// that could be read as their purchases would be (the batches' test twin):
/// the price, the plan, the limits and the running total against the balance.
async fn check_with(batches: &Batches, buyer: &Buyer, form: &BulkForm) -> Result<Checked, String> {
    let kind = Kind::parse(&form.product);
    let reference = if form.reference.is_empty() {
        format!("bulk-{}", random_hex(8))
    } else {
        form.reference.clone()
    };
    let mut rows = read_csv(kind, &form.csv)?;
    let mut items = Vec::new();
    for (n, row) in rows.iter_mut().enumerate() {
        if let Some(body) = item_body(kind, row, &format!("{reference}-{:04}", n + 1)) {
            let item = NewBatchItem {
                reference: body["reference"].as_str().unwrap_or_default().to_owned(),
                product: kind.product(),
                body: body.to_string(),
            };
            items.push((n, item));
        }
    }
    let to_check: Vec<NewBatchItem> = items.iter().map(|(_, item)| item.clone()).collect();
    let checks = batches.check(buyer, &to_check).await;
    let mut total = Kobo(0);
    for ((n, _), check) in items.iter().zip(checks) {
        let row = &mut rows[*n];
        match check {
            ItemCheck::Fits(fits) => {
                total = Kobo(total.0 + fits.would_deduct.0);
                row.price = Some(naira(fits.would_deduct));
            }
            ItemCheck::Refused(refused) => row.problem = Some(said(&refused, row)),
        }
    }
    items.retain(|(n, _)| rows[*n].problem.is_none());
    Ok(Checked { rows, items, total })
}

/// A refusal of the purchase operation, for a person reading a row.
fn said(refused: &ItemRefused, row: &Row) -> String {
    match refused.error.as_str() {
        "invalid_plan" => format!(
            "Unknown plan for {}: use a plan code from the data page",
            row.network
        ),
        "insufficient_balance" => {
            "Not enough in your wallet for this row after the rows above".to_owned()
        }
        _ => {
            let message = refused.message.trim_start_matches("phone: ");
            let mut chars = message.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => "Refused".to_owned(),
            }
        }
    }
}

/// The CSV's rows: a header line (`phone,amount`, `phone,plan`, with or
/// without `network`, in any order) or, without one, the columns in that
/// order; blank lines skipped.
fn read_csv(kind: Kind, text: &str) -> Result<Vec<Row>, String> {
    let value_column = match kind {
        Kind::Airtime => "amount",
        Kind::Data => "plan",
    };
    let mut lines = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .peekable();
    let mut columns = vec![
        "phone".to_owned(),
        value_column.to_owned(),
        "network".to_owned(),
    ];
    if let Some(first) = lines.peek()
        && first.to_ascii_lowercase().contains("phone")
    {
        columns = cells(first)
            .iter()
            .map(|c| c.to_ascii_lowercase())
            .collect();
        lines.next();
        if !columns.iter().any(|c| c == value_column) {
            return Err(format!(
                "The CSV's first line names its columns: it needs phone and {value_column}."
            ));
        }
    }
    let at = |name: &str| columns.iter().position(|c| c == name);
    let (phone, value, network) = (at("phone"), at(value_column), at("network"));
    // numbered as the results are: the list's rows, from 1, the header aside
    let rows: Vec<Row> = lines
        .enumerate()
        .map(|(n, line)| {
            let cells = cells(line);
            let cell = |i: Option<usize>| i.and_then(|i| cells.get(i)).cloned().unwrap_or_default();
            Row {
                line: n + 1,
                phone: cell(phone),
                network: cell(network),
                what: cell(value),
                price: None,
                problem: None,
            }
        })
        .collect();
    match rows.len() {
        0 => Err("The CSV has no rows: one number a line.".to_owned()),
        n if n > MAX_ITEMS => Err(format!(
            "The CSV has {n} rows: at most {MAX_ITEMS} in one batch."
        )),
        _ => Ok(rows),
    }
}

/// A line's cells, trimmed, quotes taken off.
fn cells(line: &str) -> Vec<String> {
    line.split(',')
        .map(|c| c.trim().trim_matches('"').trim().to_owned())
        .collect()
}

/// The row's purchase body, or its problem said on the row: a number that
/// is not a Nigerian mobile number, a network that is not the number's, a
/// network that cannot be told, an amount that is not Naira.
fn item_body(kind: Kind, row: &mut Row, reference: &str) -> Option<Value> {
    let problem = |row: &mut Row, said: String| {
        row.problem = Some(said);
        None
    };
    let Ok(phone) = Phone::parse(&row.phone) else {
        return problem(row, "Not a Nigerian mobile number".to_owned());
    };
    let given = match row.network.to_ascii_lowercase().as_str() {
        "" => None,
        slug => match Network::of_provider(slug) {
            Some(network) => Some(network),
            None => {
                return problem(
                    row,
                    "Unknown network: write mtn, airtel, glo or 9mobile".to_owned(),
                );
            }
        },
    };
    let detected = Network::of_number(&phone);
    let network = match (given, detected) {
        (Some(given), Some(number)) if given != number => {
            let said = format!("Wrong network: this is a {number} number, not {given}");
            return problem(row, said);
        }
        (Some(network), _) | (None, Some(network)) => network,
        (None, None) => {
            let said = "Add the network: this number's prefix is not one we know".to_owned();
            return problem(row, said);
        }
    };
    row.network = network.name().to_owned();
    row.phone = phone.as_str().to_owned();
    let mut body = json!({
        "product": kind.product().service(),
        "provider_id": network.provider_slug(),
        "phone": phone.as_str(),
        "reference": reference,
    });
    match kind {
        Kind::Airtime => match Kobo::parse_naira(&row.what) {
            Ok(amount) => body["amount"] = json!(amount),
            Err(_) => return problem(row, "The amount is Naira, like 500 or 1000.50".to_owned()),
        },
        Kind::Data if row.what.is_empty() => {
            return problem(row, "Add the plan's code (from the data page)".to_owned());
        }
        Kind::Data => body["plan_id"] = json!(row.what),
    }
    Some(body)
}

#[derive(Template)]
#[template(path = "buyer/bulk_batch.html")]
struct BatchPage {
    chrome: Chrome,
    reference: String,
    when: String,
    done: bool,
    summary: String,
    charged: String,
    waiting: u32,
    items: Vec<ItemRow>,
}

/// An item on the progress page and in the results file.
pub struct ItemRow {
    pub line: u32,
    pub phone: String,
    pub network: String,
    pub what: String,
    pub status: &'static str,
    pub charged: String,
    pub code: String,
    pub message: String,
}

fn item_row(item: &BatchItem) -> ItemRow {
    let body: Value = serde_json::from_str(&item.body).unwrap_or_default();
    let text = |field: &str| match &body[field] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let network =
        Network::of_provider(&text("provider_id")).map_or(String::new(), |n| n.name().to_owned());
    let what = match item.product {
        Product::Data => text("plan_id"),
        _ => body["amount"]
            .as_f64()
            .and_then(|a| Kobo::from_naira_f64(a).ok())
            .map_or(String::new(), naira),
    };
    let said = ItemSaid::of(&item.outcome);
    let charged = match (said.state, said.amount) {
        (ItemState::Failed, _) => "refunded".to_owned(),
        (_, Some(amount)) => naira(amount),
        (_, None) => String::new(),
    };
    let status = match said.state {
        ItemState::Queued => "waiting",
        state => state.as_str(),
    };
    let (code, message) = (
        said.code.unwrap_or_default(),
        said.message.unwrap_or_default(),
    );
    ItemRow {
        line: item.position + 1,
        phone: text("phone"),
        network,
        what,
        status,
        charged,
        code,
        message,
    }
}

async fn own_batch(
    state: &DashboardState,
    signed_in: &SignedIn,
    reference: &str,
) -> Result<(Batch, Vec<BatchItem>), PageError> {
    let batch = state
        .store
        .batch(signed_in.user.id, reference)
        .await?
        .ok_or_else(not_found)?;
    let items = state.store.batch_items(&batch.id).await?;
    Ok((batch, items))
}

/// `GET /dashboard/bulk/{reference}`: the batch's progress (the page
/// reloads itself until every row has its outcome).
pub async fn progress(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(reference): Path<String>,
) -> PageResult {
    let (batch, items) = own_batch(&state, &signed_in, &reference).await?;
    let counts = batch.counts;
    Ok(render(&BatchPage {
        chrome: Chrome::new(&signed_in, "bulk"),
        reference: batch.reference.clone(),
        when: short_time(&batch.created_at),
        done: batch.status == BatchStatus::Completed,
        summary: summary(&batch),
        charged: naira(counts.charged),
        waiting: counts.queued + counts.processing,
        items: items.iter().map(item_row).collect(),
    }))
}

/// `GET /dashboard/bulk/{reference}/results.csv`: every row and its outcome.
pub async fn results(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(reference): Path<String>,
) -> PageResult {
    let (batch, items) = own_batch(&state, &signed_in, &reference).await?;
    let mut out =
        String::from("row,phone,network,amount_or_plan,status,charged,reference,message\n");
    for row in items.iter().map(item_row) {
        let cells = [
            row.line.to_string(),
            row.phone,
            row.network,
            row.what,
            row.status.to_owned(),
            row.charged,
            row.code,
            row.message,
        ];
        let cells: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    let filename = format!("attachment; filename=\"billpay-{}.csv\"", batch.reference);
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, filename),
        ],
        out,
    )
        .into_response())
}
