//! The "SME data" family (Husmodata, Gladtidings, Datastation, Maskawasub,
//! Alrahuz… — copies of one Django REST script) as a [`Supplier`]: one
//! adapter, any number of sites, each a named supplier configured by
//! `[suppliers.NAME]` with `kind = "smedata"` ([`SiteSettings`]).
//!
//! Its rules that matter here (../shared/design/integrations.md, "A third
//! supplier family"):
//! - `Authorization: Token …` on every call; collection routes end in `/`
//!   (`data/`, `topup/`…: without it the script answers a 500 or a redirect),
//!   an order's own route does not (`data/<id>`).
//! - The sites take no reference of ours (except where `ident = true`): a
//!   purchase cannot be made idempotent there. So a purchase whose answer
//!   was lost (timeout, dropped connection, a 5xx or HTML page, garbage) is
//!   never sent again nor elsewhere: it is looked for, by the site's `id`
//!   when one came back (recorded as the transaction's supplier reference),
//!   else in the site's own listing by our `ident`, or by number, plan and
//!   time after the purchase was placed. Not found, it stays unknown (never
//!   refunded, never bought again) and goes to the operator's review.
//! - `Status` `successful` is not final: the site's admin may set `failed`
//!   later (refunding the site's wallet), so successes are watched
//!   ([`Supplier::reversal_watch`]).
//! - What an order cost is the answer's `balance_before − balance_after`.

mod mapping;
mod settings;

pub use mapping::*;
pub use settings::{CABLES, DISCOS, KIND, NETWORKS, SiteSettings, valid_name};

use crate::shared::{AnswerLog, misconfigured};
use crate::*;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Clone)]
pub struct SmedataConfig {
    /// The site's name as configured (`husmodata`): the supplier's name.
    pub name: String,
    pub base_url: String,
    pub token: String,
    /// The whole call may take at most this long; longer is an unknown outcome.
    pub timeout: Duration,
    /// Our provider slug → the site's id.
    pub networks: BTreeMap<String, u32>,
    pub discos: BTreeMap<String, u32>,
    pub cables: BTreeMap<String, u32>,
    /// The site takes our reference as `ident`.
    pub ident: bool,
    /// `Customer_Phone` for electricity.
    pub customer_phone: Option<String>,
}

impl std::fmt::Debug for SmedataConfig {
    /// Never prints the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmedataConfig")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// How many pages of a listing (15 orders each) one look for a lost order reads.
const SEARCH_PAGES: u32 = 4;
/// An order in a listing counts as made after the purchase was placed when
/// the site's time says so, give or take this (clocks differ).
const CLOCK_SLACK_SECS: i64 = 120;

pub struct SmedataSupplier {
    config: SmedataConfig,
    http: reqwest::Client,
}

impl SmedataSupplier {
    pub fn new(mut config: SmedataConfig) -> Result<Self, SupplierError> {
        config.base_url = crate::shared::base_url(&config.base_url);
        let http = crate::shared::http_client(config.timeout)?;
        Ok(Self { config, http })
    }

    /// The base URL called (normalized, without `/api`).
    pub fn base_url(&self) -> &str {
        &self.config.base_url
    }

    fn url(&self, path: &str) -> String {
        format!("{}/api/{path}", self.config.base_url)
    }

    /// One call: the HTTP status and the body as text. An error only when no
    /// whole answer came (timeout, connection refused or dropped).
    async fn call(
        &self,
        url: String,
        body: Option<&Value>,
    ) -> Result<(u16, String), SupplierError> {
        let name = &self.config.name;
        let request = match body {
            Some(body) => self.http.post(url).json(body),
            None => self.http.get(url),
        };
        let unreachable = |e: reqwest::Error| SupplierError::Unavailable(format!("{name}: {e}"));
        let response = request
            .header("Authorization", format!("Token {}", self.config.token))
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(unreachable)?;
        Ok((status, text))
    }

    /// An answer about an order, logged, and what it means.
    fn outcome(
        &self,
        call: &str,
        order: &Order,
        http_status: u16,
        answer: &Answer,
    ) -> Result<SupplierStatus, SupplierError> {
        let name = &self.config.name;
        let (outcome, description) = match answer {
            Answer::Order(record) => (
                Ok(record.outcome(order)),
                record.status.clone().unwrap_or_default(),
            ),
            // Refused before it was taken (not charged): may go elsewhere.
            Answer::Refused(why) if call == "purchase" => (
                Ok(SupplierStatus::Failed {
                    reason: "the supplier refused the order".into(),
                }),
                why.clone(),
            ),
            Answer::Unauthorized(why) if call == "purchase" => {
                misconfigured(name, call, &format!("HTTP {http_status}: {why}"));
                let reason = "the supplier refused the order".to_owned();
                (Ok(SupplierStatus::Failed { reason }), why.clone())
            }
            Answer::Unauthorized(why) => {
                misconfigured(name, call, &format!("HTTP {http_status}: {why}"));
                let unknown =
                    SupplierError::Unavailable(format!("{name} refused our token: {why}"));
                (Err(unknown), why.clone())
            }
            Answer::NotFound => (
                Err(SupplierError::Unavailable(format!(
                    "{name} answered 404 about the order"
                ))),
                String::new(),
            ),
            Answer::Refused(why) | Answer::Unclear(why) => (
                Err(SupplierError::Unavailable(format!(
                    "{name} {call}: {why}: outcome unknown"
                ))),
                why.clone(),
            ),
        };
        AnswerLog {
            supplier: name,
            call,
            http_status,
            code: "none",
            description: &description,
            reading: answer.name(),
        }
        .log(outcome.as_ref().unwrap_or(&SupplierStatus::Unknown));
        outcome
    }

    /// Looks for an order whose answer was lost in the site's own listing
    /// of the product's orders (newest first): by our `ident` where the site
    /// takes it, else by number, plan and time after the purchase was placed.
    /// Found once: its outcome and id. No order, or several that match:
    /// `NeedsReview` with the evidence (a person decides); a listing that
    /// could not be read: an unknown outcome saying why.
    async fn search(&self, order: &Order) -> Result<Answered, SupplierError> {
        let name = &self.config.name;
        let Some(route) = route(order.product) else {
            return Err(SupplierError::Unavailable(format!(
                "{name} sells no {}",
                order.product
            )));
        };
        let since = order
            .placed_at
            .as_deref()
            .and_then(parse_time)
            .map(|at| at - CLOCK_SLACK_SECS);
        let number = match order.product {
            Product::Airtime | Product::Data => local_phone(&order.recipient),
            _ => order.recipient.clone(),
        };
        let plan = order.codes.get("plan").map(|p| p.trim().to_owned());
        let mut found: Vec<Record> = Vec::new();
        let mut url = self.url(&format!("{route}/"));
        let mut read_pages = 0;
        'pages: for page_number in 1..=SEARCH_PAGES {
            let (http_status, text) = self.call(url.clone(), None).await?;
            let page = match http_status {
                200 => serde_json::from_str::<Page>(&text).ok(),
                _ => None,
            };
            let Some(page) = page else {
                if matches!(read(http_status, &text), Answer::Unauthorized(_)) {
                    misconfigured(name, "search", &format!("HTTP {http_status}"));
                }
                return Err(SupplierError::Unavailable(format!(
                    "{name} listing {route}/: HTTP {http_status}, not a listing"
                )));
            };
            read_pages += 1;
            for record in page.results {
                let created = record.create_date.as_deref().and_then(parse_time);
                let before_ours = matches!((created, since), (Some(at), Some(since)) if at < since);
                let ours = match (&record.ident, self.config.ident) {
                    (Some(ident), true) => *ident == order.reference_code,
                    _ => {
                        !before_ours
                            && record.number().is_some_and(|n| same_number(&n, &number))
                            && plan.as_ref().is_none_or(|p| {
                                record.plan.as_ref().and_then(|v| match v {
                                    Value::Number(n) => Some(n.to_string()),
                                    Value::String(s) => Some(s.trim().to_owned()),
                                    _ => None,
                                }) == Some(p.clone())
                            })
                    }
                };
                if ours {
                    found.push(record);
                } else if before_ours && !self.config.ident {
                    // Newest first: the rest were made before our purchase.
                    break 'pages;
                }
            }
            match page.next {
                // Only our own site's next page (never send the token elsewhere).
                Some(next) if next.starts_with(&self.config.base_url) => url = next,
                Some(_) => url = self.url(&format!("{route}/?page={}", page_number + 1)),
                None => break,
            }
        }
        match found.as_slice() {
            [record] => {
                let outcome = record.outcome(order);
                tracing::info!(supplier = %name, id = ?record.id(), status = ?record.status, "found a purchase whose answer was lost in the supplier's listing");
                Ok(Answered {
                    status: outcome,
                    reference: record.id(),
                })
            }
            [] => Err(SupplierError::NeedsReview(format!(
                "no order found at {name} for {number}{} in {read_pages} page(s) of its {route} \
                 listing: not bought again; the operator reviews it (the site's wallet history \
                 shows whether it was charged)",
                plan.map(|p| format!(" (plan {p})")).unwrap_or_default(),
            ))),
            several => Err(SupplierError::NeedsReview(format!(
                "{} orders at {name} match {number} since the purchase: the operator decides \
                 which is this one (ids {})",
                several.len(),
                several
                    .iter()
                    .filter_map(Record::id)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// The same phone, meter or smartcard number; a masked one (`0803****567`,
/// as some copies answer) matches on its unmasked digits.
fn same_number(theirs: &str, ours: &str) -> bool {
    let theirs = theirs.trim();
    theirs.len() == ours.len()
        && theirs
            .chars()
            .zip(ours.chars())
            .all(|(t, o)| t == o || t == '*' || t == 'x' || t == 'X')
}

/// A time as seconds since 1970: RFC 3339, or the script's own
/// `2021-08-28T21:27:41.169631` without an offset, read as Lagos time (the
/// sites are Nigerian: Africa/Lagos, UTC+1 all year).
pub fn parse_time(text: &str) -> Option<i64> {
    use time::format_description::well_known::Rfc3339;
    use time::macros::{format_description, offset};
    let text = text.trim();
    if let Ok(at) = time::OffsetDateTime::parse(text, &Rfc3339) {
        return Some(at.unix_timestamp());
    }
    let naive = format_description!(
        "[year]-[month]-[day][first [T][ ]][hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    let at = time::PrimitiveDateTime::parse(text, naive).ok()?;
    Some(at.assume_offset(offset!(+1)).unix_timestamp())
}

/// `GET /api/user/`'s balance, and nothing else of that answer: it also
/// carries the account's password hash, so it is never kept or logged.
#[derive(Deserialize)]
struct UserAnswer {
    user: UserBalance,
}

#[derive(Deserialize)]
struct UserBalance {
    #[serde(rename = "Account_Balance", default)]
    account_balance: Option<Value>,
    #[serde(default)]
    wallet_balance: Option<Value>,
}

/// The float from `GET /api/user/`'s answer.
fn balance_of(name: &str, http_status: u16, text: &str) -> Result<Kobo, SupplierError> {
    match http_status {
        200 => {
            let user: UserAnswer = serde_json::from_str(text).map_err(|_| {
                SupplierError::NotThisSupplier(format!("{name}'s /api/user/ is not its JSON"))
            })?;
            let balance = user.user.account_balance.or(user.user.wallet_balance);
            balance
                .as_ref()
                .and_then(crate::shared::amount)
                .ok_or_else(|| {
                    SupplierError::NotThisSupplier(format!("{name}'s /api/user/ has no balance"))
                })
        }
        401 | 403 => {
            let why = serde_json::from_str::<ErrorBody>(text)
                .map_or_else(|_| format!("HTTP {http_status}"), |e| e.to_string());
            Err(SupplierError::Refused(why))
        }
        status if crate::shared::misconfigured_status(status) => {
            Err(SupplierError::NotThisSupplier(format!("HTTP {status}")))
        }
        status => Err(SupplierError::Unavailable(format!(
            "HTTP {status}{}",
            if serde_json::from_str::<Value>(text).is_ok() {
                ""
            } else {
                ", a page that is not JSON"
            }
        ))),
    }
}

#[async_trait]
impl Supplier for SmedataSupplier {
    fn name(&self) -> &str {
        &self.config.name
    }

    /// Where the site takes it (`ident = true`), our reference code, sent as
    /// `ident`; else nothing is known before the site answers (its `id` is
    /// recorded then).
    fn reference(&self, order: &Order) -> Option<String> {
        self.config.ident.then(|| order.reference_code.clone())
    }

    /// The site's admin may fail an order hours or days after it said
    /// `successful` (refunding the site's wallet): requeried 5 and 15 min,
    /// 1, 3, 6, 12 and 24 h, 2 and 3 days after the success.
    fn reversal_watch(&self) -> &'static [Duration] {
        const WATCH: [Duration; 9] = [
            Duration::from_secs(5 * 60),
            Duration::from_secs(15 * 60),
            Duration::from_secs(3600),
            Duration::from_secs(3 * 3600),
            Duration::from_secs(6 * 3600),
            Duration::from_secs(12 * 3600),
            Duration::from_secs(24 * 3600),
            Duration::from_secs(48 * 3600),
            Duration::from_secs(72 * 3600),
        ];
        &WATCH
    }

    fn sells(&self, product: Product, provider: &str) -> bool {
        mapping::sells(&self.config, product, provider)
    }

    /// `plan_amount` is what a plan is expected to cost us.
    fn lists_costs(&self) -> bool {
        true
    }

    async fn balance(&self) -> Option<Result<Kobo, SupplierError>> {
        let answer = self.call(self.url("user/"), None).await;
        Some(answer.and_then(|(status, text)| balance_of(&self.config.name, status, &text)))
    }

    /// Data plans, from `/api/network/` (else `/api/user/`'s `Dataplans`).
    async fn plans(
        &self,
        product: Product,
        provider: &str,
        codes: &SupplierCodes,
    ) -> Option<Result<Vec<SupplierPlan>, SupplierError>> {
        if product != Product::Data {
            return None;
        }
        let network = match codes.get("network") {
            Some(code) => code.trim().parse().ok()?,
            None => *self.config.networks.get(provider)?,
        };
        let name = &self.config.name;
        let mut last = String::new();
        for (path, key) in [("network/", None), ("user/", Some("Dataplans"))] {
            match self.call(self.url(path), None).await {
                Ok((200, text)) => {
                    let Ok(body) = serde_json::from_str::<Value>(&text) else {
                        last = format!("{path}: not JSON");
                        continue;
                    };
                    let lists = key.map_or(&body, |key| &body[key]);
                    if lists.is_object() {
                        return Some(Ok(plan_list(lists, network)));
                    }
                    last = format!("{path}: no plan list");
                }
                Ok((status, _)) => last = format!("{path}: HTTP {status}"),
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Err(SupplierError::Unavailable(format!(
            "{name} lists no plans ({last})"
        ))))
    }

    async fn verify(&self, request: &VerifyRequest) -> Result<Verification, SupplierError> {
        let id = |key: &str, ids: &BTreeMap<String, u32>| {
            request
                .codes
                .get(key)
                .cloned()
                .or_else(|| ids.get(&request.provider).map(u32::to_string))
        };
        let query = match request.product {
            Product::Cable => match id("cable", &self.config.cables) {
                Some(cable) => format!(
                    "validateiuc?smart_card_number={}&cablename={cable}",
                    request.number
                ),
                None => return Ok(Verification::NotFound),
            },
            Product::Electricity => match id("disco", &self.config.discos) {
                Some(disco) => format!(
                    "validatemeter?meternumber={}&disconame={disco}&mtype={}",
                    request.number,
                    request.meter_type.unwrap_or(1)
                ),
                None => return Ok(Verification::NotFound),
            },
            _ => return Ok(Verification::NotFound),
        };
        #[derive(Deserialize)]
        struct Validation {
            #[serde(default)]
            invalid: bool,
            #[serde(default)]
            name: Option<String>,
            #[serde(default)]
            address: Option<String>,
        }
        let (status, text) = self.call(self.url(&query), None).await?;
        match (status, serde_json::from_str::<Validation>(&text)) {
            (200, Ok(found)) if !found.invalid => Ok(Verification::Found {
                customer_name: found.name.unwrap_or_default(),
                address: found.address.filter(|a| !a.trim().is_empty()),
                current: None,
            }),
            (200, Ok(_)) => Ok(Verification::NotFound),
            (status, _) => Err(SupplierError::Unavailable(format!(
                "{} validation: HTTP {status}",
                self.config.name
            ))),
        }
    }

    async fn purchase(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        Ok(self.purchase_answered(order).await?.status)
    }

    async fn requery(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        Ok(self.requery_answered(order).await?.status)
    }

    /// One POST, never repeated: only a refusal before the site took it is
    /// a failure; anything unclear is an unknown outcome (looked for later).
    async fn purchase_answered(&self, order: &Order) -> Result<Answered, SupplierError> {
        let (route, body) = match mapping::purchase(&self.config, order) {
            Ok(request) => request,
            // Nothing was sent: not charged, may go to the next supplier.
            Err(reason) => return Ok(SupplierStatus::Failed { reason }.into()),
        };
        let (http_status, text) = self
            .call(self.url(&format!("{route}/")), Some(&body))
            .await?;
        let answer = read(http_status, &text);
        let status = self.outcome("purchase", order, http_status, &answer)?;
        let reference = match &answer {
            Answer::Order(record) => record.id(),
            _ => None,
        };
        Ok(Answered { status, reference })
    }

    /// By the site's id when it is known (`GET <route>/<id>`), else looked
    /// for in the site's listing. Never "never received": an order not found
    /// may still have been charged, so it is never bought again.
    async fn requery_answered(&self, order: &Order) -> Result<Answered, SupplierError> {
        let id = order
            .supplier_reference
            .as_deref()
            .filter(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit()));
        let (Some(id), Some(route)) = (id, route(order.product)) else {
            return self.search(order).await;
        };
        let (http_status, text) = self.call(self.url(&format!("{route}/{id}")), None).await?;
        let answer = read(http_status, &text);
        Ok(self.outcome("query", order, http_status, &answer)?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_times_are_lagos_time() {
        assert_eq!(parse_time("1970-01-01T01:00:00"), Some(0));
        assert_eq!(parse_time("1970-01-01T01:00:00.169631"), Some(0));
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("1970-01-01 01:00:10"), Some(10));
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn masked_numbers_match_their_digits() {
        assert!(same_number("0803****567", "08031234567"));
        assert!(same_number("08031234567", "08031234567"));
        assert!(!same_number("08031234568", "08031234567"));
        assert!(!same_number("0803123456", "08031234567"));
    }

    #[test]
    fn the_balance_never_keeps_the_rest_of_the_user() {
        let body = r#"{"user": {"username": "u", "password": "pbkdf2_sha256$x", "Account_Balance": 50000.0, "wallet_balance": "50000"}}"#;
        assert_eq!(balance_of("s", 200, body).unwrap(), Kobo(5_000_000));
        let text = r#"{"user": {"wallet_balance": "1,234.5"}}"#;
        assert_eq!(balance_of("s", 200, text).unwrap(), Kobo(123_450));
        assert!(
            matches!(balance_of("s", 401, r#"{"detail":"Invalid token."}"#), Err(SupplierError::Refused(m)) if m == "Invalid token.")
        );
        assert!(matches!(
            balance_of("s", 404, ""),
            Err(SupplierError::NotThisSupplier(_))
        ));
        assert!(matches!(
            balance_of("s", 500, "<html>"),
            Err(SupplierError::Unavailable(_))
        ));
        assert!(matches!(
            balance_of("s", 200, "<html>"),
            Err(SupplierError::NotThisSupplier(_))
        ));
    }
}
