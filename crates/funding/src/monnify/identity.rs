//! Monnify's identity checks (../shared/design/integrations.md, "Monnify
//! identity checks (KYC) for a VTU operator"): `POST
//! /api/v1/vas/bvn-details-match` (`{bvn, name, dateOfBirth: dd-MMM-yyyy,
//! mobileNo}` → a match status per field) and `POST /api/v1/vas/nin-details`
//! (`{nin}` → the record, compared here), with the login's bearer token and
//! the usual envelope. Live mode only at Monnify: tests use a fake.
//!
//! Answers are read into typed bodies and mapped with `From`; the number is
//! an [`IdNumber`] and is scrubbed from any error Monnify's answer gives.

use super::MonnifyGateway;
use crate::GatewayError;
use crate::identity::{
    Claim, Field, IdNumber, IdentityCheck, Verdict, name_words, nin_names_match,
};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use time::Date;
use time::macros::format_description;

/// A field's match in the BVN check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MatchStatus {
    FullMatch,
    PartialMatch,
    NoMatch,
    /// A word Monnify's pages do not name: never a match.
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NameMatch {
    pub match_status: MatchStatus,
    #[serde(default)]
    pub match_percentage: Option<f64>,
}

/// `bvn-details-match`'s `responseBody` (its echoed `bvn` is not read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BvnMatchBody {
    pub name: NameMatch,
    pub date_of_birth: MatchStatus,
    #[serde(default, alias = "mobileNumber")]
    pub mobile_no: Option<MatchStatus>,
}

impl From<BvnMatchBody> for Verdict {
    /// The BVN rule (docs/limits.md): name full or partial, date of birth
    /// and phone number full.
    fn from(body: BvnMatchBody) -> Verdict {
        let mut mismatched = Vec::new();
        if !matches!(
            body.name.match_status,
            MatchStatus::FullMatch | MatchStatus::PartialMatch
        ) {
            mismatched.push(Field::Name);
        }
        if body.date_of_birth != MatchStatus::FullMatch {
            mismatched.push(Field::DateOfBirth);
        }
        if body.mobile_no != Some(MatchStatus::FullMatch) {
            mismatched.push(Field::Phone);
        }
        if !mismatched.is_empty() {
            return Verdict::Failed { mismatched };
        }
        let how = match body.name.match_status {
            MatchStatus::FullMatch => "full",
            _ => "partial",
        };
        Verdict::Passed {
            detail: format!("name {how} match, date of birth and phone number matched"),
        }
    }
}

/// `nin-details`' `responseBody` (`mobileNumber` or, per one description,
/// `phoneNumber`; the echoed `nin` is not read).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NinDetailsBody {
    pub first_name: Option<String>,
    pub middle_name: Option<String>,
    pub last_name: Option<String>,
    pub date_of_birth: Option<String>,
    #[serde(alias = "phoneNumber")]
    pub mobile_number: Option<String>,
}

/// A NIN's record as billpay compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NinRecord {
    pub first_name: String,
    pub middle_name: String,
    pub last_name: String,
    /// `None` when absent or in a form not known: never a match.
    pub date_of_birth: Option<Date>,
    pub phone: Option<String>,
}

impl From<NinDetailsBody> for NinRecord {
    fn from(body: NinDetailsBody) -> NinRecord {
        NinRecord {
            first_name: body.first_name.unwrap_or_default(),
            middle_name: body.middle_name.unwrap_or_default(),
            last_name: body.last_name.unwrap_or_default(),
            date_of_birth: body.date_of_birth.as_deref().and_then(birth_date),
            phone: body.mobile_number,
        }
    }
}

impl NinRecord {
    /// The NIN rule (docs/limits.md): surname and one other name, and the date of birth.
    pub fn verdict(&self, claim: &Claim) -> Verdict {
        let mut mismatched = Vec::new();
        if !nin_names_match(
            &claim.name,
            &self.first_name,
            &self.middle_name,
            &self.last_name,
        ) {
            mismatched.push(Field::Name);
        }
        if self.date_of_birth != Some(claim.date_of_birth) {
            mismatched.push(Field::DateOfBirth);
        }
        if !mismatched.is_empty() {
            return Verdict::Failed { mismatched };
        }
        let given = name_words(&claim.name).len();
        Verdict::Passed {
            detail: format!(
                "surname and {} other name(s) and date of birth matched",
                given - 1
            ),
        }
    }
}

/// A date of birth as a NIN record may give it: `1993-04-27`, `27-04-1993`,
/// `27/04/1993`, `27-Apr-1993` (a time after it ignored).
fn birth_date(text: &str) -> Option<Date> {
    let text = text.trim();
    let text = text.split(['T', ' ']).next()?;
    let formats = [
        format_description!("[year]-[month]-[day]"),
        format_description!("[day]-[month]-[year]"),
        format_description!("[day]/[month]/[year]"),
        format_description!("[day]-[month repr:short case_sensitive:false]-[year]"),
    ];
    formats.iter().find_map(|f| Date::parse(text, f).ok())
}

/// `27-Apr-1993`, as the BVN check takes it.
fn monnify_date(date: Date) -> String {
    let format = format_description!("[day]-[month repr:short]-[year]");
    date.format(format).unwrap_or_default()
}

/// An error whose text cannot carry the number; Monnify's "invalid
/// BVN/NIN" refusal is the verdict [`Verdict::Unknown`].
fn read_error(e: GatewayError, number: &IdNumber) -> Result<Verdict, GatewayError> {
    match e {
        GatewayError::Refused(message) => {
            let lower = message.to_lowercase();
            if lower.contains("invalid bvn") || lower.contains("invalid nin") {
                Ok(Verdict::Unknown)
            } else {
                Err(GatewayError::Refused(number.scrub(&message)))
            }
        }
        GatewayError::Unavailable(message) => {
            Err(GatewayError::Unavailable(number.scrub(&message)))
        }
    }
}

fn unreadable(what: &str) -> GatewayError {
    GatewayError::Unavailable(format!("an answer Monnify's {what} does not give"))
}

impl MonnifyGateway {
    async fn identity_call(&self, path: &str, body: Value) -> Result<Value, GatewayError> {
        let url = format!("{}{path}", self.base_url);
        self.call(self.http.post(url).json(&body)).await
    }
}

#[async_trait]
impl IdentityCheck for MonnifyGateway {
    async fn verify_bvn(&self, bvn: &IdNumber, claim: &Claim) -> Result<Verdict, GatewayError> {
        let body = json!({
            "bvn": bvn.expose(),
            "name": claim.name.trim(),
            "dateOfBirth": monnify_date(claim.date_of_birth),
            "mobileNo": claim.phone.as_deref().unwrap_or_default(),
        });
        let answer = match self
            .identity_call("/api/v1/vas/bvn-details-match", body)
            .await
        {
            Ok(answer) => answer,
            Err(e) => return read_error(e, bvn),
        };
        let body: BvnMatchBody =
            serde_json::from_value(answer).map_err(|_| unreadable("BVN match"))?;
        Ok(body.into())
    }

    async fn verify_nin(&self, nin: &IdNumber, claim: &Claim) -> Result<Verdict, GatewayError> {
        let body = json!({"nin": nin.expose()});
        let answer = match self.identity_call("/api/v1/vas/nin-details", body).await {
            Ok(answer) => answer,
            Err(e) => return read_error(e, nin),
        };
        if !answer.is_object() {
            return Err(unreadable("NIN lookup"));
        }
        let body: NinDetailsBody =
            serde_json::from_value(answer).map_err(|_| unreadable("NIN lookup"))?;
        Ok(NinRecord::from(body).verdict(claim))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    fn claim(name: &str) -> Claim {
        Claim {
            name: name.into(),
            date_of_birth: date!(1993 - 04 - 27),
            phone: Some("08142223149".into()),
        }
    }

    #[test]
    fn reads_the_bvn_sample_answer() {
        // integrations.md's sample: the date of birth did not match
        let sample = json!({"bvn": "22222222226", "name": {"matchStatus": "FULL_MATCH", "matchPercentage": 100}, "dateOfBirth": "NO_MATCH", "mobileNo": "FULL_MATCH"});
        let body: BvnMatchBody = serde_json::from_value(sample).unwrap();
        assert_eq!(
            Verdict::from(body),
            Verdict::Failed {
                mismatched: vec![Field::DateOfBirth]
            }
        );
        let partial = json!({"name": {"matchStatus": "PARTIAL_MATCH", "matchPercentage": 66}, "dateOfBirth": "FULL_MATCH", "mobileNo": "FULL_MATCH"});
        let body: BvnMatchBody = serde_json::from_value(partial).unwrap();
        assert!(matches!(Verdict::from(body), Verdict::Passed { .. }));
        let odd = json!({"name": {"matchStatus": "SOMETHING"}, "dateOfBirth": "FULL_MATCH"});
        let body: BvnMatchBody = serde_json::from_value(odd).unwrap();
        assert_eq!(
            Verdict::from(body),
            Verdict::Failed {
                mismatched: vec![Field::Name, Field::Phone]
            }
        );
    }

    #[test]
    fn a_nin_record_is_compared_here_in_either_phone_field() {
        let body: NinDetailsBody = serde_json::from_value(json!({"nin": "70123456789", "firstName": "OLATUNDE", "middleName": "JOSIAH", "lastName": "OGUNBOYEJO", "dateOfBirth": "27-04-1993", "phoneNumber": "08142223149"})).unwrap();
        let record = NinRecord::from(body);
        assert_eq!(record.phone.as_deref(), Some("08142223149"));
        assert!(matches!(
            record.verdict(&claim("Olatunde Ogunboyejo")),
            Verdict::Passed { .. }
        ));
        let mut older = claim("Olatunde Ogunboyejo");
        older.date_of_birth = date!(1990 - 04 - 27);
        assert_eq!(
            record.verdict(&older),
            Verdict::Failed {
                mismatched: vec![Field::DateOfBirth]
            }
        );
    }

    #[test]
    fn dates_are_read_in_every_form_and_sent_as_monnify_takes_them() {
        for text in [
            "1993-04-27",
            "27-04-1993",
            "27/04/1993",
            "27-Apr-1993",
            "1993-04-27T00:00:00",
        ] {
            assert_eq!(birth_date(text), Some(date!(1993 - 04 - 27)), "{text}");
        }
        assert_eq!(monnify_date(date!(1993 - 04 - 27)), "27-Apr-1993");
    }
}
