//! A customer's own identity check (issue 32's level 1, docs/limits.md "Level
//! 1 by BVN or NIN"): the one flow both channels run, the shop's "Verify
//! your identity" page and the API's `POST /v1/account/identity`.
//!
//! [`verify`] counts the attempt first (at most [`IDENTITY_CHECKS_PER_DAY`]
//! per account per Lagos day, in the store's one transaction, before the
//! gateway is asked: each check costs the operator a fee), then asks the
//! gateway, then on a pass sets level 1 (method `bvn`/`nin`, the last 4
//! digits, set by `self`) with its operator-log line in the same
//! transaction; any other outcome is an `account.identity_check_result`
//! line. The channels only read their input and say the [`Outcome`].
//!
//! The number is an [`IdNumber`] from the moment it is read: only the
//! gateway's request reads it in full; the log, `tracing`, the store and the
//! outcome get the last 4 digits.

use billpay_domain::AccountId;
use billpay_funding::identity::{Claim, Field, IdKind, IdNumber, IdentityCheck, Verdict};
use billpay_store::clock::{LAGOS, lagos_day_start, lagos_today};
use billpay_store::limits::{IDENTITY_CHECK, IDENTITY_CHECKS_PER_DAY, Kyc, KycChange};
use billpay_store::work;
use billpay_store::{NewLogEntry, Store, StoreError};
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time};

/// Who the log and the level name for a customer's own check.
pub const SELF: &str = "self";
/// The operator log's action for a check's outcome other than a pass (a
/// pass is the level change's own line, `account.kyc_level`).
pub const CHECK_RESULT: &str = "account.identity_check_result";

/// What a customer asks to have checked, already read.
#[derive(Debug, Clone)]
pub struct Request {
    pub kind: IdKind,
    pub number: IdNumber,
    pub claim: Claim,
}

/// What a check came to. Only [`Outcome::Passed`] changes the level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Matched: the account is at level 1 now (or higher, when an owner
    /// raised it while the gateway answered: never lowered).
    Passed(Kyc),
    /// At level 1 or 2 already (whether or not a gateway is configured):
    /// nothing counted, nothing asked.
    AlreadyVerified(Kyc),
    /// The number is on the registry but these did not match it.
    Failed {
        mismatched: Vec<Field>,
        /// Checks left today.
        left: u32,
    },
    /// No such number at the registry.
    Unknown { left: u32 },
    /// The gateway did not answer (the check still counts).
    NoAnswer { left: u32 },
    /// Today's checks are used: nothing asked. The next is allowed from
    /// `retry_at` (the next Lagos midnight).
    TooMany { retry_at: OffsetDateTime },
    /// The account's email address is not confirmed yet (a shop sign-up).
    Unconfirmed,
    /// No configured gateway offers identity checks (to a level-0 account).
    Unavailable,
}

/// `a`, `a and b`, `a, b and c`: the fields that did not match, for people.
pub fn fields_in_words(fields: &[Field]) -> String {
    let words: Vec<&str> = fields.iter().map(|f| f.words()).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "You have 2 checks left today."
pub fn left_in_words(left: u32) -> String {
    match left {
        0 => "You have no checks left today.".to_owned(),
        1 => "You have 1 check left today.".to_owned(),
        n => format!("You have {n} checks left today."),
    }
}

/// A date of birth as typed: `1993-04-27` (a date field, JSON) or
/// `27/04/1993`, from 1900 and before today (Lagos).
pub fn birth_date(text: &str) -> Option<Date> {
    let text = text.trim();
    let formats = [
        format_description!("[year]-[month]-[day]"),
        format_description!("[day]/[month]/[year]"),
    ];
    let date = formats.iter().find_map(|f| Date::parse(text, f).ok())?;
    (date.year() >= 1900 && date < lagos_today()).then_some(date)
}

/// A name as on the BVN or NIN: its words joined by one space; at least a
/// first name and a surname, at most 100 characters.
pub fn full_name(text: &str) -> Option<String> {
    let name = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (name.split(' ').count() >= 2 && name.chars().count() <= 100).then_some(name)
}

/// The next Lagos midnight after `now`: when a customer who used today's
/// checks may check again.
pub fn next_lagos_midnight(now: OffsetDateTime) -> OffsetDateTime {
    let tomorrow = now.to_offset(LAGOS).date().next_day().unwrap_or(Date::MAX);
    PrimitiveDateTime::new(tomorrow, Time::MIDNIGHT).assume_offset(LAGOS)
}

fn line(account: AccountId, action: &str, after: String) -> NewLogEntry {
    NewLogEntry {
        actor: SELF.to_owned(),
        operator_id: None,
        operator_email: None,
        action: action.to_owned(),
        subject: account.to_string(),
        before: None,
        after: Some(after),
        reason: None,
    }
}

/// Runs one check of `account`'s own identity through `checker` (the
/// gateway that offers it, if any): counted first, then asked; a pass sets
/// level 1. A store failure is the only error; every answer is an [`Outcome`].
pub async fn verify(
    store: &dyn Store,
    checker: Option<&dyn IdentityCheck>,
    account: AccountId,
    request: Request,
) -> Result<Outcome, StoreError> {
    let kyc = store.account_limits(account).await?.kyc;
    if kyc.level >= 1 {
        return Ok(Outcome::AlreadyVerified(kyc));
    }
    let Some(checker) = checker else {
        return Ok(Outcome::Unavailable);
    };
    let confirmed = store.account(account).await?.is_some_and(|a| a.verified());
    if !confirmed {
        return Ok(Outcome::Unconfirmed);
    }
    let Request {
        kind,
        number,
        claim,
    } = request;
    let what = format!("{} ending {}", kind.as_str(), number.last4());
    let since = lagos_day_start(lagos_today());
    let started = store
        .write(
            (
                account,
                since,
                IDENTITY_CHECKS_PER_DAY,
                line(account, IDENTITY_CHECK, what.clone()),
            ),
            |tx, (account, since, most, log)| {
                Box::pin(work::start_identity_check(tx, *account, since, *most, log))
            },
        )
        .await?;
    let Some(left) = started else {
        tracing::info!(%account, kind = kind.as_str(), last4 = number.last4(), "identity check refused: today's checks used");
        return Ok(Outcome::TooMany {
            retry_at: next_lagos_midnight(OffsetDateTime::now_utc()),
        });
    };
    let verdict = checker.verify(kind, &number, &claim).await;
    let outcome = match &verdict {
        Ok(Verdict::Passed { detail }) => detail.clone(),
        Ok(Verdict::Failed { mismatched }) => {
            let fields: Vec<&str> = mismatched.iter().map(|f| f.words()).collect();
            format!("not matched: {}", fields.join(", "))
        }
        Ok(Verdict::Unknown) => "no such number".to_owned(),
        Err(_) => "no answer from the gateway".to_owned(),
    };
    tracing::info!(%account, kind = kind.as_str(), last4 = number.last4(), %outcome, "identity check");
    let answer = match verdict {
        Ok(Verdict::Passed { detail }) => {
            let reason = format!(
                "{} matched through the payment gateway: {detail}",
                kind.title()
            );
            let change = KycChange {
                level: 1,
                method: kind.as_str().to_owned(),
                last4: Some(number.last4().to_owned()),
                reason: reason.clone(),
                set_by: SELF.to_owned(),
            };
            let mut log = line(account, "account.kyc_level", format!("level 1 ({what})"));
            log.reason = Some(reason);
            // An owner may have raised the level while the gateway answered:
            // never lower it (the store changes it only from level 0).
            let raised = store
                .write((account, change, log), |tx, (account, change, log)| {
                    Box::pin(work::raise_kyc_logged(tx, *account, 0, change, log))
                })
                .await?;
            let kyc = match raised {
                Some(kyc) => kyc,
                None => store.account_limits(account).await?.kyc,
            };
            return Ok(Outcome::Passed(kyc));
        }
        Ok(Verdict::Failed { mismatched }) => Outcome::Failed { mismatched, left },
        Ok(Verdict::Unknown) => Outcome::Unknown { left },
        Err(e) => {
            // The gateway's errors are scrubbed of the number (`IdNumber::scrub`).
            tracing::warn!(%account, error = %e, "identity check: no answer");
            Outcome::NoAnswer { left }
        }
    };
    store
        .append_log(line(account, CHECK_RESULT, format!("{what}: {outcome}")))
        .await?;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn fields_are_joined_for_a_person() {
        assert_eq!(fields_in_words(&[Field::Name]), "the name");
        assert_eq!(
            fields_in_words(&[Field::Name, Field::DateOfBirth, Field::Phone]),
            "the name, the date of birth and the phone number"
        );
        assert_eq!(left_in_words(1), "You have 1 check left today.");
    }

    #[test]
    fn a_claim_is_read_as_typed() {
        assert!(birth_date("27/04/1993").is_some());
        assert_eq!(birth_date(" 1993-04-27 "), birth_date("27/04/1993"));
        assert!(birth_date("2999-01-01").is_none());
        assert!(birth_date("1899-12-31").is_none());
        assert_eq!(
            full_name("  Olatunde   Ogunboyejo ").as_deref(),
            Some("Olatunde Ogunboyejo")
        );
        assert!(full_name("Olatunde").is_none());
    }

    #[test]
    fn the_next_check_is_at_lagos_midnight() {
        // 23:30 WAT is 22:30 UTC: half an hour to go.
        let at = next_lagos_midnight(datetime!(2026-11-26 22:30 UTC));
        assert_eq!(at, datetime!(2026-11-26 23:00 UTC));
        // 00:30 WAT (23:30 UTC the day before) waits for the next midnight.
        let at = next_lagos_midnight(datetime!(2026-11-26 23:30 UTC));
        assert_eq!(at, datetime!(2026-11-27 23:00 UTC));
    }
}
