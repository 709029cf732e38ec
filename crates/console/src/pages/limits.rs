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
use billpay_operations::limits::{self, LimitTexts};
use billpay_store::limits::{AccountLimits, BlockKind, Kyc, LevelLimits, Limits, RuleAction};
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

/// What tripping a rule does (refuse or hold), the limit it follows on a
/// form, and its words.
const ACTIONS: [(&str, &str, &str); 4] = [
    (
        "over_balance_action",
        "max_balance",
        "While the wallet is over it, a purchase above level 0's limits is",
    ),
    (
        "recipient_hourly_action",
        "recipient_hourly_count",
        "A purchase over it is",
    ),
    (
        "account_hourly_action",
        "account_hourly_count",
        "A purchase over it is",
    ),
    (
        "first_day_action",
        "first_day_value",
        "A purchase over it is",
    ),
];

/// Each level's form on the limits page (a [`Refill`] names its form with a
/// `&'static str`).
const LEVEL_FORMS: [&str; 3] = ["level-0", "level-1", "level-2"];

/// Each level's name form on the limits page.
const NAME_FORMS: [&str; 3] = ["level-0-name", "level-1-name", "level-2-name"];

/// The rules' actions in [`ACTIONS`]' order (`None`: not set).
fn actions_in_order(l: &Limits) -> [Option<RuleAction>; 4] {
    [
        l.over_balance_action,
        l.recipient_hourly_action,
        l.account_hourly_action,
        l.first_day_action,
    ]
}

/// What a rule's action does to a purchase, for a person.
fn action_words(action: RuleAction) -> &'static str {
    match action {
        RuleAction::Refuse => "refused",
        RuleAction::Hold => "held for an owner's review",
    }
}

/// The limits in words in [`FIELDS`]' order, a rule's action after its
/// limit where the limit is set (`5 purchases, then hold`).
fn words_in_order(l: &Limits, none: &str) -> Vec<String> {
    let actions = actions_in_order(l);
    FIELDS
        .iter()
        .zip(in_order(l))
        .map(|(&(field, _, counts), value)| {
            let said = words(value, counts, none);
            let action = ACTIONS
                .iter()
                .position(|&(_, after, _)| after == field)
                .and_then(|i| actions[i]);
            match (value, action) {
                (Some(_), Some(action)) => format!("{said}, then {}", action.as_str()),
                _ => said,
            }
        })
        .collect()
}

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
    /// What tripping it does, for a rule (and the largest balance).
    pub action: Option<ActionInput>,
}

/// A rule's action on a limits form: refuse or hold (or, for an account,
/// blank: the level's).
pub struct ActionInput {
    pub field: &'static str,
    pub label: &'static str,
    /// The option in force: `refuse`, `hold`, or blank (the level's).
    pub current: &'static str,
    /// Each option's value and words.
    pub options: Vec<(&'static str, String)>,
}

impl ActionInput {
    /// `i`'s action of [`ACTIONS`]; `level`: the level's limits under an
    /// account's own (blank is then an option, the level's), `None` for a
    /// level's form (a level always has one: unset is refuse).
    fn new(i: usize, limits: &Limits, level: Option<&Limits>) -> ActionInput {
        let (field, _, label) = ACTIONS[i];
        let set = actions_in_order(limits)[i];
        let mut options = Vec::new();
        let current = match level {
            None => set.unwrap_or_default().as_str(),
            Some(level) => {
                let levels = actions_in_order(level)[i].unwrap_or_default();
                options.push(("", format!("the level's ({})", action_words(levels))));
                set.map_or("", RuleAction::as_str)
            }
        };
        for action in [RuleAction::Refuse, RuleAction::Hold] {
            options.push((action.as_str(), action_words(action).to_owned()));
        }
        ActionInput {
            field,
            label,
            current,
            options,
        }
    }
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
    /// A level's form (`level` `None`), or an account's own over its
    /// level's limits `level`.
    pub fn new(
        id: &'static str,
        action: String,
        limits: &Limits,
        level: Option<&Limits>,
        button: String,
    ) -> LimitsForm {
        let blank = match level {
            None => "no limit",
            Some(_) => "the level's",
        };
        let inputs = FIELDS
            .iter()
            .zip(in_order(limits))
            .map(|(&(field, label, counts), value)| LimitInput {
                field,
                label,
                current: typed(value, counts),
                counts,
                action: ACTIONS
                    .iter()
                    .position(|&(_, after, _)| after == field)
                    .map(|i| ActionInput::new(i, limits, level)),
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

/// A level's name form (an owner's page only).
pub struct NameForm {
    pub id: &'static str,
    pub action: String,
    pub current: String,
}

#[derive(Template)]
#[template(path = "limits.html")]
struct LimitsPage {
    chrome: Chrome,
    levels: Vec<String>,
    rows: Vec<LimitTableRow>,
    /// Each level's form (an owner's page only).
    forms: Vec<LimitsForm>,
    /// Each level's name form, in the forms' order (an owner's page only).
    names: Vec<NameForm>,
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
    let values: Vec<Vec<String>> = levels
        .iter()
        .map(|l| words_in_order(&l.limits, "no limit"))
        .collect();
    let rows = FIELDS
        .iter()
        .enumerate()
        .map(|(i, &(_, label, _))| LimitTableRow {
            label,
            values: values.iter().map(|v| v[i].clone()).collect(),
        })
        .collect();
    // an owner's forms: a level's name and its limits, each level that has both ids
    let editable: Vec<(&LevelLimits, usize)> = match chrome.owner {
        false => Vec::new(),
        true => levels
            .iter()
            .map(|l| (l, usize::from(l.level)))
            .filter(|&(_, i)| i < LEVEL_FORMS.len())
            .collect(),
    };
    let forms = editable
        .iter()
        .map(|&(l, i)| {
            LimitsForm::new(
                LEVEL_FORMS[i],
                format!("{HOME}/{}", l.level),
                &l.limits,
                None,
                format!("Save level {}'s limits", l.level),
            )
        })
        .collect();
    let names = editable
        .iter()
        .map(|&(l, i)| NameForm {
            id: NAME_FORMS[i],
            action: format!("{HOME}/{}/name", l.level),
            current: l.name.clone(),
        })
        .collect();
    Ok(render(&LimitsPage {
        chrome,
        levels: levels.iter().map(level_title).collect(),
        rows,
        forms,
        names,
        refill,
    }))
}

/// Changes a level's limits (owner): every field as typed, blank = no limit.
pub async fn set_level(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(level): Path<String>,
    CsrfForm(form): CsrfForm<LimitTexts>,
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
        let (status, refill) = Refill::refused(id, e, form.given())?;
        let page = limits_page(&state, &signed_in, &Done::default(), refill).await?;
        return Ok((status, page).into_response());
    }
    Ok(done(HOME, Notice::LevelLimitsSet))
}

#[derive(Deserialize)]
pub struct NameFields {
    #[serde(default)]
    name: String,
}

/// Renames a level (owner): 1 to 40 characters, logged with the old name.
pub async fn rename_level(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(level): Path<String>,
    CsrfForm(form): CsrfForm<NameFields>,
) -> PageResult {
    let level = limits::level_of(&level).map_err(|_| super::not_found())?;
    let store = state.store.as_ref();
    let renamed = limits::rename_level(store, actor(&signed_in), level, &form.name).await;
    if let Err(e) = renamed {
        let values = vec![("name", form.name)];
        let (status, refill) = Refill::refused(NAME_FORMS[usize::from(level)], e, values)?;
        let page = limits_page(&state, &signed_in, &Done::default(), refill).await?;
        return Ok((status, page).into_response());
    }
    Ok(done(HOME, Notice::LevelRenamed))
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
            None => "the level every account starts at, no check yet",
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
    let own_actions = actions_in_order(&account.overrides);
    FIELDS
        .iter()
        .zip(in_order(&account.limits))
        .zip(in_order(&account.overrides))
        .zip(used)
        .zip(words_in_order(&account.limits, "no limit"))
        .map(|((((&(field, label, counts), limit), own), used), said)| {
            let left = match (limit, used) {
                (Some(limit), Some(used)) => words(Some((limit - used).max(0)), counts, ""),
                _ => String::new(),
            };
            // its own action over the level's counts as its own too
            let own_action = ACTIONS
                .iter()
                .position(|&(_, after, _)| after == field)
                .is_some_and(|i| own_actions[i].is_some());
            UsageRow {
                field,
                label,
                limit: said,
                own: own.is_some() || own_action,
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
        let fields = LimitTexts {
            max_purchase: Some("₦10,000.01".into()),
            daily_value: Some(String::new()),
            daily_count: Some("20".into()),
            monthly_value: Some(" ".into()),
            monthly_count: Some("none".into()),
            max_balance: Some("300000".into()),
            per_recipient_daily: Some("0.5".into()),
            recipient_hourly_count: Some("5".into()),
            account_hourly_count: Some(String::new()),
            first_day_value: Some("20000".into()),
            recipient_hourly_action: Some("refuse".into()),
            account_hourly_action: Some(String::new()),
            first_day_action: None,
            over_balance_action: Some(" Hold ".into()),
        };
        let patch = fields.patch().unwrap();
        assert_eq!(
            patch.recipient_hourly_action,
            Some(Some(RuleAction::Refuse))
        );
        assert_eq!(
            patch.account_hourly_action,
            Some(None),
            "blank: refuse for a level, the level's for an account"
        );
        assert_eq!(patch.over_balance_action, Some(Some(RuleAction::Hold)));
        let refill = fields.given();
        assert!(refill.contains(&("recipient_hourly_action", "refuse".to_owned())));
        assert!(!refill.iter().any(|(f, _)| *f == "first_day_action"));
        assert_eq!(patch.recipient_hourly_count, Some(Some(5)));
        assert_eq!(patch.account_hourly_count, Some(None));
        assert_eq!(patch.first_day_value, Some(Some(Kobo(2_000_000))));
        assert_eq!(
            patch.first_day_action, None,
            "an action not sent is left as set"
        );
        assert_eq!(patch.max_purchase, Some(Some(Kobo(1_000_001))));
        assert_eq!(patch.daily_value, Some(None));
        assert_eq!(patch.daily_count, Some(Some(20)));
        assert_eq!(patch.monthly_value, Some(None));
        assert_eq!(patch.monthly_count, Some(None));
        assert_eq!(patch.per_recipient_daily, Some(Some(Kobo(50))));
        let bad = LimitTexts {
            daily_count: Some("2.5".into()),
            ..fields
        };
        assert!(bad.patch().is_err());
        let maybe = LimitTexts {
            daily_count: Some("20".into()),
            first_day_action: Some("maybe".into()),
            ..bad
        };
        assert!(maybe.patch().is_err());
        assert!(
            LimitTexts::default().patch().unwrap().is_empty(),
            "a field not sent is left as set"
        );
    }

    #[test]
    fn a_rules_action_follows_its_limit_in_words_and_on_the_form() {
        let level = Limits {
            recipient_hourly_count: Some(5),
            recipient_hourly_action: Some(RuleAction::Hold),
            account_hourly_action: Some(RuleAction::Hold),
            ..Limits::default()
        };
        let said = words_in_order(&level, "no limit");
        assert_eq!(said[7], "5 purchases, then hold");
        assert_eq!(said[8], "no limit", "no rule, no action said");
        let own = Limits {
            account_hourly_action: Some(RuleAction::Refuse),
            ..Limits::default()
        };
        let form = LimitsForm::new("f", String::new(), &own, Some(&level), String::new());
        let action = |field: &str| {
            let input = form.inputs.iter().find(|i| i.field == field).unwrap();
            input.action.as_ref().unwrap()
        };
        assert_eq!(action("recipient_hourly_count").current, "", "the level's");
        assert_eq!(
            action("recipient_hourly_count").options[0].1,
            "the level's (held for an owner's review)"
        );
        assert_eq!(action("account_hourly_count").current, "refuse");
        let level_form = LimitsForm::new("f", String::new(), &level, None, String::new());
        let first_day = level_form
            .inputs
            .iter()
            .find(|i| i.field == "first_day_value");
        let first_day = first_day.unwrap().action.as_ref().unwrap();
        assert_eq!(
            first_day.current, "refuse",
            "a level's unset action refuses"
        );
        assert_eq!(first_day.options.len(), 2, "no blank for a level");
        assert!(level_form.inputs[0].action.is_none());
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
