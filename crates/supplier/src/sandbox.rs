//! The sandbox supplier: deterministic from the recipient, as the contract says.
//!
//! | recipient ends in | purchase | verify |
//! |---|---|---|
//! | `0000` | fails | not found |
//! | `1111` | pending first; successful on requery | found |
//! | otherwise | successful after the latency | found |
//!
//! It keeps no state: what it delivers is derived from the reference code, so
//! asking twice gives the same token, as a real idempotent supplier would.

use crate::*;
use billpay_domain::EpinCard;
use billpay_domain::pricing::{BasisPoints, Rule};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// The sandbox's section of billpay's settings (`[sandbox]`, `BILLPAY_SANDBOX_*`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// Simulated latency of every call, milliseconds.
    pub latency_ms: u64,
    /// Rehearse an outage: every call fails as unreachable.
    pub unreachable: bool,
    /// What the sandbox charges is the face value less this commission
    /// (percent, at most 2 decimals), recorded as each purchase's cost.
    pub commission_percent: f64,
}

/// The commission the sandbox gives when none is set.
pub const DEFAULT_COMMISSION_PERCENT: f64 = 3.0;

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            latency_ms: 500,
            unreachable: false,
            commission_percent: DEFAULT_COMMISSION_PERCENT,
        }
    }
}

pub struct SandboxSupplier {
    latency: Duration,
    unreachable: bool,
    commission: Rule,
}

impl SandboxSettings {
    /// The commission as a discount rule, or what is wrong with it.
    pub fn commission(&self) -> Result<Rule, String> {
        BasisPoints::parse_percent(&self.commission_percent.to_string())
            .ok()
            .filter(|p| p.0 >= 0)
            .map(Rule::DiscountPercent)
            .ok_or_else(|| {
                format!(
                    "sandbox.commission_percent: {} must be at least 0 and less than 100, with at most 2 decimals",
                    self.commission_percent
                )
            })
    }
}

/// The default commission as a rule.
fn default_commission() -> Rule {
    Rule::DiscountPercent(BasisPoints((DEFAULT_COMMISSION_PERCENT * 100.0) as i64))
}

impl SandboxSupplier {
    pub fn from_settings(settings: &SandboxSettings) -> Self {
        Self {
            latency: Duration::from_millis(settings.latency_ms),
            unreachable: settings.unreachable,
            // validate() refuses a bad one before serve starts
            commission: settings
                .commission()
                .unwrap_or_else(|_| default_commission()),
        }
    }

    pub fn new(latency: Duration) -> Self {
        Self {
            latency,
            unreachable: false,
            commission: default_commission(),
        }
    }

    /// A sandbox that cannot be reached: every call fails with
    /// `Unavailable` after the latency, as a supplier outage would. For
    /// rehearsing outages: verifications answer 503 and purchases stay
    /// `processing` (never refunded on a guess) until the supplier is back.
    pub fn unreachable(latency: Duration) -> Self {
        Self {
            latency,
            unreachable: true,
            commission: default_commission(),
        }
    }

    /// The answer for a recipient, without any delay (also used by test-mode verify).
    pub fn verify_now(request: &VerifyRequest) -> Verification {
        if request.number.ends_with("0000") {
            return Verification::NotFound;
        }
        let name = made_up_name(&request.number);
        let address = (request.product == Product::Electricity).then(|| {
            format!(
                "{} Sandbox Close, Ikeja, Lagos",
                1 + digits(&request.number, 2).parse::<u32>().unwrap_or(0)
            )
        });
        // a smartcard's bouquet now, as VTpass says it (the default
        // catalogue's codes, the renewal at its list price)
        let current = (request.product == Product::Cable).then(|| {
            let (code, name, naira) = match request.provider.as_str() {
                "dstv" => ("dstv-yanga", "DStv Yanga", 6_000),
                "gotv" => ("gotv-jolli", "GOtv Jolli", 5_800),
                _ => ("startimes-nova-antenna", "StarTimes Nova (Antenna)", 2_100),
            };
            CurrentPlan {
                name: name.to_owned(),
                codes: vec![code.to_owned()],
                renewal: Some(Kobo::from_naira(naira)),
            }
        });
        Verification::Found {
            customer_name: name,
            address,
            current,
        }
    }

    /// Waits the latency; then fails if the sandbox is set unreachable.
    async fn pause(&self) -> Result<(), SupplierError> {
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        if self.unreachable {
            return Err(SupplierError::Unavailable(
                "sandbox supplier set unreachable".into(),
            ));
        }
        Ok(())
    }
}

#[async_trait]
impl Supplier for SandboxSupplier {
    fn name(&self) -> &str {
        "sandbox"
    }

    async fn verify(&self, request: &VerifyRequest) -> Result<Verification, SupplierError> {
        self.pause().await?;
        Ok(Self::verify_now(request))
    }

    async fn purchase(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        self.pause().await?;
        if order.recipient.ends_with("1111") {
            return Ok(SupplierStatus::Pending);
        }
        Ok(self.outcome(order))
    }

    async fn requery(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        self.pause().await?;
        Ok(self.outcome(order))
    }
}

impl SandboxSupplier {
    /// Delivered at the face value less the commission, unless the
    /// recipient says it fails.
    fn outcome(&self, order: &Order) -> SupplierStatus {
        if order.recipient.ends_with("0000") {
            return SupplierStatus::Failed {
                reason: "the recipient could not be credited".into(),
            };
        }
        SupplierStatus::delivered(delivery(order)).at_cost(self.commission.apply(order.amount, 1))
    }
}

/// What a successful order delivers, derived from its reference code.
fn delivery(order: &Order) -> Delivery {
    let seed = &order.reference_code;
    let quantity = order.details.quantity.unwrap_or(1);
    match order.product {
        Product::Electricity => {
            let token = digits(&format!("{seed}token"), 20);
            let grouped: Vec<&str> = (0..5).map(|i| &token[i * 4..i * 4 + 4]).collect();
            // Band A tariff of about ₦209.50/kWh.
            let units = (order.amount.0 as f64 / 20_950.0 * 100.0).round() / 100.0;
            Delivery::token(grouped.join("-"), Some(units))
        }
        Product::Education => {
            let pins: Vec<String> = (0..quantity)
                .map(|i| digits(&format!("{seed}pin{i}"), 12))
                .collect();
            Delivery::exam_pins(pins)
        }
        Product::Epin => {
            let expires = time::OffsetDateTime::now_utc().date() + time::Duration::days(365);
            let cards = (0..quantity)
                .map(|i| EpinCard {
                    serial: format!("SN{}", digits(&format!("{seed}serial{i}"), 10)),
                    pin: digits(&format!("{seed}epin{i}"), 16),
                    expires_on: expires.to_string(),
                })
                .collect();
            Delivery::epins(cards)
        }
        _ => Delivery::default(),
    }
}

/// `count` decimal digits derived from `seed`.
fn digits(seed: &str, count: usize) -> String {
    let mut out = String::with_capacity(count);
    let mut round = 0u32;
    while out.len() < count {
        let hash = Sha256::digest(format!("{seed}/{round}").as_bytes());
        out.extend(hash.iter().map(|b| char::from(b'0' + b % 10)));
        round += 1;
    }
    out.truncate(count);
    out
}

fn made_up_name(number: &str) -> String {
    const FIRST: [&str; 8] = [
        "Adaeze",
        "Babatunde",
        "Chinedu",
        "Fatima",
        "Ifeoma",
        "Musa",
        "Ngozi",
        "Tunde",
    ];
    const LAST: [&str; 8] = [
        "Okafor", "Adeyemi", "Bello", "Eze", "Ibrahim", "Nwosu", "Ogunleye", "Yusuf",
    ];
    let d = digits(number, 2).into_bytes();
    format!(
        "{} {}",
        FIRST[(d[0] - b'0') as usize % 8],
        LAST[(d[1] - b'0') as usize % 8]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(recipient: &str, product: Product) -> Order {
        Order {
            reference_code: "BP1".into(),
            product,
            provider: "ikeja-electric".into(),
            recipient: recipient.into(),
            amount: Kobo(500_000),
            details: PurchaseDetails {
                quantity: Some(2),
                ..PurchaseDetails::default()
            },
            codes: SupplierCodes::new(),
            supplier_reference: None,
            placed_at: None,
        }
    }

    #[tokio::test]
    async fn follows_the_recipient_rules() {
        let s = SandboxSupplier::new(Duration::ZERO);
        let ok = s
            .purchase(&order("12345678", Product::Electricity))
            .await
            .unwrap();
        let SupplierStatus::Delivered { result, cost } = ok else {
            panic!("{ok:?}")
        };
        // ₦5,000 less the default 3% commission.
        assert_eq!(cost, Some(Kobo(485_000)));
        let token = result.pin.as_deref().unwrap();
        assert_eq!(token.len(), 24);
        assert!(
            token
                .split('-')
                .all(|g| g.len() == 4 && g.bytes().all(|b| b.is_ascii_digit()))
        );
        assert!(matches!(
            s.purchase(&order("12340000", Product::Airtime))
                .await
                .unwrap(),
            SupplierStatus::Failed { .. }
        ));
        assert_eq!(
            s.purchase(&order("12341111", Product::Airtime))
                .await
                .unwrap(),
            SupplierStatus::Pending
        );
        assert!(matches!(
            s.requery(&order("12341111", Product::Airtime))
                .await
                .unwrap(),
            SupplierStatus::Delivered { .. }
        ));
        // same order, same delivery
        assert_eq!(
            s.purchase(&order("12345678", Product::Education))
                .await
                .unwrap(),
            s.requery(&order("12345678", Product::Education))
                .await
                .unwrap()
        );
    }

    #[tokio::test]
    async fn charges_the_face_value_less_its_commission() {
        let settings = SandboxSettings {
            latency_ms: 0,
            commission_percent: 2.5,
            ..SandboxSettings::default()
        };
        let s = SandboxSupplier::from_settings(&settings);
        let mut cheap = order("12345678", Product::Airtime);
        cheap.amount = Kobo(10_050); // ₦100.50 less 2.5% = 97.98750 → 97.99
        let answer = s.purchase(&cheap).await.unwrap();
        assert!(
            matches!(
                answer,
                SupplierStatus::Delivered {
                    cost: Some(Kobo(9_799)),
                    ..
                }
            ),
            "{answer:?}"
        );
        for bad in [-1.0, 100.0, 2.555] {
            let settings = SandboxSettings {
                commission_percent: bad,
                ..SandboxSettings::default()
            };
            assert!(settings.commission().is_err(), "{bad}");
        }
    }

    #[test]
    fn verification_names_are_stable() {
        let req = |n: &str| VerifyRequest {
            product: Product::Cable,
            provider: "dstv".into(),
            number: n.into(),
            meter_type: None,
            codes: SupplierCodes::new(),
        };
        assert_eq!(
            SandboxSupplier::verify_now(&req("7012345678")),
            SandboxSupplier::verify_now(&req("7012345678"))
        );
        assert_eq!(
            SandboxSupplier::verify_now(&req("7012340000")),
            Verification::NotFound
        );
    }
}
