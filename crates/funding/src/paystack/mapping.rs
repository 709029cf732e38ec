//! Reading Paystack's answers and webhooks (amounts in kobo).

use crate::*;
use serde_json::Value;

/// A dedicated account as `POST /dedicated_account` or the assignment
/// webhook describe it; `None` while it has no number yet.
pub fn dedicated_account(data: &Value) -> Option<BankAccount> {
    Some(BankAccount {
        bank_name: text(&data["bank"]["name"])?,
        account_number: text(&data["account_number"])?,
        account_name: text(&data["account_name"])?,
    })
}

/// A transaction (verify's `data`, a listed one, a webhook's `data`).
pub fn payment(data: &Value) -> Option<Payment> {
    let status = text(&data["status"]).unwrap_or_else(|| "unknown".into());
    let status = match status.as_str() {
        "success" => PaidStatus::Paid,
        _ => PaidStatus::NotPaid(status),
    };
    let authorization = &data["authorization"];
    let payer = match text(&authorization["sender_name"]) {
        // a transfer: the sender and their bank
        Some(sender) => vec![Some(sender), text(&authorization["sender_bank"])],
        // a card: the cardholder (else the customer) and the card's bank and last digits
        None => vec![
            text(&authorization["account_name"]).or_else(|| customer_name(&data["customer"])),
            text(&authorization["bank"]),
            text(&authorization["last4"]).map(|last4| format!("card ending {last4}")),
        ],
    };
    let payer = payer.into_iter().flatten().collect::<Vec<_>>().join(", ");
    Some(Payment {
        reference: text(&data["reference"])?,
        status,
        amount: kobo(&data["amount"])?,
        currency: text(&data["currency"]).unwrap_or_else(|| "NGN".into()),
        customer_ref: text(&data["customer"]["customer_code"]),
        account_number: text(&authorization["receiver_bank_account_number"]),
        payer: (!payer.is_empty()).then_some(payer),
    })
}

/// The customer's name as Paystack holds it, else their email address.
fn customer_name(customer: &Value) -> Option<String> {
    let name = [text(&customer["first_name"]), text(&customer["last_name"])];
    let name = name.into_iter().flatten().collect::<Vec<_>>().join(" ");
    Some(name)
        .filter(|n| !n.is_empty())
        .or_else(|| text(&customer["email"]))
}

/// A transfer into a dedicated account (not a card payment for something else).
pub(super) fn is_transfer(data: &Value) -> bool {
    data["channel"]
        .as_str()
        .is_none_or(|c| c == "dedicated_nuban")
}

/// A webhook body (signature already checked).
pub(super) fn read_event(body: &[u8]) -> Webhook {
    let Ok(event) = serde_json::from_slice::<Value>(body) else {
        return Webhook::Ignore("not JSON".into());
    };
    let data = &event["data"];
    match event["event"].as_str().unwrap_or("none") {
        "charge.success" => match text(&data["reference"]) {
            Some(reference) => {
                let notice = PaymentNotice {
                    reference,
                    claimed_amount: kobo(&data["amount"]),
                    customer_ref: text(&data["customer"]["customer_code"]),
                    account_number: text(&data["authorization"]["receiver_bank_account_number"]),
                };
                // A card, USSD or bank payment on the hosted page: a checkout's.
                if is_transfer(data) {
                    Webhook::Payment(notice)
                } else {
                    Webhook::Checkout(notice)
                }
            }
            None => Webhook::Ignore("a charge without reference".into()),
        },
        "dedicatedaccount.assign.success" => {
            let customer = text(&data["customer"]["customer_code"]);
            let account = dedicated_account(&data["dedicated_account"]);
            match customer {
                Some(customer_ref) => Webhook::Assigned(Reservation {
                    customer_ref,
                    accounts: account.into_iter().collect(),
                }),
                None => Webhook::Ignore("an assignment without customer_code".into()),
            }
        }
        other => Webhook::Ignore(format!("event {other} is not a payment")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_transfer_and_an_assignment() {
        let charge = json!({"event": "charge.success", "data": {
            "id": 1, "reference": "ref_1", "status": "success", "amount": 150000, "currency": "NGN",
            "channel": "dedicated_nuban", "customer": {"customer_code": "CUS_x"},
            "authorization": {"receiver_bank_account_number": "9930000001", "sender_name": "ADA"}}});
        let Webhook::Payment(notice) = read_event(charge.to_string().as_bytes()) else {
            panic!("a payment")
        };
        assert_eq!(notice.claimed_amount, Some(Kobo(150_000)));
        assert_eq!(notice.customer_ref.as_deref(), Some("CUS_x"));
        let card =
            json!({"event": "charge.success", "data": {"reference": "r", "channel": "card"}});
        let Webhook::Checkout(checkout) = read_event(card.to_string().as_bytes()) else {
            panic!("a checkout's payment")
        };
        assert_eq!(checkout.reference, "r");
        let assigned = json!({"event": "dedicatedaccount.assign.success", "data": {
            "customer": {"customer_code": "CUS_x"},
            "dedicated_account": {"bank": {"name": "Wema Bank", "slug": "wema-bank"},
                "account_name": "KORAPAY/ADA", "account_number": "9930000001", "active": true}}});
        let Webhook::Assigned(reservation) = read_event(assigned.to_string().as_bytes()) else {
            panic!("an assignment")
        };
        assert_eq!(reservation.accounts[0].bank_name, "Wema Bank");
    }

    #[test]
    fn the_payer_is_the_sender_of_a_transfer_and_the_cardholder_of_a_card() {
        let transfer = json!({"reference": "t", "status": "success", "amount": 100,
            "authorization": {"sender_name": "ADA OKAFOR", "sender_bank": "GTBank"}});
        let payer = payment(&transfer).unwrap().payer;
        assert_eq!(payer.as_deref(), Some("ADA OKAFOR, GTBank"));
        let card = json!({"reference": "c", "status": "success", "amount": 100,
            "customer": {"first_name": "Ada", "last_name": "Obi", "email": "ada@example.com"},
            "authorization": {"bank": "Access Bank", "last4": "4081", "account_name": null}});
        let payer = payment(&card).unwrap().payer;
        assert_eq!(
            payer.as_deref(),
            Some("Ada Obi, Access Bank, card ending 4081")
        );
        let bare = json!({"reference": "c", "status": "success", "amount": 100,
            "customer": {"email": "ada@example.com"}});
        assert_eq!(
            payment(&bare).unwrap().payer.as_deref(),
            Some("ada@example.com")
        );
    }
}
