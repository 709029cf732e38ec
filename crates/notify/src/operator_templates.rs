//! The operators' alerts (issue 30) rendered for email: each kind's text
//! from its template (`templates/operator_<kind>.txt`, compiled in) over
//! the notice's `data`, and one HTML layout around that text. The alert
//! check (`billpay_worker::alerts`) writes the `data` each reads.

use askama::Template;
use billpay_domain::{Kobo, naira};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

/// An alert as a message's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_float_low.txt")]
struct FloatLow {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    supplier: String,
    #[serde(deserialize_with = "money")]
    balance: String,
    #[serde(deserialize_with = "money")]
    threshold: String,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_backlog.txt")]
struct Backlog {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    needs_review: u64,
    review_threshold: u64,
    processing: u64,
    oldest_minutes: u64,
    oldest_threshold_minutes: u64,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_payment.txt")]
struct Payment {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    status: String,
    gateway: String,
    reference: String,
    #[serde(deserialize_with = "money")]
    amount: String,
    payer: Option<String>,
    account_number: Option<String>,
    #[serde(default)]
    note: String,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_start_check.txt")]
struct StartCheck {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    supplier: String,
    problem: String,
    /// Lagos time, as the alert check wrote it.
    at: String,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_supplier_down.txt")]
struct SupplierDown {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    supplier: String,
    failures: u32,
    /// Lagos times, as the alert check wrote them.
    at: String,
    until: String,
    error: String,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_supplier_back.txt")]
struct SupplierBack {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    supplier: String,
    /// Lagos times, as the alert check wrote them.
    at: String,
    down_at: String,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_held.txt")]
struct Held {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    code: String,
    label: String,
    recipient: String,
    #[serde(deserialize_with = "money")]
    amount: String,
    /// The rule that held it, in words.
    rule: String,
    /// Lagos times, as the alert check wrote them.
    placed: String,
    until: String,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_review_requested.txt")]
struct ReviewRequested {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    code: String,
    label: String,
    recipient: String,
    #[serde(deserialize_with = "money")]
    amount: String,
    /// The supplier whose books cannot say.
    supplier: String,
    /// The note recorded with the flag: what was searched, what was found.
    evidence: String,
    /// Lagos times, as the alert check wrote them (`asked`: when flagged).
    placed: String,
    #[serde(default)]
    asked: String,
}

#[derive(Deserialize)]
struct FloatNow {
    supplier: String,
    #[serde(default, deserialize_with = "money_opt")]
    balance: Option<String>,
}

#[derive(Template, Deserialize)]
#[template(path = "operator_daily_summary.txt")]
struct DailySummary {
    /// The SMS's one short text instead of the email's.
    #[serde(skip)]
    sms: bool,
    day: String,
    sales: u64,
    #[serde(deserialize_with = "money")]
    charged: String,
    #[serde(deserialize_with = "money")]
    margin: String,
    failed: u64,
    #[serde(deserialize_with = "money")]
    funding_received: String,
    funding_payments: u64,
    #[serde(deserialize_with = "money")]
    funding_fees: String,
    new_customers: u64,
    #[serde(default)]
    floats: Vec<FloatNow>,
}

#[derive(Template)]
#[template(path = "operator_layout.html")]
struct Layout<'a> {
    subject: &'a str,
    paragraphs: Vec<&'a str>,
    business: &'a str,
}

/// The alert `kind` over its `data`, for `business` (the operator's
/// business name); `None` for a kind that is no operator alert, or data
/// that is not that kind's.
pub fn render(kind: &str, data: &serde_json::Value, business: &str) -> Option<Rendered> {
    let (subject, text) = written(kind, data, false)?;
    let subject = format!("{business}: {subject}");
    let paragraphs = text.split("\n\n").map(str::trim).collect();
    let html = Layout {
        subject: &subject,
        paragraphs,
        business,
    }
    .render()
    .ok()?;
    Some(Rendered {
        subject,
        text: format!("{text}\n\n— {business} · billpay operator alert\n"),
        html,
    })
}

/// The alert as one SMS: the business name, then its short text (each
/// template's `sms` part).
pub fn render_sms(kind: &str, data: &serde_json::Value, business: &str) -> Option<String> {
    let (_, text) = written(kind, data, true)?;
    Some(format!("{business}: {}", text.trim()))
}

/// The alert's subject and its text, for email or (`sms`) for SMS.
fn written(kind: &str, data: &serde_json::Value, sms: bool) -> Option<(String, String)> {
    let (subject, text) = match kind {
        "operator_float_low" => {
            let alert = FloatLow {
                sms,
                ..parse(data)?
            };
            (format!("Low float at {}", alert.supplier), alert.render())
        }
        "operator_backlog" => {
            let alert = Backlog {
                sms,
                ..parse(data)?
            };
            ("Purchases are piling up".to_owned(), alert.render())
        }
        "operator_payment" => {
            let alert = Payment {
                sms,
                ..parse(data)?
            };
            (
                format!("A bank payment is {}", alert.status),
                alert.render(),
            )
        }
        "operator_start_check" => {
            let alert = StartCheck {
                sms,
                ..parse(data)?
            };
            (
                format!("{} failed the start-up check", alert.supplier),
                alert.render(),
            )
        }
        "operator_supplier_down" => {
            let alert = SupplierDown {
                sms,
                ..parse(data)?
            };
            (format!("{} is unhealthy", alert.supplier), alert.render())
        }
        "operator_supplier_back" => {
            let alert = SupplierBack {
                sms,
                ..parse(data)?
            };
            (
                format!("{} is healthy again", alert.supplier),
                alert.render(),
            )
        }
        "operator_held" => {
            let alert = Held {
                sms,
                ..parse(data)?
            };
            (
                format!("Purchase {} is held for review", alert.code),
                alert.render(),
            )
        }
        "operator_review_requested" => {
            let alert = ReviewRequested {
                sms,
                ..parse(data)?
            };
            (
                format!("Purchase {} needs your review", alert.code),
                alert.render(),
            )
        }
        "operator_daily_summary" => {
            let alert = DailySummary {
                sms,
                ..parse(data)?
            };
            (format!("Your day: {}", alert.day), alert.render())
        }
        _ => return None,
    };
    Some((subject, text.ok()?))
}

/// An amount the alert check wrote as plain Naira (`"1200.00"`), as people
/// read it: `₦1,200.00` (`billpay_domain::naira`); text that is no amount
/// is kept as it is.
fn money<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    Ok(as_naira(&text))
}

fn money_opt<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let text = Option::<String>::deserialize(deserializer)?;
    Ok(text.as_deref().map(as_naira))
}

fn as_naira(text: &str) -> String {
    let negative = text.trim().strip_prefix('-');
    match Kobo::parse_naira(negative.unwrap_or(text).trim()) {
        Ok(k) if negative.is_some() => naira(Kobo(-k.0)),
        Ok(k) => naira(k),
        Err(_) => text.to_owned(),
    }
}

fn parse<T: DeserializeOwned>(data: &serde_json::Value) -> Option<T> {
    serde_json::from_value(data.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_low_float_names_the_supplier_and_both_amounts() {
        let data = json!({ "supplier": "vtpass", "balance": "1200.00", "threshold": "5000.00" });
        let alert = render("operator_float_low", &data, "Ada Data").unwrap();
        assert_eq!(alert.subject, "Ada Data: Low float at vtpass");
        assert!(
            alert
                .text
                .contains("₦1,200.00, under your low-balance level of ₦5,000.00")
        );
        assert!(alert.html.contains("Low float at vtpass"));
    }

    #[test]
    fn the_html_escapes_what_a_payer_typed() {
        let data = json!({
            "status": "unmatched", "gateway": "monnify", "reference": "MNFY|1",
            "amount": "5000.00", "payer": "<b>Bola</b>", "account_number": null, "note": ""
        });
        let alert = render("operator_payment", &data, "Ada Data").unwrap();
        assert!(alert.text.contains("Payer: <b>Bola</b>"));
        let escaped = ["&lt;b&gt;Bola", "&#60;b&#62;Bola"];
        assert!(
            escaped.iter().any(|e| alert.html.contains(e)),
            "{}",
            alert.html
        );
        assert!(!alert.html.contains("<b>Bola"));
        assert!(alert.text.contains("assign it"));
    }

    #[test]
    fn each_alert_has_a_short_sms_with_the_business_name() {
        let float = json!({ "supplier": "vtpass", "balance": "1200.00", "threshold": "5000.00" });
        let sms = render_sms("operator_float_low", &float, "Ada Data").unwrap();
        assert_eq!(
            sms,
            "Ada Data: Low float at vtpass: ₦1,200.00, under ₦5,000.00. Fund it now."
        );
        let payment = json!({
            "status": "unmatched", "gateway": "monnify", "reference": "MNFY|1",
            "amount": "5000.00", "payer": null, "account_number": null, "note": ""
        });
        let sms = render_sms("operator_payment", &payment, "Ada Data").unwrap();
        assert!(sms.contains("₦5,000.00") && sms.contains("MNFY|1"), "{sms}");
        assert!(sms.chars().count() <= 160, "{sms}");
        assert_eq!(render_sms("password_reset", &payment, "Ada Data"), None);
    }

    #[test]
    fn a_purchase_needing_review_says_what_where_the_evidence_and_what_to_do() {
        let data = json!({
            "code": "BP1A2B3C", "label": "MTN SME 1GB", "recipient": "08000000500",
            "amount": "280.00", "placed": "29 Nov 2026, 15:02 WAT",
            "supplier": "husmodata", "asked": "29 Nov 2026, 15:03 WAT",
            "evidence": "needs the operator's review: no order found at husmodata for 08000000500"
        });
        let alert = render("operator_review_requested", &data, "Ada Data").unwrap();
        assert_eq!(
            alert.subject,
            "Ada Data: Purchase BP1A2B3C needs your review"
        );
        let text = &alert.text;
        assert!(
            text.contains("husmodata's books cannot say whether it was bought"),
            "{text}"
        );
        assert!(
            text.contains("MTN SME 1GB for 08000000500, ₦280.00 (reference BP1A2B3C), placed 29 Nov 2026, 15:02 WAT"),
            "{text}"
        );
        assert!(
            text.contains("(29 Nov 2026, 15:03 WAT): needs the operator's review: no order found"),
            "{text}"
        );
        assert!(text.contains("\"Needs review\""), "{text}");
        assert!(alert.html.contains("no order found at husmodata"));
        let sms = render_sms("operator_review_requested", &data, "Ada Data").unwrap();
        assert!(
            sms.starts_with("Ada Data: Purchase BP1A2B3C (MTN SME 1GB, ₦280.00) needs your review"),
            "{sms}"
        );
        assert!(
            sms.chars().count() <= 160,
            "{} chars: {sms}",
            sms.chars().count()
        );
    }

    #[test]
    fn the_summary_lists_each_float_and_an_unknown_kind_renders_nothing() {
        let data = json!({
            "day": "2026-11-24", "sales": 3, "charged": "1500.00", "margin": "-1045.50",
            "failed": 1, "funding_received": "10000.00", "funding_payments": 2,
            "funding_fees": "100.00", "new_customers": 4,
            "floats": [{ "supplier": "vtpass", "balance": "80000.00" },
                       { "supplier": "clubkonnect", "balance": null }]
        });
        let alert = render("operator_daily_summary", &data, "Ada Data").unwrap();
        assert!(alert.text.contains("Sales: 3 purchases, ₦1,500.00"));
        assert!(alert.text.contains("vtpass: ₦80,000.00"));
        assert!(alert.text.contains("Margin: -₦1,045.50"), "{}", alert.text);
        assert!(alert.text.contains("Funding: ₦10,000.00 in 2 payments"));
        assert!(alert.text.contains("clubkonnect: could not be read"));
        assert_eq!(render("password_reset", &data, "Ada Data"), None);
        assert_eq!(render("operator_backlog", &json!({}), "Ada Data"), None);
    }

    #[test]
    fn a_supplier_down_says_until_when_and_its_last_error_and_back_says_since_when() {
        let down = json!({
            "supplier": "husmodata", "failures": 3, "at": "2026-11-25 10:00",
            "until": "2026-11-25 10:01", "error": "the supplier refused the order (no data)"
        });
        let alert = render("operator_supplier_down", &down, "Ada Data").unwrap();
        assert_eq!(alert.subject, "Ada Data: husmodata is unhealthy");
        assert!(
            alert.text.contains("failed 3 purchases in a row"),
            "{}",
            alert.text
        );
        assert!(
            alert.text.contains("until 2026-11-25 10:01"),
            "{}",
            alert.text
        );
        assert!(
            alert
                .text
                .contains("Last error: the supplier refused the order (no data)")
        );
        let sms = render_sms("operator_supplier_down", &down, "Ada Data").unwrap();
        assert!(
            sms.starts_with("Ada Data: husmodata is unhealthy (3 failures in a row)"),
            "{sms}"
        );
        let back = json!({ "supplier": "husmodata", "at": "2026-11-25 10:02", "down_at": "2026-11-25 10:00" });
        let alert = render("operator_supplier_back", &back, "Ada Data").unwrap();
        assert_eq!(alert.subject, "Ada Data: husmodata is healthy again");
        assert!(
            alert.text.contains("unhealthy since 2026-11-25 10:00"),
            "{}",
            alert.text
        );
        let sms = render_sms("operator_supplier_back", &back, "Ada Data").unwrap();
        assert_eq!(
            sms,
            "Ada Data: husmodata is healthy again: it delivered at 2026-11-25 10:02."
        );
    }
}
