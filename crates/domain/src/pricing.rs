//! Price tiers: what an account pays for a purchase, from its face value (the
//! catalogue's list price, or the amount asked for) and its tier's rules.
//! Pure: the store keeps the tiers, the API asks [`PriceBook::charge`] once
//! per purchase.
//!
//! A rule is set for a product, optionally narrowed to a provider and further
//! to a plan (a data or cable plan id, or an e-pin denomination); the most
//! specific rule wins: plan > provider > product > the list price (the tier
//! `default`, which has no rules).

use crate::{AccountId, Kobo, Naira, Product};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// The tier every account is on until given another: the list prices.
pub const DEFAULT_TIER: &str = "default";

/// A discount in hundredths of a percent (`2.5%` is 250); negative is a markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BasisPoints(pub i64);

/// A discount or markup stays strictly between -100% and 100%, so a price is
/// never zero, negative or absurd.
const MAX_BASIS_POINTS: i64 = 10_000;

impl BasisPoints {
    /// `2.5`, `-1`, `0.25`: at most two decimals, strictly between -100 and 100.
    pub fn parse_percent(text: &str) -> Result<BasisPoints, PricingError> {
        let text = text.trim();
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let points = Kobo::parse_naira(digits)
            .map_err(|_| PricingError::Percent)?
            .0;
        if points >= MAX_BASIS_POINTS {
            return Err(PricingError::Percent);
        }
        Ok(BasisPoints(if negative { -points } else { points }))
    }
}

impl fmt::Display for BasisPoints {
    /// `2.50` (percent).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Kobo(self.0).fmt(f)
    }
}

/// What a rule does to the face value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// face × (1 − P/100), rounded half-up to the kobo.
    DiscountPercent(BasisPoints),
    /// A fixed price per unit (a plan, an exam pin, an e-pin).
    Price(Kobo),
    /// A flat fee added to the face value, once per purchase.
    Fee(Kobo),
}

impl Rule {
    pub fn kind(&self) -> &'static str {
        match self {
            Rule::DiscountPercent(_) => "discount_percent",
            Rule::Price(_) => "price",
            Rule::Fee(_) => "fee",
        }
    }

    /// The stored number: basis points or kobo.
    pub fn value(&self) -> i64 {
        match self {
            Rule::DiscountPercent(p) => p.0,
            Rule::Price(k) | Rule::Fee(k) => k.0,
        }
    }

    /// From the stored kind and number.
    pub fn from_parts(kind: &str, value: i64) -> Option<Rule> {
        match kind {
            "discount_percent" => Some(Rule::DiscountPercent(BasisPoints(value))),
            "price" => Some(Rule::Price(Kobo(value))),
            "fee" => Some(Rule::Fee(Kobo(value))),
            _ => None,
        }
    }

    /// What `quantity` units of face value `unit` cost under this rule.
    pub fn apply(&self, unit: Kobo, quantity: u32) -> Option<Kobo> {
        let face = unit.checked_mul(i64::from(quantity))?;
        match *self {
            Rule::DiscountPercent(p) => discounted(face, p),
            Rule::Price(price) => price.checked_mul(i64::from(quantity)),
            Rule::Fee(fee) => face.checked_add(fee),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::DiscountPercent(p) if p.0 < 0 => write!(f, "markup {}%", BasisPoints(-p.0)),
            Rule::DiscountPercent(p) => write!(f, "discount {p}%"),
            Rule::Price(k) => write!(f, "price {}", Naira(*k)),
            Rule::Fee(k) => write!(f, "fee {}", Naira(*k)),
        }
    }
}

/// `face × (10000 − bp) / 10000`, half-up to the kobo (amounts are never
/// negative, so half-up is `+ 5000` before the floor division).
fn discounted(face: Kobo, discount: BasisPoints) -> Option<Kobo> {
    let scaled = i128::from(face.0) * i128::from(MAX_BASIS_POINTS - discount.0);
    let kobo = (scaled + i128::from(MAX_BASIS_POINTS / 2)) / i128::from(MAX_BASIS_POINTS);
    i64::try_from(kobo).ok().map(Kobo)
}

/// Where a rule applies: a product, optionally a provider slug, optionally a
/// plan of that provider.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Scope {
    pub product: Product,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

impl Scope {
    /// How specific it is: 0 product, 1 provider, 2 plan.
    pub fn level(&self) -> u8 {
        match (&self.provider, &self.plan) {
            (_, Some(_)) => 2,
            (Some(_), None) => 1,
            (None, None) => 0,
        }
    }
}

/// A tier's rules, by where they apply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tier {
    pub name: String,
    pub rules: HashMap<Scope, Rule>,
}

impl Tier {
    /// The most specific rule for this purchase: plan > provider > product.
    pub fn rule_for(&self, product: Product, provider: &str, plan: Option<&str>) -> Option<&Rule> {
        if self.rules.is_empty() {
            return None;
        }
        let mut scope = Scope {
            product,
            provider: Some(provider.to_owned()),
            plan: plan.map(str::to_owned),
        };
        if scope.plan.is_some()
            && let Some(rule) = self.rules.get(&scope)
        {
            return Some(rule);
        }
        scope.plan = None;
        if let Some(rule) = self.rules.get(&scope) {
            return Some(rule);
        }
        scope.provider = None;
        self.rules.get(&scope)
    }

    /// What this tier charges for `item`: its rule in force, else the face value.
    pub fn price(&self, item: Priced) -> Result<Kobo, PricingError> {
        match self.rule_for(item.product, item.provider, item.plan) {
            Some(rule) => rule
                .apply(item.unit, item.quantity)
                .ok_or(PricingError::TooLarge),
            None => item
                .unit
                .checked_mul(i64::from(item.quantity))
                .ok_or(PricingError::TooLarge),
        }
    }

    /// Rules sorted by product, then provider, then plan (for listings).
    pub fn sorted_rules(&self) -> Vec<(&Scope, &Rule)> {
        let mut rules: Vec<_> = self.rules.iter().collect();
        rules.sort_by(|a, b| a.0.cmp(b.0));
        rules
    }
}

/// Every tier and which accounts are on one (accounts on none pay list prices).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceBook {
    pub tiers: HashMap<String, Tier>,
    pub accounts: HashMap<AccountId, String>,
}

/// What one purchase costs its account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    /// What the recipient gets: the list price or the amount asked for.
    pub face_value: Kobo,
    /// What the wallet is debited.
    pub charged: Kobo,
    /// The account's tier; `None` for the list prices.
    pub tier: Option<String>,
}

/// The purchase being priced: `quantity` units of face value `unit` each.
#[derive(Debug, Clone, Copy)]
pub struct Priced<'a> {
    pub product: Product,
    pub provider: &'a str,
    /// Data/cable plan id, or an e-pin denomination in Naira.
    pub plan: Option<&'a str>,
    pub unit: Kobo,
    pub quantity: u32,
}

impl PriceBook {
    /// The tier `account` is on, `None` for the list prices.
    pub fn tier_of(&self, account: AccountId) -> Option<&Tier> {
        if self.accounts.is_empty() {
            return None;
        }
        self.tiers.get(self.accounts.get(&account)?)
    }

    /// What `account` pays for `item` (face value and charged amount).
    pub fn charge(&self, account: AccountId, item: Priced) -> Result<Charge, PricingError> {
        let face_value = item
            .unit
            .checked_mul(i64::from(item.quantity))
            .ok_or(PricingError::TooLarge)?;
        let Some(tier) = self.tier_of(account) else {
            return Ok(Charge {
                face_value,
                charged: face_value,
                tier: None,
            });
        };
        Ok(Charge {
            face_value,
            charged: tier.price(item)?,
            tier: Some(tier.name.clone()),
        })
    }

    /// One unit's price for `account` (listings: a plan, a denomination).
    pub fn unit_price(&self, account: AccountId, item: Priced) -> Kobo {
        let one = Priced {
            quantity: 1,
            ..item
        };
        self.charge(account, one)
            .map_or(item.unit, |charge| charge.charged)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PricingError {
    #[error("must be a percentage with at most 2 decimals, more than -100 and less than 100")]
    Percent,
    #[error("is too large")]
    TooLarge,
}

/// How an e-pin denomination is named as a rule's plan: its Naira, `100`
/// (`100.50` for one with kobo).
pub fn denomination_key(denomination: Kobo) -> String {
    match denomination.0 % 100 {
        0 => (denomination.0 / 100).to_string(),
        _ => denomination.to_string(),
    }
}

/// Whether a tier name is acceptable: 1–40 of `a-z 0-9 - _`, starting with a
/// letter or digit (it is typed on command lines and shown in reports).
pub fn valid_tier_name(name: &str) -> bool {
    (1..=40).contains(&name.len())
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(product: Product, provider: Option<&str>, plan: Option<&str>) -> Scope {
        Scope {
            product,
            provider: provider.map(str::to_owned),
            plan: plan.map(str::to_owned),
        }
    }

    fn book(rules: &[(Scope, Rule)]) -> (PriceBook, AccountId) {
        let account = AccountId::new();
        let tier = Tier {
            name: "reseller".into(),
            rules: rules.iter().cloned().collect(),
        };
        let book = PriceBook {
            tiers: HashMap::from([("reseller".to_owned(), tier)]),
            accounts: HashMap::from([(account, "reseller".to_owned())]),
        };
        (book, account)
    }

    fn item<'a>(
        product: Product,
        provider: &'a str,
        plan: Option<&'a str>,
        naira: i64,
    ) -> Priced<'a> {
        Priced {
            product,
            provider,
            plan,
            unit: Kobo::from_naira(naira),
            quantity: 1,
        }
    }

    fn pct(text: &str) -> Rule {
        Rule::DiscountPercent(BasisPoints::parse_percent(text).unwrap())
    }

    #[test]
    fn the_most_specific_rule_wins() {
        let (book, account) = book(&[
            (scope(Product::Data, None, None), pct("1")),
            (scope(Product::Data, Some("mtn"), None), pct("2")),
            (
                scope(Product::Data, Some("mtn"), Some("mtn-1gb")),
                Rule::Price(Kobo::from_naira(250)),
            ),
        ]);
        let charged = |provider, plan| {
            book.charge(account, item(Product::Data, provider, plan, 300))
                .unwrap()
                .charged
        };
        assert_eq!(charged("mtn", Some("mtn-1gb")), Kobo::from_naira(250));
        assert_eq!(charged("mtn", Some("mtn-2gb")), Kobo::from_naira(294));
        assert_eq!(charged("glo", Some("glo-1gb")), Kobo::from_naira(297));
        // No rule for the product: the list price.
        let airtime = book.charge(account, item(Product::Airtime, "mtn", None, 300));
        assert_eq!(airtime.unwrap().charged, Kobo::from_naira(300));
    }

    #[test]
    fn an_account_on_no_tier_pays_the_list_price() {
        let (book, _) = book(&[(scope(Product::Airtime, None, None), pct("3"))]);
        let charge = book
            .charge(AccountId::new(), item(Product::Airtime, "mtn", None, 100))
            .unwrap();
        assert_eq!(charge.charged, Kobo::from_naira(100));
        assert_eq!(charge.tier, None);
    }

    #[test]
    fn discounts_round_half_up_to_the_kobo() {
        // 2.5% of 1.50 is 3.75 kobo: 146.25 → 146 kobo.
        assert_eq!(pct("2.5").apply(Kobo(150), 1), Some(Kobo(146)));
        // 1% off 0.50 Naira: 49.5 kobo → 50 (half rounds up).
        assert_eq!(pct("1").apply(Kobo(50), 1), Some(Kobo(50)));
        // 1% off 1.50: 148.5 → 149.
        assert_eq!(pct("1").apply(Kobo(150), 1), Some(Kobo(149)));
        // 3% off 0.49: 47.53 → 48.
        assert_eq!(pct("3").apply(Kobo(49), 1), Some(Kobo(48)));
        // A markup of 1.25% on 0.99: 100.2375 → 100.
        assert_eq!(pct("-1.25").apply(Kobo(99), 1), Some(Kobo(100)));
        // Applied once to the whole purchase, not per unit.
        assert_eq!(pct("1").apply(Kobo(150), 3), Some(Kobo(446)));
    }

    #[test]
    fn fixed_prices_count_per_unit_and_fees_once() {
        assert_eq!(
            Rule::Price(Kobo(9_900)).apply(Kobo(10_000), 3),
            Some(Kobo(29_700))
        );
        assert_eq!(
            Rule::Fee(Kobo(10_000)).apply(Kobo(100_000), 1),
            Some(Kobo(110_000))
        );
        assert_eq!(
            Rule::Fee(Kobo(5_000)).apply(Kobo(10_000), 2),
            Some(Kobo(25_000))
        );
    }

    #[test]
    fn percentages_are_checked() {
        assert_eq!(BasisPoints::parse_percent("2.5"), Ok(BasisPoints(250)));
        assert_eq!(BasisPoints::parse_percent("-1"), Ok(BasisPoints(-100)));
        assert_eq!(BasisPoints::parse_percent("99.99"), Ok(BasisPoints(9_999)));
        for bad in ["100", "-100", "2.505", "abc", "", "1e2"] {
            assert_eq!(
                BasisPoints::parse_percent(bad),
                Err(PricingError::Percent),
                "{bad}"
            );
        }
    }

    #[test]
    fn rules_round_trip_their_stored_form() {
        for rule in [pct("2.25"), Rule::Price(Kobo(123)), Rule::Fee(Kobo(5))] {
            assert_eq!(Rule::from_parts(rule.kind(), rule.value()), Some(rule));
        }
        assert_eq!(Rule::from_parts("bogus", 1), None);
    }

    #[test]
    fn tier_names() {
        assert!(valid_tier_name("reseller-2"));
        assert!(!valid_tier_name("Reseller"));
        assert!(!valid_tier_name("-x"));
        assert!(!valid_tier_name(""));
        assert!(!valid_tier_name(&"a".repeat(41)));
    }
}
