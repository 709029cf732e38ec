//! The seven products, the bodies the tests send, and checks on JSON alone.

use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Airtime,
    Data,
    Epin,
    Cable,
    Electricity,
    Education,
    Bet,
}

pub use Kind::*;

pub const ALL: [Kind; 7] = [Airtime, Data, Epin, Cable, Electricity, Education, Bet];
/// Products whose recipient ends in digits the sandbox reacts to (not e-pins).
pub const WITH_RECIPIENT: [Kind; 6] = [Airtime, Data, Cable, Electricity, Education, Bet];

impl Kind {
    pub fn path(self) -> &'static str {
        match self {
            Airtime => "airtime",
            Data => "data",
            Epin => "epin",
            Cable => "cable",
            Electricity => "electricity",
            Education => "education",
            Bet => "bet",
        }
    }

    pub fn live(self) -> String {
        format!("/v1/{}/purchase", self.path())
    }

    pub fn test(self) -> String {
        format!("/v1/test/{}/purchase", self.path())
    }

    pub fn event(self) -> String {
        format!("{}.purchase", self.path())
    }

    pub fn has_plan(self) -> bool {
        matches!(self, Data | Cable)
    }

    pub fn label_fields(self) -> (&'static str, &'static str) {
        if self.has_plan() {
            ("plan", "item")
        } else {
            ("item", "plan")
        }
    }

    pub fn provider(self) -> &'static str {
        match self {
            Airtime | Data => "mtn",
            Epin => "airtel",
            Cable => "dstv",
            Electricity => "ikeja-electric",
            Education => "waec",
            Bet => "bet9ja",
        }
    }

    /// The recipient of a body built with `tail` (e-pins have none: their
    /// recipient is the batch id the service makes up).
    pub fn recipient(self, tail: &str) -> Option<String> {
        match self {
            Airtime => Some(format!("0803123{tail}")),
            Data => Some(format!("0906555{tail}")),
            Epin => None,
            Cable => Some(format!("702345{tail}")),
            Electricity => Some(format!("4501234{tail}")),
            Education => Some(format!("0701234{tail}")),
            Bet => Some(format!("BJ-55{tail}")),
        }
    }

    /// A valid body; `tail` (4 digits) ends the recipient.
    pub fn body(self, reference: &str, tail: &str) -> Value {
        let r = self.recipient(tail);
        match self {
            Airtime => {
                json!({ "provider_id": "mtn", "phone": r, "amount": 500, "reference": reference })
            }
            Data => {
                json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": r, "reference": reference })
            }
            Epin => {
                json!({ "provider_id": "airtel", "denomination": 200, "quantity": 3, "reference": reference })
            }
            Cable => {
                json!({ "provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": r, "phone": "08051112222", "reference": reference })
            }
            Electricity => {
                json!({ "provider_id": "ikeja-electric", "amount": 1500.5, "meter_number": r, "meter_type": 1, "reference": reference })
            }
            Education => {
                json!({ "provider_id": "waec", "quantity": 2, "phone": r, "reference": reference })
            }
            Bet => {
                json!({ "provider_id": "bet9ja", "customer_id": r, "amount": 2500, "reference": reference })
            }
        }
    }

    pub fn required_fields(self) -> &'static [&'static str] {
        match self {
            Airtime => &["provider_id", "phone", "amount", "reference"],
            Data => &["provider_id", "plan_id", "phone", "reference"],
            Epin => &["provider_id", "denomination", "quantity", "reference"],
            Cable => &["provider_id", "plan_id", "smartcard_number", "reference"],
            Electricity => &[
                "provider_id",
                "amount",
                "meter_number",
                "meter_type",
                "reference",
            ],
            Education => &["provider_id", "quantity", "reference"],
            Bet => &["provider_id", "customer_id", "amount", "reference"],
        }
    }

    /// The type's own fields that the accepted response echoes (besides recipient).
    pub fn own_fields(self) -> &'static [&'static str] {
        match self {
            Airtime => &["phone"],
            Data => &["phone"],
            Epin => &["batch_id", "quantity"],
            Cable => &["smartcard_number"],
            Electricity => &["meter_number"],
            Education => &["quantity"],
            Bet => &["customer_id"],
        }
    }
}

/// A JSON amount of Naira as kobo.
pub fn kobo(v: &Value) -> i64 {
    (v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")) * 100.0).round() as i64
}

pub fn with(body: &Value, field: &str, value: Value) -> Value {
    let mut b = body.clone();
    b[field] = value;
    b
}

pub fn without(body: &Value, field: &str) -> Value {
    let mut b = body.clone();
    b.as_object_mut().unwrap().remove(field);
    b
}

pub fn str_of(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_owned()
}

/// A `/test` reply: the body echoed, what it would cost, nothing recorded.
pub fn assert_test_reply(d: &Value, sent: &Value, would_deduct: i64, balance: i64) {
    assert_eq!(d["test_mode"], true, "{d}");
    let message = str_of(&d["message"]).to_lowercase();
    assert!(
        message.contains("nothing") && message.contains("deduct"),
        "test message says nothing was deducted: {d}"
    );
    assert_eq!(&d["request"], sent, "request echo");
    assert_eq!(kobo(&d["would_deduct"]), would_deduct, "{d}");
    assert_eq!(kobo(&d["balance"]), balance, "{d}");
    assert!(d.get("reference_code").is_none(), "nothing recorded: {d}");
}
