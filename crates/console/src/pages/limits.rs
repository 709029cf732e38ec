//! KYC levels' limits and the blocklist (issue 32, docs/limits.md): every
//! operator reads them; an owner changes a level's limits here, an
//! account's level and its own limits on the customer's page
//! (`customers.rs`, with the pieces below), and adds or removes blocklist
//! entries. Each change is the operation the CLI's `billpay limits|kyc|
//! blocklist …` call, so only an owner may make it and its line is written
//! to the operator log in the same transaction.

use super::{Chrome, Done, Notice, PageError, PageResult, actor, done, refused, render};
use crate::ConsoleState;
use crate::form::Refill;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use billpay_domain::Kobo;
use billpay_operations::OpsResult;
use billpay_operations::limits::{self, CLEAR, LimitsPatch, count_limit, naira_limit};
use billpay_store::limits::{AccountLimits, BlockKind, Kyc, LevelLimits, Limits};
use billpay_webkit::CsrfForm;
use billpay_webkit::format::{lagos_time, naira};
use serde::Deserialize;

const HOME: &str = "/admin/limits";
const BLOCKLIST: &str = "/admin/blocklist";

/// A limit's field (the form's and the operations'), its words, and
/// whether it counts purchases (else it is Naira).
const FIELDS: [(&str, &str, bool); 10] = [
    ("max_purchase", "Largest single purchase", false),
    ("daily_value", "Spent per day", false),
    ("daily_count", "Purchases per day", true),
    ("monthly_value", "Spent over 30 days", false),
    ("monthly_count", "Purchases over 30 days", true),
    ("max_balance", "Largest wallet balance", false),
    (
        "per_recipient_daily",
        "Spent on one recipient per day",
        false,
    ),
    (
        "recipient_hourly_count",
        "Purchases to one recipient per hour",
        true,
    ),
    ("account_hourly_count", "Purchases per hour", true),
    (
        "first_day_value",
        "Spent in a new account's first 24 hours",
        false,
    ),
];

/// Each level's form on the limits page (a [`Refill`] names its form with a
/// `&'static str`).
const LEVEL_FORMS: [&str; 3] = ["level-0", "level-1", "level-2"];

/// The limits' values in [`FIELDS`]' order: kobo or purchases, `None` for none.
fn in_order(l: &Limits) -> [Option<i64>; 10] {
    let k = |v: Option<Kobo>| v.map(|k| k.0);
    [
        k(l.max_purchase),
        k(l.daily_value),
        l.daily_count,
        k(l.monthly_value),
        l.monthly_count,
        k(l.max_balance),
        k(l.per_recipient_daily),
        l.recipient_hourly_count,
        l.account_hourly_count,
        k(l.first_day_value),
    ]
}

/// A limit as a person reads it: `₦50,000.00`, `20 purchases`, or `none`.
fn words(value: Option<i64>, counts: bool, none: &str) -> String {
    match (value, counts) {
        (None, _) => none.to_owned(),
        (Some(1), true) => "1 purchase".to_owned(),
        (Some(n), true) => format!("{n} purchases"),
        (Some(kobo), false) => naira(Kobo(kobo)),
    }
}

/// A limit as its input holds it: `50000.00`, `20`, or blank.
fn typed(value: Option<i64>, counts: bool) -> String {
    match (value, counts) {
        (None, _) => String::new(),
        (Some(n), true) => n.to_string(),
        (Some(kobo), false) => Kobo(kobo).to_string(),
    }
}

/// One input of a limits form.
pub struct LimitInput {
    pub field: &'static str,
    pub label: &'static str,
    /// The value in force, as typed (blank: none).
    pub current: String,
    pub counts: bool,
}

/// A limits form (a level's, or an account's own): where it posts, its
/// inputs with the values in force, and what a blank input means.
pub struct LimitsForm {
    pub id: &'static str,
    pub action: String,
    pub inputs: Vec<LimitInput>,
    /// "no limit" (a level) or "the level's" (an account).
    pub blank: &'static str,
    pub button: String,
}

impl LimitsForm {
    pub fn new(
        id: &'static str,
        action: String,
        limits: &Limits,
        blank: &'static str,
        button: String,
    ) -> LimitsForm {
        let inputs = FIELDS
            .iter()
            .zip(in_order(limits))
            .map(|(&(field, label, counts), value)| LimitInput {
                field,
                label,
                current: typed(value, counts),
                counts,
            })
            .collect();
        LimitsForm {
            id,
            action,
            inputs,
            blank,
            button,
        }
    }
}

/// A limits form's fields as posted: Naira (`50000`, `₦50,000.50`) or
/// purchases; blank clears the limit (no limit for a level, the level's for
/// an account).
#[derive(Deserialize)]
pub struct LimitFields {
    #[serde(default)]
    max_purchase: String,
    #[serde(default)]
    daily_value: String,
    #[serde(default)]
    daily_count: String,
    #[serde(default)]
    monthly_value: String,
    #[serde(default)]
    monthly_count: String,
    #[serde(default)]
    max_balance: String,
    #[serde(default)]
    per_recipient_daily: String,
    #[serde(default)]
    recipient_hourly_count: String,
    #[serde(default)]
    account_hourly_count: String,
    #[serde(default)]
    first_day_value: String,
}

impl LimitFields {
    /// The fields as typed, for a refused form drawn again.
    pub fn values(&self) -> Vec<(&'static str, String)> {
        let texts = [
            &self.max_purchase,
            &self.daily_value,
            &self.daily_count,
            &self.monthly_value,
            &self.monthly_count,
            &self.max_balance,
            &self.per_recipient_daily,
            &self.recipient_hourly_count,
            &self.account_hourly_count,
            &self.first_day_value,
        ];
        FIELDS
            .iter()
            .zip(texts)
            .map(|(&(field, _, _), text)| (field, text.clone()))
            .collect()
    }

    /// Every limit as typed, a blank one cleared; the first field that is
    /// not a limit is refused, nothing changed.
    pub fn patch(&self) -> OpsResult<LimitsPatch> {
        let text = |t: &str| match t.trim() {
            "" => CLEAR.to_owned(),
            typed => typed.to_owned(),
        };
        let naira = |field, t: &str| naira_limit(field, &text(t)).map(Some);
        let count = |field, t: &str| count_limit(field, &text(t)).map(Some);
        Ok(LimitsPatch {
            max_purchase: naira(&["max_purchase"], &self.max_purchase)?,
            daily_value: naira(&["daily_value"], &self.daily_value)?,
            daily_count: count(&["daily_count"], &self.daily_count)?,
            monthly_value: naira(&["monthly_value"], &self.monthly_value)?,
            monthly_count: count(&["monthly_count"], &self.monthly_count)?,
            max_balance: naira(&["max_balance"], &self.max_balance)?,
            per_recipient_daily: naira(&["per_recipient_daily"], &self.per_recipient_daily)?,
            recipient_hourly_count: count(
                &["recipient_hourly_count"],
                &self.recipient_hourly_count,
            )?,
            account_hourly_count: count(&["account_hourly_count"], &self.account_hourly_count)?,
            first_day_value: naira(&["first_day_value"], &self.first_day_value)?,
            // what a tripped rule does (refuse or hold) stays as set: `billpay limits set`
            recipient_hourly_action: None,
            account_hourly_action: None,
            first_day_action: None,
            over_balance_action: None,
        })
    }
}

/// A level's name, as its pickers and headings show it: `1 · BVN verified`.
pub fn level_title(level: &LevelLimits) -> String {
    format!("{} · {}", level.level, level.name)
}

// ---- the limits page ----

pub struct LimitTableRow {
    pub label: &'static str,
    /// Each level's limit, in the levels' order.
    pub values: Vec<String>,
}

#[derive(Template)]
#[template(path = "limits.html")]
struct LimitsPage {
    chrome: Chrome,
    levels: Vec<String>,
    rows: Vec<LimitTableRow>,
    /// Each level's form (an owner's page only).
    forms: Vec<LimitsForm>,
    refill: Refill,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    limits_page(&state, &signed_in, &done, Refill::none()).await
}

async fn limits_page(
    state: &ConsoleState,
    signed_in: &SignedIn,
    done: &Done,
    refill: Refill,
) -> PageResult {
    let chrome = Chrome::new(signed_in, "limits", done);
    let levels = limits::levels(state.store.as_ref(), &actor(signed_in))
        .await
        .map_err(refused)?;
    let values: Vec<[Option<i64>; 10]> = levels.iter().map(|l| in_order(&l.limits)).collect();
    let rows = FIELDS
        .iter()
        .enumerate()
        .map(|(i, &(_, label, counts))| LimitTableRow {
            label,
            values: values
                .iter()
                .map(|v| words(v[i], counts, "no limit"))
                .collect(),
        })
        .collect();
    let forms = match chrome.owner {
        false => Vec::new(),
        true => levels
            .iter()
            .filter_map(|l| {
                let id = LEVEL_FORMS.get(usize::from(l.level)).copied()?;
                Some(LimitsForm::new(
                    id,
                    format!("{HOME}/{}", l.level),
                    &l.limits,
                    "no limit",
                    format!("Save level {}'s limits", l.level),
                ))
            })
            .collect(),
    };
    Ok(render(&LimitsPage {
        chrome,
        levels: levels.iter().map(level_title).collect(),
        rows,
        forms,
        refill,
    }))
}

/// Changes a level's limits (owner): every field as typed, blank = no limit.
pub async fn set_level(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(level): Path<String>,
    CsrfForm(form): CsrfForm<LimitFields>,
) -> PageResult {
    let level = limits::level_of(&level).map_err(|_| super::not_found())?;
    let id = LEVEL_FORMS[usize::from(level)];
    let set = match form.patch() {
        Ok(patch) => {
            limits::set_level_limits(state.store.as_ref(), actor(&signed_in), level, patch)
                .await
                .map(|_| ())
        }
        Err(e) => Err(e),
    };
    if let Err(e) = set {
        let (status, refill) = Refill::refused(id, e, form.values())?;
        let page = limits_page(&state, &signed_in, &Done::default(), refill).await?;
        return Ok((status, page).into_response());
    }
    Ok(done(HOME, Notice::LevelLimitsSet))
}

// ---- an account's level and limits (its page in customers.rs) ----

/// How an account reached its level, as its page shows it.
pub struct KycView {
    pub level: u8,
    /// The operator's name for the level.
    pub name: String,
    pub how: String,
    /// Lagos time, or blank.
    pub at: String,
    pub by: String,
    pub last4: String,
    pub reason: String,
}

impl KycView {
    pub fn new(kyc: &Kyc, levels: &[LevelLimits]) -> KycView {
        let how = match kyc.method.as_deref() {
            Some("operator") => "approved by an operator",
            Some("bvn") => "BVN verified",
            Some("nin") => "NIN verified",
            Some("created") => "given when the account was created",
            Some(other) => other,
            None => "set when levels were introduced (an account from before)",
        };
        let name = levels.iter().find(|l| l.level == kyc.level);
        KycView {
            level: kyc.level,
            name: name.map(|l| l.name.clone()).unwrap_or_default(),
            how: how.to_owned(),
            at: kyc.set_at.as_deref().map(lagos_time).unwrap_or_default(),
            by: kyc.set_by.clone().unwrap_or_default(),
            last4: kyc.last4.clone().unwrap_or_default(),
            reason: kyc.reason.clone().unwrap_or_default(),
        }
    }
}

/// A limit that applies to an account: its value, whether the account's
/// own, what was used of it and what is left.
pub struct UsageRow {
    pub field: &'static str,
    pub label: &'static str,
    pub limit: String,
    pub own: bool,
    pub used: String,
    pub left: String,
}

/// The account's limits in [`FIELDS`]' order with today's and the 30 days'
/// usage (the balance against the largest balance).
pub fn usage_rows(account: &AccountLimits, balance: Kobo) -> Vec<UsageRow> {
    let u = &account.usage;
    let used = [
        None,
        Some(u.daily_value.0),
        Some(u.daily_count),
        Some(u.monthly_value.0),
        Some(u.monthly_count),
        Some(balance.0),
        None,
        None,
        None,
        None,
    ];
    FIELDS
        .iter()
        .zip(in_order(&account.limits))
        .zip(in_order(&account.overrides))
        .zip(used)
        .map(|(((&(field, label, counts), limit), own), used)| {
            let left = match (limit, used) {
                (Some(limit), Some(used)) => words(Some((limit - used).max(0)), counts, ""),
                _ => String::new(),
            };
            UsageRow {
                field,
                label,
                limit: words(limit, counts, "no limit"),
                own: own.is_some(),
                used: used.map_or_else(String::new, |u| words(Some(u), counts, "")),
                left,
            }
        })
        .collect()
}

// ---- the blocklist ----

pub struct BlockRow {
    pub kind: &'static str,
    pub value: String,
    /// An account's page, for an account entry.
    pub link: Option<String>,
    pub reason: String,
    pub added_by: String,
    pub added_at: String,
}

#[derive(Template)]
#[template(path = "blocklist.html")]
struct BlocklistPage {
    chrome: Chrome,
    rows: Vec<BlockRow>,
    refill: Refill,
}

pub async fn blocklist(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    blocklist_page(&state, &signed_in, &done, Refill::none()).await
}

async fn blocklist_page(
    state: &ConsoleState,
    signed_in: &SignedIn,
    done: &Done,
    refill: Refill,
) -> PageResult {
    let entries = limits::blocklist(state.store.as_ref(), &actor(signed_in))
        .await
        .map_err(refused)?;
    let rows = entries
        .into_iter()
        .map(|e| BlockRow {
            kind: e.kind.as_str(),
            link: (e.kind == BlockKind::Account).then(|| format!("/admin/customers/{}", e.value)),
            value: e.value,
            reason: e.reason,
            added_by: e.added_by,
            added_at: lagos_time(&e.added_at),
        })
        .collect();
    Ok(render(&BlocklistPage {
        chrome: Chrome::new(signed_in, "blocklist", done),
        rows,
        refill,
    }))
}

#[derive(Deserialize)]
pub struct BlockForm {
    /// `recipient` or `account`.
    #[serde(default)]
    kind: String,
    #[serde(default)]
    value: String,
    #[serde(default)]
    reason: String,
}

fn kind_of(text: &str) -> Result<BlockKind, PageError> {
    BlockKind::parse(text)
        .ok_or_else(|| PageError::bad_request("kind must be recipient or account"))
}

/// Adds a recipient or an account (owner), with the reason required.
pub async fn add(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<BlockForm>,
) -> PageResult {
    let kind = kind_of(&form.kind)?;
    let store = state.store.as_ref();
    let added = limits::block(store, actor(&signed_in), kind, &form.value, &form.reason).await;
    match added {
        Ok(true) => Ok(done(BLOCKLIST, Notice::Blocked)),
        Ok(false) => Ok(done(BLOCKLIST, Notice::AlreadyBlocked)),
        Err(e) => {
            let values = vec![
                ("kind", form.kind),
                ("value", form.value),
                ("reason", form.reason),
            ];
            let (status, refill) = Refill::refused("block", e, values)?;
            let page = blocklist_page(&state, &signed_in, &Done::default(), refill).await?;
            Ok((status, page).into_response())
        }
    }
}

/// Removes an entry (owner); a reason may be given.
pub async fn remove(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<BlockForm>,
) -> PageResult {
    let kind = kind_of(&form.kind)?;
    let store = state.store.as_ref();
    let reason = Some(form.reason.as_str());
    let removed = limits::unblock(store, actor(&signed_in), kind, &form.value, reason)
        .await
        .map_err(refused)?;
    let notice = match removed {
        true => Notice::Unblocked,
        false => Notice::NotBlocked,
    };
    Ok(done(BLOCKLIST, notice))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_field_clears_its_limit_and_naira_are_exact() {
        let fields = LimitFields {
            max_purchase: "₦10,000.01".into(),
            daily_value: String::new(),
            daily_count: "20".into(),
            monthly_value: " ".into(),
            monthly_count: "none".into(),
            max_balance: "300000".into(),
            per_recipient_daily: "0.5".into(),
            recipient_hourly_count: "5".into(),
            account_hourly_count: String::new(),
            first_day_value: "20000".into(),
        };
        let patch = fields.patch().unwrap();
        assert_eq!(patch.recipient_hourly_count, Some(Some(5)));
        assert_eq!(patch.account_hourly_count, Some(None));
        assert_eq!(patch.first_day_value, Some(Some(Kobo(2_000_000))));
        assert_eq!(
            patch.first_day_action, None,
            "a rule's action is left as set"
        );
        assert_eq!(patch.max_purchase, Some(Some(Kobo(1_000_001))));
        assert_eq!(patch.daily_value, Some(None));
        assert_eq!(patch.daily_count, Some(Some(20)));
        assert_eq!(patch.monthly_value, Some(None));
        assert_eq!(patch.monthly_count, Some(None));
        assert_eq!(patch.per_recipient_daily, Some(Some(Kobo(50))));
        let bad = LimitFields {
            daily_count: "2.5".into(),
            ..fields
        };
        assert!(bad.patch().is_err());
    }

    #[test]
    fn limits_read_as_people_say_them() {
        assert_eq!(words(None, false, "no limit"), "no limit");
        assert_eq!(words(Some(5_000_000), false, ""), "₦50,000.00");
        assert_eq!(words(Some(1), true, ""), "1 purchase");
        assert_eq!(typed(Some(5_000_050), false), "50000.50");
        assert_eq!(typed(None, true), "");
    }
}
