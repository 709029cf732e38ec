//! Alerts to operators (issue 30): a small periodic check that puts a
//! notice in the outbox for each operator who wants it when a supplier's
//! float is low, a supplier becomes unhealthy or comes back (issue 47),
//! purchases pile up, a purchase is held for review or its supplier's books
//! cannot say whether it was bought, a bank payment is unmatched or
//! rejected, a supplier failed the start-up check, and once a day (owners)
//! the summary of yesterday.
//!
//! Rate-limited by the notice's `cause`, which names the alert's period
//! (`float_low:vtpass:2026-11-25T10`, a Lagos hour) and its operator: the
//! outbox keeps one notice per cause and channel, so a float that stays low
//! sends one notice per hour however often it is checked, on however many
//! nodes, and a float low again in a later hour sends another.

use crate::held::HeldReview;
use billpay_domain::{Kobo, TxStatus};
use billpay_store::clock::{LAGOS, lagos_day_start};
use billpay_store::limits::held_words;
use billpay_store::{
    FundingFilter, FundingStatus, NewNotice, OperatorRole, SharedStore, StoreResult, Transaction,
    TxFilter,
};
use billpay_supplier::Supplier;
use billpay_supplier::health::{Health, StartCheck, float};
use billpay_webkit::format::lagos_time;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::sync::Notify;

/// One kind of alert: the notice's `kind` (its template) and what an
/// operator reads on "My account" to choose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlertKind {
    pub kind: &'static str,
    pub label: &'static str,
    /// Only owners get it (the daily summary's money figures).
    pub owners_only: bool,
}

impl AlertKind {
    /// Whether an operator of `role` may get this alert.
    pub fn is_for(&self, role: OperatorRole) -> bool {
        !self.owners_only || role == OperatorRole::Owner
    }
}

pub const FLOAT_LOW: AlertKind = AlertKind {
    kind: "operator_float_low",
    label: "A supplier's float is below the low-balance level",
    owners_only: false,
};
pub const BACKLOG: AlertKind = AlertKind {
    kind: "operator_backlog",
    label: "Purchases pile up: too many need review, or the oldest processing one is too old",
    owners_only: false,
};
pub const PAYMENT: AlertKind = AlertKind {
    kind: "operator_payment",
    label: "A bank payment is unmatched or rejected",
    owners_only: false,
};
pub const START_CHECK: AlertKind = AlertKind {
    kind: "operator_start_check",
    label: "A supplier failed the start-up check",
    owners_only: false,
};
pub const SUPPLIER_DOWN: AlertKind = AlertKind {
    kind: "operator_supplier_down",
    label: "A supplier failed several purchases in a row and is skipped for a while",
    owners_only: false,
};
pub const SUPPLIER_BACK: AlertKind = AlertKind {
    kind: "operator_supplier_back",
    label: "A supplier that was skipped is healthy again",
    owners_only: false,
};
pub const HELD: AlertKind = AlertKind {
    kind: "operator_held",
    label: "A purchase is held for review",
    owners_only: false,
};
pub const REVIEW_REQUESTED: AlertKind = AlertKind {
    kind: "operator_review_requested",
    label: "A purchase needs your review: the supplier's books cannot say",
    owners_only: false,
};
pub const DAILY_SUMMARY: AlertKind = AlertKind {
    kind: "operator_daily_summary",
    label: "The daily summary of yesterday's business",
    owners_only: true,
};

/// Every alert, in the order "My account" lists them.
pub const ALERTS: [AlertKind; 9] = [
    FLOAT_LOW,
    SUPPLIER_DOWN,
    SUPPLIER_BACK,
    BACKLOG,
    HELD,
    REVIEW_REQUESTED,
    PAYMENT,
    START_CHECK,
    DAILY_SUMMARY,
];

/// When the alerts fire (`serve`'s settings; docs/notifications-operators.md).
#[derive(Debug, Clone)]
pub struct AlertSettings {
    /// Between two checks.
    pub every: Duration,
    /// A float under it is low; `None`: no float alert.
    pub float_low: Option<Kobo>,
    /// A processing purchase older than this needs review (as the console's queue).
    pub needs_review_after: Duration,
    /// How long a held purchase waits for an owner before it is refunded.
    pub held_review: Duration,
    /// More needing review than this is an alert.
    pub review_count: u64,
    /// The oldest processing purchase older than this is an alert.
    pub oldest_processing: Duration,
    /// The Lagos hour (0–23) from which yesterday's summary is sent.
    pub summary_hour: u8,
}

impl Default for AlertSettings {
    fn default() -> Self {
        AlertSettings {
            every: Duration::from_secs(60),
            float_low: None,
            needs_review_after: Duration::from_secs(30 * 60),
            held_review: crate::held::DEFAULT_HELD_REVIEW,
            review_count: 10,
            oldest_processing: Duration::from_secs(30 * 60),
            summary_hour: 8,
        }
    }
}

/// How long a check waits for one supplier's float.
const FLOAT_WAIT: Duration = Duration::from_secs(10);
/// Payments older than this are not alerted on (a new operator is not told
/// of last month's).
const PAYMENT_WINDOW: time::Duration = time::Duration::days(1);
/// At most this many purchases are alerted on per check by each alert of
/// one purchase: held ones oldest first, those flagged for review newest first.
const PURCHASES_LISTED: u32 = 100;
/// At most this many needs-review purchases are counted per check.
const REVIEW_COUNT_CAP: u32 = 1000;

#[derive(Clone)]
pub struct Alerts {
    store: SharedStore,
    suppliers: Vec<Arc<dyn Supplier>>,
    start_checks: Arc<Vec<StartCheck>>,
    settings: AlertSettings,
}

impl Alerts {
    pub fn new(
        store: SharedStore,
        suppliers: Vec<Arc<dyn Supplier>>,
        start_checks: Arc<Vec<StartCheck>>,
        settings: AlertSettings,
    ) -> Self {
        Alerts {
            store,
            suppliers,
            start_checks,
            settings,
        }
    }

    /// Checks every `settings.every` until shutdown; a failed check is
    /// logged and tried again next time.
    pub async fn run(self, shutdown: Arc<Notify>) {
        let mut every = tokio::time::interval(self.settings.every);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                _ = shutdown.notified() => return,
            }
            if let Err(e) = self.run_once(OffsetDateTime::now_utc()).await {
                tracing::warn!(error = %e, "operator alerts: the check failed");
            }
        }
    }

    /// One check of everything at `now`; answers how many notices it added.
    pub async fn run_once(&self, now: OffsetDateTime) -> StoreResult<usize> {
        let hour = lagos_hour(now);
        let mut added = 0;
        for (kind, cause, data) in self.findings(now, &hour).await? {
            added += self.notify(kind, &cause, &data).await?;
        }
        Ok(added)
    }

    /// Each alert due now: its kind, its cause (naming its period) and data.
    async fn findings(
        &self,
        now: OffsetDateTime,
        hour: &str,
    ) -> StoreResult<Vec<(AlertKind, String, Value)>> {
        let mut found = self.low_floats(hour).await;
        found.extend(self.backlog(hour).await?);
        found.extend(self.held().await?);
        found.extend(self.review_requested().await?);
        found.extend(self.payments(now).await?);
        found.extend(self.failed_start_checks());
        found.extend(self.supplier_health(now).await?);
        found.extend(self.daily_summary(now).await?);
        Ok(found)
    }

    async fn low_floats(&self, hour: &str) -> Vec<(AlertKind, String, Value)> {
        let Some(threshold) = self.settings.float_low else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for supplier in &self.suppliers {
            let asked = tokio::time::timeout(FLOAT_WAIT, float(supplier.as_ref(), Some(threshold)));
            let Ok(Some(float)) = asked.await else {
                continue;
            };
            if let (Ok(balance), true) = (float.balance, float.low) {
                let name = supplier.name();
                let data = json!({
                    "supplier": name,
                    "balance": balance.to_string(),
                    "threshold": threshold.to_string(),
                });
                found.push((FLOAT_LOW, format!("float_low:{name}:{hour}"), data));
            }
        }
        found
    }

    /// The needs-review count and the oldest purchase's age are measured
    /// against the clock (the store's), whatever `now` the check was given.
    async fn backlog(&self, hour: &str) -> StoreResult<Option<(AlertKind, String, Value)>> {
        let backlog = self.store.fulfilment_backlog().await?;
        let bound = crate::fulfilment::needs_review_before(self.settings.needs_review_after);
        let review = self.store.needs_review_count(&bound, REVIEW_COUNT_CAP);
        let needs_review = review.await?;
        let oldest_secs = backlog.oldest_age_secs() as u64;
        let too_many = needs_review > self.settings.review_count;
        let too_old =
            backlog.processing > 0 && oldest_secs > self.settings.oldest_processing.as_secs();
        if !too_many && !too_old {
            return Ok(None);
        }
        let data = json!({
            "needs_review": needs_review,
            "review_threshold": self.settings.review_count,
            "processing": backlog.processing,
            "oldest_minutes": oldest_secs / 60,
            "oldest_threshold_minutes": self.settings.oldest_processing.as_secs() / 60,
        });
        Ok(Some((BACKLOG, format!("backlog:{hour}"), data)))
    }

    /// Each purchase held for review, once: it waits for an owner.
    async fn held(&self) -> StoreResult<Vec<(AlertKind, String, Value)>> {
        let held = self.store.held_purchases(PURCHASES_LISTED).await?;
        let found = held.into_iter().filter_map(|tx| {
            let until = HeldReview::deadline(&tx.created_at, self.settings.held_review)?;
            let why = json!({
                "rule": held_words(tx.held_for.as_deref().unwrap_or_default()),
                "until": lagos_time(&until),
            });
            Some(about_purchase(HELD, "held", &tx, why))
        });
        Ok(found.collect())
    }

    /// Each processing purchase flagged for review because its supplier's
    /// books cannot say whether it was bought, once: a person decides.
    async fn review_requested(&self) -> StoreResult<Vec<(AlertKind, String, Value)>> {
        let flagged = TxFilter::review_requested(PURCHASES_LISTED);
        let found = self
            .store
            .transactions(flagged)
            .await?
            .into_iter()
            .map(|tx| {
                let why = json!({
                    "supplier": tx.supplier.as_deref().unwrap_or("its supplier"),
                    // The note recorded with the flag: what was searched, what was found.
                    "evidence": tx.result["last_note"].as_str().unwrap_or_default(),
                    "asked": tx.review_requested_at.as_deref().map(lagos_time).unwrap_or_default(),
                });
                about_purchase(REVIEW_REQUESTED, "review_requested", &tx, why)
            });
        Ok(found.collect())
    }

    /// Each unmatched or rejected payment of the last day, once.
    async fn payments(&self, now: OffsetDateTime) -> StoreResult<Vec<(AlertKind, String, Value)>> {
        let since = billpay_store::clock::rfc3339(unix_ms(now - PAYMENT_WINDOW));
        let mut found = Vec::new();
        for status in [FundingStatus::Unmatched, FundingStatus::Rejected] {
            let events = self.store.funding_events(FundingFilter {
                status: Some(status),
                limit: 100,
                ..FundingFilter::default()
            });
            for event in events.await?.into_iter().filter(|e| e.created_at >= since) {
                let data = json!({
                    "status": status.as_str(),
                    "gateway": event.gateway,
                    "reference": event.gateway_reference,
                    "amount": event.amount.to_string(),
                    "payer": event.payer,
                    "account_number": event.account_number,
                    "note": event.note,
                });
                found.push((PAYMENT, format!("payment:{}", event.id), data));
            }
        }
        Ok(found)
    }

    /// Each supplier that failed this process's start-up check, once per start.
    fn failed_start_checks(&self) -> Vec<(AlertKind, String, Value)> {
        let failed = self
            .start_checks
            .iter()
            .filter_map(|check| match &check.health {
                Some(Health::Broken(problem)) => Some((check, problem)),
                _ => None,
            });
        failed
            .map(|(check, problem)| {
                let at = lagos_minute(&check.at);
                let data = json!({ "supplier": check.supplier, "problem": problem, "at": at });
                let cause = format!("start_check:{}:{}", check.supplier, check.at);
                (START_CHECK, cause, data)
            })
            .collect()
    }

    /// Each time a supplier became unhealthy, and each time it came back,
    /// once (the cause names the supplier and its episode, so every node's
    /// check makes one notice per transition); those of the last day only.
    async fn supplier_health(
        &self,
        now: OffsetDateTime,
    ) -> StoreResult<Vec<(AlertKind, String, Value)>> {
        let since = unix_ms(now - PAYMENT_WINDOW);
        let lagos = |ms: i64| lagos_minute(&billpay_store::clock::rfc3339(ms));
        let mut found = Vec::new();
        for h in self.store.supplier_health().await? {
            let (name, episode) = (&h.supplier, h.episodes);
            let Some(down_at) = h.down_at_ms.filter(|&at| at >= since && episode > 0) else {
                continue;
            };
            let error = h.last_errors.last().map_or("", |e| e.message.as_str());
            let data = json!({
                "supplier": name,
                "failures": h.failures,
                "at": lagos(down_at),
                "until": h.backoff_until_ms.map_or_else(|| "it came back".to_owned(), lagos),
                "error": error,
            });
            found.push((
                SUPPLIER_DOWN,
                format!("supplier_down:{name}:{episode}"),
                data,
            ));
            if let Some(back_at) = h.back_at_ms.filter(|&at| at >= down_at) {
                let data =
                    json!({ "supplier": name, "at": lagos(back_at), "down_at": lagos(down_at) });
                found.push((
                    SUPPLIER_BACK,
                    format!("supplier_back:{name}:{episode}"),
                    data,
                ));
            }
        }
        Ok(found)
    }

    /// Yesterday's figures (Lagos days), once a day from the summary hour.
    async fn daily_summary(
        &self,
        now: OffsetDateTime,
    ) -> StoreResult<Option<(AlertKind, String, Value)>> {
        let lagos = now.to_offset(LAGOS);
        if lagos.hour() < self.settings.summary_hour {
            return Ok(None);
        }
        let today = lagos.date();
        let yesterday = today.previous_day().expect("today is not the first day");
        let (from, until) = (lagos_day_start(yesterday), lagos_day_start(today));
        let mut data = self.day_figures(&from, &until).await?;
        data["day"] = json!(yesterday.to_string());
        data["floats"] = json!(self.floats().await);
        let cause = format!("daily_summary:{yesterday}");
        Ok(Some((DAILY_SUMMARY, cause, data)))
    }

    /// Sales, margin (of the purchases whose cost is known), failures,
    /// funding and new customers in `[from, until)`.
    async fn day_figures(&self, from: &str, until: &str) -> StoreResult<Value> {
        let groups = self.store.sales_rollup(from.into(), until.into()).await?;
        let (mut sales, mut charged, mut margin, mut failed) = (0, Kobo::ZERO, Kobo::ZERO, 0);
        for group in &groups {
            let sums = &group.sums;
            match group.status {
                TxStatus::Successful => {
                    sales += sums.purchases;
                    charged = Kobo(charged.0 + sums.charged.0);
                    margin = Kobo(margin.0 + sums.margin().0);
                }
                _ => failed += sums.purchases,
            }
        }
        let funding = self.store.funding_totals(from, until).await?;
        let new_customers = self.store.accounts_created(from, until).await?;
        Ok(json!({
            "sales": sales,
            "charged": charged.to_string(),
            "margin": margin.to_string(),
            "failed": failed,
            "funding_received": funding.received.to_string(),
            "funding_payments": funding.payments,
            "funding_fees": funding.fees.to_string(),
            "new_customers": new_customers,
        }))
    }

    /// Each supplier's float now (`null` when unreadable); those keeping none left out.
    async fn floats(&self) -> Vec<Value> {
        let mut floats = Vec::new();
        for supplier in &self.suppliers {
            let asked = tokio::time::timeout(FLOAT_WAIT, float(supplier.as_ref(), None));
            let balance = match asked.await {
                Ok(None) => continue,
                Ok(Some(found)) => found.balance.ok().map(|b| b.to_string()),
                Err(_) => None,
            };
            floats.push(json!({ "supplier": supplier.name(), "balance": balance }));
        }
        floats
    }

    /// One notice per operator who wants `alert` and channel they chose
    /// (email, SMS to their phone); answers how many were new.
    async fn notify(&self, alert: AlertKind, cause: &str, data: &Value) -> StoreResult<usize> {
        let mut added = 0;
        let recipients = self.store.alert_recipients(alert.kind).await?;
        for to in recipients.into_iter().filter(|r| alert.is_for(r.role)) {
            let channels = [("email", to.email), ("sms", to.sms)];
            for (channel, address) in channels {
                let Some(recipient) = address else { continue };
                let notice = NewNotice {
                    cause: format!("{cause}:op{}", to.operator_id),
                    kind: alert.kind.to_owned(),
                    channel: channel.to_owned(),
                    recipient,
                    account_id: None,
                    operator_id: Some(to.operator_id.to_string()),
                    data: data.clone(),
                };
                if self.store.enqueue_notice(notice).await? {
                    added += 1;
                    tracing::info!(kind = alert.kind, cause, channel, "operator alert queued");
                }
            }
        }
        Ok(added)
    }
}

/// A once-per-purchase alert: its cause `<prefix>:<code>`, and its data what
/// the purchase is (code, product label, recipient, amount, when placed in
/// Lagos) with `why` (an object) added.
fn about_purchase(
    alert: AlertKind,
    prefix: &str,
    tx: &Transaction,
    why: Value,
) -> (AlertKind, String, Value) {
    let mut data = json!({
        "code": tx.code,
        "label": tx.label,
        "recipient": tx.recipient,
        "amount": tx.amount.to_string(),
        "placed": lagos_time(&tx.created_at),
    });
    if let (Some(data), Value::Object(why)) = (data.as_object_mut(), why) {
        data.extend(why);
    }
    (alert, format!("{prefix}:{}", tx.code), data)
}

/// The Lagos hour of `at`, `YYYY-MM-DDTHH`: the period of a repeating alert.
pub fn lagos_hour(at: OffsetDateTime) -> String {
    let lagos = at.to_offset(LAGOS);
    format!("{}T{:02}", lagos.date(), lagos.hour())
}

/// `YYYY-MM-DD HH:MM` in Lagos of an RFC 3339 time (as given if it is none).
fn lagos_minute(rfc3339: &str) -> String {
    let parsed = OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339);
    parsed.map_or_else(
        |_| rfc3339.to_owned(),
        |at| {
            let lagos = at.to_offset(LAGOS);
            format!("{} {:02}:{:02}", lagos.date(), lagos.hour(), lagos.minute())
        },
    )
}

fn unix_ms(at: OffsetDateTime) -> i64 {
    (at.unix_timestamp_nanos() / 1_000_000) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn the_period_is_the_lagos_hour() {
        assert_eq!(lagos_hour(datetime!(2026-11-25 23:30 UTC)), "2026-11-26T00");
        assert_eq!(lagos_hour(datetime!(2026-11-25 09:05 UTC)), "2026-11-25T10");
        assert_eq!(lagos_minute("2026-11-25T23:30:00Z"), "2026-11-26 00:30");
    }

    #[test]
    fn the_daily_summary_is_for_owners_only() {
        assert!(DAILY_SUMMARY.is_for(OperatorRole::Owner));
        assert!(!DAILY_SUMMARY.is_for(OperatorRole::Support));
        assert!(FLOAT_LOW.is_for(OperatorRole::Support));
    }
}
