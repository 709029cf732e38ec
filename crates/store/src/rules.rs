//! Rules that do not depend on the database, stated once: both backends (and
//! the callers in other crates) use these instead of their own copies.

use crate::*;
use billpay_domain::Kobo;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::{PriceBook, Rule, Scope, Tier};
use std::time::Duration;

impl EventNext {
    /// The event's status after a delivery attempt, and when it is due again
    /// (unix ms; 0 when it is not: a final status).
    pub fn state(self) -> (EventStatus, i64) {
        match self {
            EventNext::Delivered => (EventStatus::Delivered, 0),
            EventNext::Failed => (EventStatus::Failed, 0),
            EventNext::Skipped => (EventStatus::Skipped, 0),
            EventNext::RetryAtMs(at) => (EventStatus::Pending, at),
        }
    }
}

impl NewPurchase {
    /// The e-pin batch id the purchase's details carry (stored in its own
    /// column, so [`TxLookup::BatchId`] finds the purchase).
    pub fn batch_id(&self) -> Option<String> {
        self.details.batch_id.clone()
    }
}

impl TxLookup {
    /// The column a lookup matches, and the value it matches.
    pub(crate) fn column_and_value(self) -> (&'static str, String) {
        match self {
            TxLookup::Code(code) => ("code", code),
            TxLookup::Reference(reference) => ("reference", reference),
            TxLookup::BatchId(batch) => ("batch_id", batch),
        }
    }
}

/// The checks of a purchase against its wallet: the reference is unused and
/// the balance covers the amount. Answers the balance.
pub(crate) fn check_purchase(
    balance: Kobo,
    reference_used: bool,
    amount: Kobo,
) -> StoreResult<Kobo> {
    if reference_used {
        return Err(Refusal::DuplicateReference.into());
    }
    if balance < amount {
        return Err(Refusal::InsufficientBalance.into());
    }
    Ok(balance)
}

/// Unix ms `delay` from now: a lease's end, a retry's due time.
pub(crate) fn ms_from_now(delay: Duration) -> i64 {
    clock::now_ms() + delay.as_millis() as i64
}

/// A ledger entry's credit source: none unless it is a credit; a credit
/// stored before sources existed (none stored) is an operator's.
pub(crate) fn credit_source(
    kind: LedgerKind,
    stored: Option<&str>,
) -> Result<Option<CreditSource>, String> {
    match (kind, stored) {
        (LedgerKind::Credit, None) => Ok(Some(CreditSource::Operator)),
        (LedgerKind::Credit, Some(source)) => source.parse().map(Some),
        _ => Ok(None),
    }
}

/// What `requeue_event` answers: queued, or why not.
pub(crate) fn requeue_outcome(queued: bool, exists: bool) -> StoreResult<()> {
    match (queued, exists) {
        (true, _) => Ok(()),
        (false, false) => Err(StoreError::NotFound("event")),
        (false, true) => Err(StoreError::DeliveryInProgress),
    }
}

/// What `update_api_key` answers: the key as it is now, unless nothing
/// changed (only a revoked key refuses a change).
pub(crate) fn key_change_outcome(changed: bool, key: Option<ApiKey>) -> StoreResult<ApiKey> {
    let key = key.ok_or(StoreError::NotFound("API key"))?;
    if !changed {
        return Err(StoreError::KeyRevoked);
    }
    Ok(key)
}

/// `create_account` with an e-mail address another account has.
pub(crate) fn email_taken(email: &str) -> StoreError {
    StoreError::EmailTaken(email.to_owned())
}

/// The stored form of the catalogue: one JSON document.
pub(crate) fn catalogue_document(catalogue: &Catalogue) -> StoreResult<String> {
    serde_json::to_string(catalogue).map_err(StoreError::caused)
}

pub(crate) fn parse_catalogue(document: &str) -> StoreResult<Catalogue> {
    serde_json::from_str(document).map_err(StoreError::caused)
}

/// The catalogue a new database starts with (compiled into the binary).
pub(crate) fn default_catalogue() -> StoreResult<Catalogue> {
    Catalogue::from_toml(Catalogue::default_toml()).map_err(StoreError::Invalid)
}

/// Enables or disables a provider (UUID or slug) or plan; says what changed.
pub(crate) fn set_active(
    catalogue: &mut Catalogue,
    target: &str,
    active: bool,
) -> StoreResult<String> {
    catalogue
        .set_active(target, active)
        .ok_or(StoreError::NotFound("provider or plan"))
}

/// `on sale` or `off sale`: `target` before a change (found as `set_active` finds it).
pub(crate) fn on_sale_state(catalogue: &Catalogue, target: &str) -> &'static str {
    let provider = |p: &billpay_domain::catalogue::Provider| {
        (p.slug == target || p.id.to_string() == target).then_some(p.active)
    };
    let data = |p: &billpay_domain::catalogue::DataPlan| (p.plan_id == target).then_some(p.active);
    let cable =
        |p: &billpay_domain::catalogue::CablePlan| (p.plan_id == target).then_some(p.active);
    let active = (catalogue.providers.iter().find_map(provider))
        .or_else(|| catalogue.data_plans.iter().find_map(data))
        .or_else(|| catalogue.cable_plans.iter().find_map(cable));
    if active == Some(true) {
        "on sale"
    } else {
        "off sale"
    }
}

/// A database URL without its password, for messages and logs.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// The sales query both backends run ([`crate::PricingStore::sales`]), with
/// `{from}` / `{until}` the placeholders of the bounds. Sums are cast so
/// PostgreSQL answers BIGINT (not NUMERIC), as SQLite does.
pub const SALES_SQL: &str = "SELECT SUBSTR(created_at, 1, 13) AS hour, product, provider, supplier,
        account_id, tier, status, COUNT(*) AS purchases,
        CAST(SUM(COALESCE(face_value, amount)) AS BIGINT) AS face_value,
        CAST(SUM(amount) AS BIGINT) AS charged,
        CAST(COALESCE(SUM(cost), 0) AS BIGINT) AS cost,
        CAST(SUM(CASE WHEN cost IS NULL THEN 0 ELSE amount END) AS BIGINT) AS charged_with_cost,
        SUM(CASE WHEN cost IS NULL THEN 1 ELSE 0 END) AS cost_unknown
    FROM transactions
    WHERE status IN ('successful', 'failed') AND created_at >= {from} AND created_at < {until}
    GROUP BY SUBSTR(created_at, 1, 13), product, provider, supplier, account_id, tier, status";

/// One stored rule row: (tier, product, provider or '', plan or '', kind, value).
pub type RuleRow = (String, String, String, String, String, i64);

/// The price book from its stored rows: tier names, rules, accounts' tiers.
pub fn price_book(
    tiers: Vec<String>,
    rules: Vec<RuleRow>,
    accounts: Vec<(String, String)>,
) -> StoreResult<PriceBook> {
    let mut book = PriceBook::default();
    for name in tiers {
        let tier = Tier {
            name: name.clone(),
            rules: Default::default(),
        };
        book.tiers.insert(name, tier);
    }
    for (tier, product, provider, plan, kind, value) in rules {
        let bad = |what: &str| StoreError::backend(format!("price rule of {tier}: {what}"));
        let scope = Scope {
            product: product.parse().map_err(|_| bad("product"))?,
            provider: (!provider.is_empty()).then_some(provider),
            plan: (!plan.is_empty()).then_some(plan),
        };
        let rule = Rule::from_parts(&kind, value).ok_or_else(|| bad("kind"))?;
        let Some(entry) = book.tiers.get_mut(&tier) else {
            return Err(bad("no such tier"));
        };
        entry.rules.insert(scope, rule);
    }
    for (account, tier) in accounts {
        let id = account
            .parse()
            .map_err(|_| StoreError::backend(format!("account tier of {account}")))?;
        book.accounts.insert(id, tier);
    }
    Ok(book)
}

/// A scope's stored provider and plan ('' when not narrowed).
pub fn scope_columns(scope: &Scope) -> (&'static str, String, String) {
    (
        scope.product.service(),
        scope.provider.clone().unwrap_or_default(),
        scope.plan.clone().unwrap_or_default(),
    )
}

/// What `create_tier` says when the name is taken.
pub fn tier_taken(name: &str) -> StoreError {
    StoreError::Invalid(format!("tier {name} already exists"))
}

/// What a pricing change says about a tier that does not exist.
pub fn no_such_tier(name: &str) -> StoreError {
    StoreError::Invalid(format!("no tier named {name}"))
}

/// Whether `record_funding` writes a payment now `current` (`None`: first
/// seen) as `new`: a credited one is final; "could not verify" never
/// replaces what a verification said (nor a pending one, which stays so).
pub(crate) fn funding_writes(current: Option<FundingStatus>, new: FundingStatus) -> bool {
    match current {
        None => true,
        Some(FundingStatus::Credited) => false,
        Some(_) => new != FundingStatus::PendingVerification,
    }
}

/// A credit names its account, a known gateway and a fee within the amount.
pub(crate) fn check_new_funding(new: &NewFunding) -> StoreResult<CreditSource> {
    let source = CreditSource::gateway(&new.gateway)
        .ok_or_else(|| StoreError::Invalid(format!("unknown funding gateway {}", new.gateway)))?;
    let credited = new.status == FundingStatus::Credited;
    if credited && new.account_id.is_none() {
        return Err(StoreError::Invalid(
            "a credited funding needs an account".into(),
        ));
    }
    if new.amount < Kobo::ZERO || new.fee < Kobo::ZERO || new.fee > new.amount {
        return Err(StoreError::Invalid(
            "a funding's fee must be 0 to its amount".into(),
        ));
    }
    Ok(source)
}

/// A new funding event's id.
pub(crate) fn funding_id() -> String {
    format!("fnd_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod funding_tests {
    use super::*;
    use FundingStatus::*;

    #[test]
    fn credited_is_final_and_a_failed_verify_never_overwrites_an_answer() {
        assert!(funding_writes(None, PendingVerification));
        assert!(!funding_writes(Some(Credited), Credited));
        assert!(!funding_writes(Some(Unmatched), PendingVerification));
        assert!(!funding_writes(
            Some(PendingVerification),
            PendingVerification
        ));
        assert!(funding_writes(Some(PendingVerification), Credited));
        assert!(funding_writes(Some(Rejected), Credited));
    }

    #[test]
    fn a_credit_source_is_the_operator_or_a_gateway_by_its_registry_name() {
        let read = |s: &str| s.parse::<CreditSource>();
        assert_eq!(read("operator"), Ok(CreditSource::Operator));
        let paystack = CreditSource::Gateway("paystack".into());
        assert_eq!(read("paystack"), Ok(paystack.clone()));
        assert_eq!(paystack.as_str(), "paystack");
        // the operator is not a gateway; a name is spelled as the registry spells it
        assert_eq!(CreditSource::gateway("operator"), None);
        for bad in ["", "Monnify", "pay stack", "paystack;--"] {
            assert_eq!(CreditSource::gateway(bad), None, "{bad:?}");
            assert!(read(bad).is_err(), "{bad:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords() {
        assert_eq!(redact_url("postgres://u:secret@db/x"), "postgres://…@db/x");
        assert_eq!(redact_url("sqlite://billpay.db"), "sqlite://billpay.db");
    }

    #[test]
    fn an_attempt_decides_the_next_state() {
        assert_eq!(EventNext::Delivered.state(), (EventStatus::Delivered, 0));
        assert_eq!(EventNext::Failed.state(), (EventStatus::Failed, 0));
        assert_eq!(EventNext::Skipped.state(), (EventStatus::Skipped, 0));
        assert_eq!(EventNext::RetryAtMs(42).state(), (EventStatus::Pending, 42));
    }

    #[test]
    fn a_purchase_is_refused_for_a_used_reference_before_the_balance() {
        let check = check_purchase;
        assert!(matches!(
            check(Kobo(0), true, Kobo(1)),
            Err(StoreError::Refused(Refusal::DuplicateReference))
        ));
        assert!(matches!(
            check(Kobo(99), false, Kobo(100)),
            Err(StoreError::Refused(Refusal::InsufficientBalance))
        ));
        assert_eq!(check(Kobo(100), false, Kobo(100)).unwrap(), Kobo(100));
    }

    #[test]
    fn requeue_says_why_not() {
        assert!(requeue_outcome(true, true).is_ok());
        assert!(matches!(
            requeue_outcome(false, false),
            Err(StoreError::NotFound("event"))
        ));
        assert!(matches!(
            requeue_outcome(false, true),
            Err(StoreError::DeliveryInProgress)
        ));
    }
}
