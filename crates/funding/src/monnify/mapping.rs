//! Reading Monnify's answers and webhooks. Fields are read leniently where
//! Monnify's own samples disagree (`settlementAmount` a string or a number,
//! `currency` or `currencyCode`, the paid time in several formats).

use crate::*;
use serde_json::Value;
use time::macros::format_description;
use time::{PrimitiveDateTime, UtcOffset};

/// The access token of a login's `responseBody`, and how long it lasts.
pub(super) fn login_token(body: &Value) -> Result<(String, Duration), GatewayError> {
    let token = text(&body["accessToken"])
        .ok_or_else(|| GatewayError::Unavailable("Monnify's login gave no accessToken".into()))?;
    let seconds = body["expiresIn"].as_u64().unwrap_or(300);
    Ok((token, Duration::from_secs(seconds)))
}

/// The accounts of a reservation's `responseBody`.
pub(super) fn reservation(body: &Value, account_ref: &str) -> Result<Reservation, GatewayError> {
    let accounts = body["accounts"].as_array().cloned().unwrap_or_default();
    let accounts: Vec<BankAccount> = accounts
        .iter()
        .filter_map(|a| {
            Some(BankAccount {
                bank_name: text(&a["bankName"])?,
                account_number: text(&a["accountNumber"])?,
                account_name: text(&a["accountName"]).or_else(|| text(&body["accountName"]))?,
            })
        })
        .collect();
    if accounts.is_empty() {
        return Err(GatewayError::Unavailable(
            "Monnify reserved no account".into(),
        ));
    }
    let customer_ref = text(&body["accountReference"]).unwrap_or_else(|| account_ref.to_owned());
    Ok(Reservation {
        customer_ref,
        accounts,
    })
}

/// A transaction as Monnify describes it (verify's `responseBody`, a listed
/// payment, a webhook's `eventData`); `None` without a reference or amount.
pub fn payment(body: &Value) -> Option<Payment> {
    let status = text(&body["paymentStatus"]).unwrap_or_else(|| "UNKNOWN".into());
    // OVERPAID / PARTIALLY_PAID: more / less than the payment's expected
    // amount (`totalPayable`) arrived. A wallet has no price to meet: every
    // Naira that reached the business is the customer's, and `amountPaid`
    // is what arrived (docs/funding.md, "Partial and over-payments").
    let status = match status.as_str() {
        "PAID" | "OVERPAID" | "PARTIALLY_PAID" => PaidStatus::Paid,
        _ => PaidStatus::NotPaid(status),
    };
    let currency = text(&body["currency"]).or_else(|| text(&body["currencyCode"]));
    let source = &body["paymentSourceInformation"];
    let source = source.as_array().and_then(|a| a.first()).unwrap_or(source);
    let payer = [text(&source["accountName"]), text(&source["bankName"])];
    let payer = payer.into_iter().flatten().collect::<Vec<_>>().join(", ");
    Some(Payment {
        reference: text(&body["transactionReference"])?,
        status,
        amount: naira(&body["amountPaid"])?,
        currency: currency.unwrap_or_else(|| "NGN".into()),
        customer_ref: text(&body["product"]["reference"])
            .or_else(|| text(&body["accountReference"])),
        account_number: text(&body["destinationAccountInformation"]["accountNumber"]),
        payer: (!payer.is_empty()).then_some(payer),
    })
}

/// A webhook body (signature already checked).
pub(super) fn read_event(body: &[u8]) -> Webhook {
    let Ok(event) = serde_json::from_slice::<Value>(body) else {
        return Webhook::Ignore("not JSON".into());
    };
    let kind = event["eventType"].as_str().unwrap_or("none");
    if kind != "SUCCESSFUL_TRANSACTION" {
        return Webhook::Ignore(format!("event {kind} is not a payment"));
    }
    let data = &event["eventData"];
    let Some(reference) = text(&data["transactionReference"]) else {
        return Webhook::Ignore("a payment without transactionReference".into());
    };
    Webhook::Payment(PaymentNotice {
        reference,
        claimed_amount: naira(&data["amountPaid"]),
        customer_ref: text(&data["product"]["reference"]),
        account_number: text(&data["destinationAccountInformation"]["accountNumber"]),
    })
}

/// One page of a reserved account's payments.
pub(super) struct Listed {
    pub payments: Vec<Payment>,
    /// No page after it, or this page already reached before `since`.
    pub last_page: bool,
}

/// A page of `GET …/reserved-accounts/transactions` (newest first), keeping
/// the payments made since `since`.
pub(super) fn listed_payments(body: &Value, account_ref: &str, since: OffsetDateTime) -> Listed {
    let content = body["content"].as_array().cloned().unwrap_or_default();
    let mut reached_older = false;
    let mut payments = Vec::new();
    for item in &content {
        let paid_on = ["paidOn", "completedOn", "createdOn", "transactionDate"]
            .iter()
            .find_map(|f| paid_time(&item[*f]));
        if paid_on.is_some_and(|t| t < since) {
            reached_older = true;
            continue;
        }
        if let Some(mut payment) = payment(item) {
            payment
                .customer_ref
                .get_or_insert_with(|| account_ref.to_owned());
            payments.push(payment);
        }
    }
    let last = body["last"].as_bool().unwrap_or(true);
    Listed {
        payments,
        last_page: last || content.is_empty() || reached_older,
    }
}

/// Monnify's times: `2021-11-17 11:28:42.615` or `2021-11-17T11:28:42` (Lagos
/// time, UTC+1), or RFC 3339.
fn paid_time(value: &Value) -> Option<OffsetDateTime> {
    let text = value.as_str()?.trim();
    if let Ok(t) = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339) {
        return Some(t);
    }
    let text = text.replace('T', " ");
    let text = text.split('.').next()?;
    let format = format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    let local = PrimitiveDateTime::parse(text, format).ok()?;
    Some(local.assume_offset(UtcOffset::from_hms(1, 0, 0).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::tests::MONNIFY_SAMPLE_BODY;
    use serde_json::json;

    #[test]
    fn reads_monnifys_sample_event() {
        let Webhook::Payment(notice) = read_event(MONNIFY_SAMPLE_BODY.as_bytes()) else {
            panic!("a payment");
        };
        assert_eq!(notice.reference, "MNFY|76|20211117154810|000001");
        assert_eq!(notice.claimed_amount, Some(Kobo(7_800_000)));
        assert_eq!(notice.customer_ref.as_deref(), Some("111222333"));
        let settlement = json!({"eventType": "SETTLEMENT", "eventData": {}}).to_string();
        assert!(matches!(
            read_event(settlement.as_bytes()),
            Webhook::Ignore(_)
        ));
    }

    #[test]
    fn reads_a_verified_transaction_in_either_form() {
        let body = json!({
            "transactionReference": "MNFY|1", "paymentStatus": "PAID", "amountPaid": "1500.50",
            "currencyCode": "NGN", "product": {"type": "RESERVED_ACCOUNT", "reference": "acc-1"},
            "paymentSourceInformation": [{"accountName": "ADA OKAFOR", "bankName": "GTBank"}]
        });
        let payment = payment(&body).unwrap();
        assert_eq!(payment.amount, Kobo(150_050));
        assert_eq!(payment.status, PaidStatus::Paid);
        assert_eq!(payment.customer_ref.as_deref(), Some("acc-1"));
        assert_eq!(payment.payer.as_deref(), Some("ADA OKAFOR, GTBank"));
        let pending =
            json!({"transactionReference": "MNFY|2", "paymentStatus": "PENDING", "amountPaid": 0});
        assert_eq!(
            payment_status(&pending),
            PaidStatus::NotPaid("PENDING".into())
        );
    }

    #[test]
    fn a_partial_payment_is_paid_for_what_arrived() {
        let body = json!({
            "transactionReference": "MNFY|3", "paymentStatus": "PARTIALLY_PAID",
            "amountPaid": 1500.25, "totalPayable": 2000, "currency": "NGN"
        });
        let payment = payment(&body).unwrap();
        assert_eq!(payment.status, PaidStatus::Paid);
        assert_eq!(
            payment.amount,
            Kobo(150_025),
            "amountPaid, not totalPayable"
        );
    }

    fn payment_status(body: &Value) -> PaidStatus {
        payment(body).unwrap().status
    }

    #[test]
    fn lists_stop_at_older_payments() {
        let since = OffsetDateTime::parse(
            "2026-01-02T00:00:00Z",
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        let page = json!({"content": [
            {"transactionReference": "MNFY|new", "paymentStatus": "PAID", "amountPaid": 100, "currency": "NGN", "paidOn": "2026-01-03 10:00:00.000"},
            {"transactionReference": "MNFY|old", "paymentStatus": "PAID", "amountPaid": 100, "currency": "NGN", "paidOn": "2026-01-01 10:00:00.000"}
        ], "last": false});
        let listed = listed_payments(&page, "acc-1", since);
        assert_eq!(listed.payments.len(), 1);
        assert_eq!(listed.payments[0].customer_ref.as_deref(), Some("acc-1"));
        assert!(listed.last_page);
    }
}
