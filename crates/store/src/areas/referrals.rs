//! Referrals (issue 49, migration `043_referrals`; docs/referrals.md): each
//! customer's code, who referred whom (once, at sign-up), the owner's
//! commission per product, and the bonus balance — a separate balance with
//! its own entries, never spendable directly, moved to the wallet by its
//! owner. A commission is earned in the transaction that makes the
//! referee's purchase successful (`fulfilment::finalize`, [`earn`]) and taken
//! back in the one that reverses it ([`take_back`]); both are bonus entries.

use super::wallet::{Entry, balance_locked, post_ledger};
use crate::clock::{now_ms, now_rfc3339, parse_rfc3339_ms};
use crate::db::{Column, Param, ReadTx, Reads, RowRead, Statements, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::{AccountId, Kobo, Product};
use serde::Serialize;
use std::collections::BTreeSet;

/// The letters of a code: no 0/O, 1/I (nor L), so it reads back unambiguously.
pub const CODE_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
/// A code's length: 31^7, about 27 billion codes.
pub const CODE_LENGTH: usize = 7;

/// The owner's commission on one product.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReferralRate {
    pub product: Product,
    /// Hundredths of a percent of what the referee is charged (150: 1.5 %).
    pub basis_points: i64,
    /// Only for purchases this many days after the referee's sign-up; `None`: for good.
    pub days: Option<i64>,
    pub updated_at: String,
}

impl ReferralRate {
    /// The commission on `charged`: rounded down to the kobo (never more
    /// than the percent).
    pub fn commission_on(&self, charged: Kobo) -> Kobo {
        let exact = i128::from(charged.0) * i128::from(self.basis_points) / 10_000;
        Kobo(i64::try_from(exact).unwrap_or(0))
    }

    /// Whether a purchase at `at_ms` by a referee signed up at
    /// `signed_up_ms` is inside the rate's window.
    pub fn covers(&self, signed_up_ms: i64, at_ms: i64) -> bool {
        self.days
            .is_none_or(|days| at_ms < signed_up_ms.saturating_add(days * 86_400_000))
    }
}

/// The programme's other settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReferralSettings {
    /// The one-time bonus the referrer gets on a referee's first funding.
    pub first_funding_bonus: Option<Kobo>,
    /// The least a referrer moves from the bonus balance to the wallet.
    pub min_withdrawal: Kobo,
}

/// Who referred whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Referral {
    pub referee_id: AccountId,
    /// The referee's name as the account has it (mask it before showing it
    /// to the referrer).
    pub referee_name: String,
    pub referrer_id: AccountId,
    pub code: String,
    pub created_at: String,
    /// Why it earns nothing: the referee's details matched the referrer's.
    pub matched: Option<String>,
    pub voided_at: Option<String>,
    pub void_reason: Option<String>,
    /// What it earned, less what was taken back.
    pub earned: Kobo,
}

impl Referral {
    /// Whether it earns commissions (not matched, not voided).
    pub fn earns(&self) -> bool {
        self.matched.is_none() && self.voided_at.is_none()
    }
}

/// A commission earned on a referee's purchase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Commission {
    pub transaction_code: String,
    pub referrer_id: AccountId,
    pub referee_id: AccountId,
    pub product: Product,
    pub charged: Kobo,
    pub amount: Kobo,
    pub earned_at: String,
    pub reversed_at: Option<String>,
}

/// An entry of a bonus balance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BonusEntry {
    pub id: i64,
    pub account_id: AccountId,
    /// `commission`, `reversal`, `first_funding` or `withdrawal`.
    pub kind: String,
    pub amount: Kobo,
    pub balance_after: Kobo,
    pub transaction_code: Option<String>,
    pub reference: Option<String>,
    pub created_at: String,
}

/// A referrer's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReferralTotals {
    pub referees: u64,
    /// Commissions and bonuses earned, less what was taken back.
    pub earned: Kobo,
    /// What the referees' purchases still processing would earn at today's rates.
    pub pending: Kobo,
    /// Moved to the wallet.
    pub withdrawn: Kobo,
    /// The bonus balance now (negative: owed after a take-back).
    pub balance: Kobo,
}

/// A referrer and what the programme cost for them in a range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopReferrer {
    pub referrer_id: AccountId,
    pub email: String,
    pub referees: u64,
    /// Commissions and bonuses earned in the range, less take-backs.
    pub cost: Kobo,
}

/// What a move of the bonus balance to the wallet did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withdrawal {
    /// Moved now.
    Moved { bonus: Kobo, wallet: Kobo },
    /// This reference moved it already (the same amount): nothing again.
    Repeated { bonus: Kobo, wallet: Kobo },
    /// This reference moved another amount: refused, nothing moved.
    OtherAmount { moved: Kobo },
    /// Below the owner's minimum.
    BelowMinimum { minimum: Kobo },
    /// More than the bonus balance.
    MoreThanBalance { balance: Kobo },
}

for_both_engines! {
    /// Referrals and the bonus balance (`areas/referrals.rs`).
    pub trait ReferralStore {
        /// The owner's rates, by product.
        fn referral_rates() -> Vec<ReferralRate> = read |tx| rates(tx);
        fn referral_settings() -> ReferralSettings = read |tx| settings(tx);
        /// The account's code, if one was made.
        fn referral_code_of(account: AccountId) -> Option<String> = read |tx| code_of(tx, account);
        /// The account a code is (any case).
        fn referrer_by_code(code: &str) -> Option<AccountId>
            = read |tx| by_code(tx, &code);
        /// Who referred `referee`, if anyone.
        fn referral_of(referee: AccountId) -> Option<Referral> = read |tx| referral_of(tx, referee);
        /// The referrer's referees, newest first.
        fn referees_of(referrer: AccountId) -> Vec<Referral> = read |tx| referees_of(tx, referrer);
        fn bonus_balance(account: AccountId) -> Kobo = read |tx| bonus_balance(tx, account);
        /// The bonus balance's entries, newest first.
        fn bonus_entries(account: AccountId, limit: u32) -> Vec<BonusEntry>
            = read |tx| bonus_entries(tx, account, limit);
        fn referral_totals(account: AccountId) -> ReferralTotals = read |tx| totals(tx, account);
        /// The commission on a purchase, if it earned one.
        fn commission_of(code: &str) -> Option<Commission> = read |tx| commission_of(tx, &code);
        /// The referrers who cost the most in `[from, until)` (RFC 3339).
        fn top_referrers(from: &str, until: &str, limit: u32) -> Vec<TopReferrer>
            = read |tx| top(tx, &from, &until, limit);
    }
}

/// `typed` as a code is stored: trimmed, upper-case; `None` when it cannot be one.
pub fn normal_code(typed: &str) -> Option<String> {
    let code = typed.trim().to_ascii_uppercase();
    let valid = code.len() == CODE_LENGTH && code.bytes().all(|b| CODE_ALPHABET.contains(&b));
    valid.then_some(code)
}

fn new_code() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..CODE_LENGTH)
        .map(|_| char::from(CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())]))
        .collect()
}

async fn code_of<T: ReadTx>(tx: &T, account: AccountId) -> Result<Option<String>, T::Error> {
    const COLUMNS: &str = "code";
    let sql = "SELECT code FROM referral_codes WHERE account_id = ?1";
    tx.query_opt(sql, &[&account.to_string()], |row| row.get(col!("code")))
        .await
}

/// The account's code, made now if it has none (a drawn code another
/// account has is drawn again).
pub(crate) async fn ensure_code<T: Tx>(tx: &T, account: AccountId) -> Result<String, T::Error> {
    for _ in 0..8 {
        if let Some(code) = code_of(tx, account).await? {
            return Ok(code);
        }
        let sql = "INSERT INTO referral_codes (account_id, code, created_at) VALUES (?1, ?2, ?3)
                   ON CONFLICT DO NOTHING";
        let params: [&dyn Param; 3] = [&account.to_string(), &new_code(), &now_rfc3339()];
        tx.execute(sql, &params).await?;
    }
    Err(StoreError::Invalid("no free referral code was drawn".into()).into())
}

async fn by_code<T: ReadTx>(tx: &T, typed: &str) -> Result<Option<AccountId>, T::Error> {
    let Some(code) = normal_code(typed) else {
        return Ok(None);
    };
    const COLUMNS: &str = "account_id";
    let sql = "SELECT account_id FROM referral_codes WHERE code = ?1";
    tx.query_opt(sql, &[&code], |row| row.parsed(col!("account_id")))
        .await
}

const RATE_COLUMNS: &str = "product, basis_points, days, updated_at";

fn rate_row(row: &dyn RowRead) -> StoreResult<ReferralRate> {
    const COLUMNS: &str = RATE_COLUMNS;
    Ok(ReferralRate {
        product: row.parsed(col!("product"))?,
        basis_points: row.get(col!("basis_points"))?,
        days: row.get(col!("days"))?,
        updated_at: row.get(col!("updated_at"))?,
    })
}

async fn rates<T: Reads>(tx: &T) -> Result<Vec<ReferralRate>, T::Error> {
    let sql = format!("SELECT {RATE_COLUMNS} FROM referral_rates ORDER BY product");
    tx.query_all(&sql, &[], rate_row).await
}

async fn rate<T: Reads>(tx: &T, product: Product) -> Result<Option<ReferralRate>, T::Error> {
    let sql = format!("SELECT {RATE_COLUMNS} FROM referral_rates WHERE product = ?1");
    tx.query_opt(&sql, &[&product.service()], rate_row).await
}

/// A rate as the operator log says it: `1.50 % for 90 days`.
pub fn rate_described(rate: Option<&ReferralRate>) -> String {
    let Some(rate) = rate else {
        return "none".into();
    };
    let percent = format!(
        "{}.{:02} %",
        rate.basis_points / 100,
        rate.basis_points % 100
    );
    match rate.days {
        Some(days) => format!("{percent} for {days} days"),
        None => percent,
    }
}

/// Sets (`Some`) or removes the commission on `product`, with its log line
/// (the rate before in it).
pub(crate) async fn set_rate<T: Tx>(
    tx: &T,
    product: Product,
    rate: Option<(i64, Option<i64>)>,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    let before = self::rate(tx, product).await?;
    match rate {
        Some((basis_points, days)) => {
            if !(1..=10_000).contains(&basis_points) || days.is_some_and(|d| d <= 0) {
                return Err(StoreError::Invalid(
                    "a commission is more than 0 % and at most 100 %, for a positive number of days"
                        .into(),
                )
                .into());
            }
            let sql = "INSERT INTO referral_rates (product, basis_points, days, updated_at)
                       VALUES (?1, ?2, ?3, ?4)
                       ON CONFLICT (product) DO UPDATE SET basis_points = excluded.basis_points,
                           days = excluded.days, updated_at = excluded.updated_at";
            let params: [&dyn Param; 4] =
                [&product.service(), &basis_points, &days, &now_rfc3339()];
            tx.execute(sql, &params).await?;
        }
        None => {
            let sql = "DELETE FROM referral_rates WHERE product = ?1";
            tx.execute(sql, &[&product.service()]).await?;
        }
    }
    let log = log.clone().with_before(&rate_described(before.as_ref()));
    super::operators::append(tx, &log).await
}

async fn settings<T: ReadTx>(tx: &T) -> Result<ReferralSettings, T::Error> {
    const COLUMNS: &str = "first_funding_bonus, min_withdrawal";
    let sql = "SELECT first_funding_bonus, min_withdrawal FROM referral_settings WHERE id = 1";
    let found = tx
        .query_opt(sql, &[], |row| {
            let bonus: Option<i64> = row.get(col!("first_funding_bonus"))?;
            Ok(ReferralSettings {
                first_funding_bonus: bonus.map(Kobo),
                min_withdrawal: Kobo(row.get(col!("min_withdrawal"))?),
            })
        })
        .await?;
    Ok(found.unwrap_or_default())
}

/// The settings as the operator log says them.
pub fn settings_described(settings: &ReferralSettings) -> String {
    let bonus = settings
        .first_funding_bonus
        .map_or_else(|| "none".to_owned(), |b| b.to_string());
    format!(
        "first-funding bonus {bonus}, minimum move {}",
        settings.min_withdrawal
    )
}

/// Replaces the settings, with the log line (the settings before in it).
pub(crate) async fn set_settings<T: Tx>(
    tx: &T,
    new: &ReferralSettings,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    if new.min_withdrawal.0 < 0 || new.first_funding_bonus.is_some_and(|b| b.0 <= 0) {
        return Err(StoreError::Invalid(
            "the bonus is positive and the minimum not negative".into(),
        )
        .into());
    }
    let before = settings(tx).await?;
    let sql = "INSERT INTO referral_settings (id, first_funding_bonus, min_withdrawal, updated_at)
               VALUES (1, ?1, ?2, ?3)
               ON CONFLICT (id) DO UPDATE SET first_funding_bonus = excluded.first_funding_bonus,
                   min_withdrawal = excluded.min_withdrawal, updated_at = excluded.updated_at";
    let params: [&dyn Param; 3] = [
        &new.first_funding_bonus.map(|b| b.0),
        &new.min_withdrawal.0,
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    let log = log.clone().with_before(&settings_described(&before));
    super::operators::append(tx, &log).await
}

const REFERRAL_SELECT: &str = "SELECT r.referee_id, a.name AS referee_name, r.referrer_id, r.code,
        r.created_at, r.matched, r.voided_at, r.void_reason,
        CAST(COALESCE((SELECT SUM(e.amount) FROM bonus_entries e
                       WHERE e.account_id = r.referrer_id AND e.referee_id = r.referee_id), 0)
             AS BIGINT) AS earned
    FROM referrals r JOIN accounts a ON a.id = r.referee_id";

fn referral_row(row: &dyn RowRead) -> StoreResult<Referral> {
    const COLUMNS: &str = "referee_id, referee_name, referrer_id, code, created_at, matched, \
                           voided_at, void_reason, earned";
    Ok(Referral {
        referee_id: row.parsed(col!("referee_id"))?,
        referee_name: row.get(col!("referee_name"))?,
        referrer_id: row.parsed(col!("referrer_id"))?,
        code: row.get(col!("code"))?,
        created_at: row.get(col!("created_at"))?,
        matched: row.get(col!("matched"))?,
        voided_at: row.get(col!("voided_at"))?,
        void_reason: row.get(col!("void_reason"))?,
        earned: Kobo(row.get(col!("earned"))?),
    })
}

async fn referral_of<T: ReadTx>(tx: &T, referee: AccountId) -> Result<Option<Referral>, T::Error> {
    let sql = format!("{REFERRAL_SELECT} WHERE r.referee_id = ?1");
    tx.query_opt(&sql, &[&referee.to_string()], referral_row)
        .await
}

async fn referees_of<T: ReadTx>(tx: &T, referrer: AccountId) -> Result<Vec<Referral>, T::Error> {
    let sql =
        format!("{REFERRAL_SELECT} WHERE r.referrer_id = ?1 ORDER BY r.created_at DESC LIMIT 500");
    tx.query_all(&sql, &[&referrer.to_string()], referral_row)
        .await
}

/// Records that `referrer_code` referred `referee` (just signed up), once:
/// an unknown code or the referee's own is nothing. The referee's details
/// are compared with the referrer's now (and again at each commission): a
/// match is recorded with the referral and it earns nothing.
pub(crate) async fn refer<T: Tx>(
    tx: &T,
    referee: AccountId,
    referrer_code: &str,
) -> Result<Option<Referral>, T::Error> {
    let Some(referrer) = by_code(tx, referrer_code).await? else {
        return Ok(None);
    };
    if referrer == referee {
        return Ok(None);
    }
    let matched = identity_match(tx, referrer, referee).await?;
    let sql = "INSERT INTO referrals (referee_id, referrer_id, code, created_at, matched)
               VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (referee_id) DO NOTHING";
    let code = normal_code(referrer_code).unwrap_or_default();
    let params: [&dyn Param; 5] = [
        &referee.to_string(),
        &referrer.to_string(),
        &code,
        &now_rfc3339(),
        &matched,
    ];
    tx.execute(sql, &params).await?;
    referral_of(tx, referee).await
}

/// Voids `referee`'s referral (it earns nothing from now on; what it earned
/// stays), with the owner's reason and the log line; `false` when there is
/// none or it was voided already.
pub(crate) async fn void<T: Tx>(
    tx: &T,
    referee: AccountId,
    reason: &str,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let sql = "UPDATE referrals SET voided_at = ?1, void_reason = ?2
               WHERE referee_id = ?3 AND voided_at IS NULL";
    let params: [&dyn Param; 3] = [&now_rfc3339(), &reason, &referee.to_string()];
    if tx.execute(sql, &params).await? == 0 {
        return Ok(false);
    }
    super::operators::append(tx, log).await?;
    Ok(true)
}

/// What one account is known by, for the self-referral check.
#[derive(Default)]
struct Identity {
    mailbox: String,
    phones: BTreeSet<String>,
    reserved: BTreeSet<String>,
    /// `bvn:1234`, `nin:5678` (only the last 4 digits are ever stored).
    ids: BTreeSet<String>,
}

/// The mailbox an address reaches for the self-referral check: lower-case,
/// without a `+tag`, and at Gmail without dots (which Gmail ignores).
pub fn mailbox_key(email: &str) -> String {
    let email = email.trim().to_lowercase();
    let Some((local, domain)) = email.rsplit_once('@') else {
        return email;
    };
    let local = local.split('+').next().unwrap_or(local);
    match domain {
        "gmail.com" | "googlemail.com" => format!("{}@gmail.com", local.replace('.', "")),
        _ => format!("{local}@{domain}"),
    }
}

/// A phone's last ten digits (`08031234567`, `2348031234567` and
/// `+234 803 123 4567` are one phone).
fn phone_key(phone: &str) -> Option<String> {
    let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
    (digits.len() >= 10).then(|| digits[digits.len() - 10..].to_owned())
}

async fn identity<T: Reads>(tx: &T, account: AccountId) -> Result<Identity, T::Error> {
    let id = account.to_string();
    const COLUMNS: &str = "value";
    let text = |row: &dyn RowRead| row.get::<Option<String>>(col!("value"));
    let mut identity = Identity::default();
    let email = tx
        .query_opt(
            "SELECT email AS value FROM accounts WHERE id = ?1",
            &[&id],
            text,
        )
        .await?
        .flatten()
        .unwrap_or_default();
    identity.mailbox = mailbox_key(&email);
    let phones = "SELECT phone AS value FROM accounts WHERE id = ?1
                  UNION ALL SELECT phone FROM notice_preferences WHERE account_id = ?1
                  UNION ALL SELECT phone FROM phone_codes WHERE account_id = ?1";
    for phone in tx
        .query_all(phones, &[&id], text)
        .await?
        .into_iter()
        .flatten()
    {
        identity.phones.extend(phone_key(&phone));
    }
    let reserved = "SELECT account_number AS value FROM funding_accounts WHERE account_id = ?1";
    identity.reserved = tx
        .query_all(reserved, &[&id], text)
        .await?
        .into_iter()
        .flatten()
        .collect();
    let ids = "SELECT method || ':' || last4 AS value FROM account_kyc
                   WHERE account_id = ?1 AND last4 IS NOT NULL AND method IN ('bvn', 'nin')
               UNION ALL SELECT kind || ':' || last4 FROM reservation_identities
                   WHERE account_id = ?1";
    identity.ids = tx
        .query_all(ids, &[&id], text)
        .await?
        .into_iter()
        .flatten()
        .collect();
    Ok(identity)
}

/// What of the referee's is the referrer's, as the owner reads it (`None`:
/// nothing).
async fn identity_match<T: Reads>(
    tx: &T,
    referrer: AccountId,
    referee: AccountId,
) -> Result<Option<String>, T::Error> {
    let (a, b) = (identity(tx, referrer).await?, identity(tx, referee).await?);
    let mut found = Vec::new();
    if !a.mailbox.is_empty() && a.mailbox == b.mailbox {
        found.push("the same email mailbox");
    }
    if !a.phones.is_disjoint(&b.phones) {
        found.push("the same phone");
    }
    if !a.reserved.is_disjoint(&b.reserved) {
        found.push("the same reserved account");
    }
    if !a.ids.is_disjoint(&b.ids) {
        found.push("the same BVN/NIN (last 4 digits)");
    }
    Ok((!found.is_empty()).then(|| format!("self-referral: {}", found.join(", "))))
}

/// A buyer's referrer as the finalization's row read finds it: who referred
/// them and when they signed up, while the referral still earns (neither
/// matched to its referrer nor voided).
pub(crate) struct Referrer {
    id: AccountId,
    signed_up: String,
}

/// The referral's columns in a read that joins `referrals r` by
/// [`REFERRER_JOIN`] (`NULL` when the buyer has no earning referral).
pub(crate) const REFERRER_COLUMNS: &str = "r.referrer_id, r.created_at";
/// The buyer's referral that still earns, joined to the purchase `t` by its
/// primary key.
pub(crate) const REFERRER_JOIN: &str =
    "r.referee_id = t.account_id AND r.matched IS NULL AND r.voided_at IS NULL";

impl Referrer {
    /// The referrer in [`REFERRER_COLUMNS`] at `first` on, if any.
    pub(crate) fn read(row: &dyn RowRead, first: usize) -> StoreResult<Option<Referrer>> {
        let Some(id) = row.parsed_opt(Column::nth(first))? else {
            return Ok(None);
        };
        let signed_up = row.get(Column::nth(first + 1))?;
        Ok(Some(Referrer { id, signed_up }))
    }
}

/// A purchase just made successful (`fulfilment::finalize`, same
/// transaction), whose buyer was referred by `referrer` (read with the
/// purchase's row): its commission earned, if the owner set a rate on its
/// product and the purchase is inside the rate's window. A buyer with no
/// referrer costs nothing here.
pub(crate) async fn earn<T: Statements>(
    tx: &T,
    code: &str,
    (referrer, buyer): (Referrer, AccountId),
    product: Product,
    charged: Kobo,
) -> Result<(), T::Error> {
    let Referrer {
        id: referrer,
        signed_up,
    } = referrer;
    let Some(rate) = rate(tx, product).await? else {
        return Ok(());
    };
    let signed_up_ms = parse_rfc3339_ms(&signed_up).unwrap_or(0);
    let amount = rate.commission_on(charged);
    if !rate.covers(signed_up_ms, now_ms()) || amount.0 <= 0 {
        return Ok(());
    }
    // Checked again now: the referee may have added the referrer's phone,
    // reserved account or BVN since signing up.
    if let Some(matched) = identity_match(tx, referrer, buyer).await? {
        let sql = "UPDATE referrals SET matched = ?1 WHERE referee_id = ?2";
        tx.execute(sql, &[&matched, &buyer.to_string()]).await?;
        return Ok(());
    }
    let sql =
        "INSERT INTO referral_commissions (transaction_code, referrer_id, referee_id, product,
                   charged, amount, earned_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    let params: [&dyn Param; 7] = [
        &code,
        &referrer.to_string(),
        &buyer.to_string(),
        &product.service(),
        &charged.0,
        &amount.0,
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    let entry = Bonus {
        kind: "commission",
        transaction_code: Some(code),
        referee: Some(buyer),
        reference: None,
    };
    let balance = post_bonus(tx, referrer, amount, &entry).await?;
    told(tx, referrer, COMMISSION_EARNED, code, amount, balance).await
}

/// A successful purchase just reversed (same transaction): its commission,
/// if any, taken back. The bonus balance may go below zero (the commission
/// was moved to the wallet already): owed, never taken from the wallet.
pub(crate) async fn take_back<T: Statements>(tx: &T, code: &str) -> Result<(), T::Error> {
    let Some(commission) = commission_of(tx, code).await? else {
        return Ok(());
    };
    let sql = "UPDATE referral_commissions SET reversed_at = ?1
               WHERE transaction_code = ?2 AND reversed_at IS NULL";
    if tx.execute(sql, &[&now_rfc3339(), &code]).await? == 0 {
        return Ok(());
    }
    let entry = Bonus {
        kind: "reversal",
        transaction_code: Some(code),
        referee: Some(commission.referee_id),
        reference: None,
    };
    post_bonus(
        tx,
        commission.referrer_id,
        Kobo(-commission.amount.0),
        &entry,
    )
    .await?;
    Ok(())
}

/// A referee's first credited funding (same transaction as its credit): the
/// owner's one-time bonus to the referrer, if set and the referral earns.
pub(crate) async fn first_funding<T: Tx>(tx: &T, referee: AccountId) -> Result<(), T::Error> {
    let Some(referral) = referral_of(tx, referee).await? else {
        return Ok(());
    };
    let Some(bonus) = settings(tx).await?.first_funding_bonus else {
        return Ok(());
    };
    if !referral.earns() {
        return Ok(());
    }
    if let Some(matched) = identity_match(tx, referral.referrer_id, referee).await? {
        let sql = "UPDATE referrals SET matched = ?1 WHERE referee_id = ?2";
        tx.execute(sql, &[&matched, &referee.to_string()]).await?;
        return Ok(());
    }
    let reference = format!("first-funding:{referee}");
    const COLUMNS: &str = "found";
    let sql = "SELECT EXISTS(SELECT 1 FROM bonus_entries WHERE account_id = ?1
               AND kind = 'first_funding' AND reference = ?2) AS found";
    let params: [&dyn Param; 2] = [&referral.referrer_id.to_string(), &reference];
    let paid: bool = tx
        .query_one(sql, &params, |row| row.get(col!("found")))
        .await?;
    if paid {
        return Ok(());
    }
    let entry = Bonus {
        kind: "first_funding",
        transaction_code: None,
        referee: Some(referee),
        reference: Some(&reference),
    };
    let balance = post_bonus(tx, referral.referrer_id, bonus, &entry).await?;
    told(
        tx,
        referral.referrer_id,
        COMMISSION_EARNED,
        &reference,
        bonus,
        balance,
    )
    .await
}

/// What a bonus entry refers to.
struct Bonus<'a> {
    kind: &'a str,
    transaction_code: Option<&'a str>,
    referee: Option<AccountId>,
    reference: Option<&'a str>,
}

/// Moves a bonus balance by `amount` (signed; it may go below zero) and
/// appends its entry; answers the balance after.
async fn post_bonus<T: Statements>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    entry: &Bonus<'_>,
) -> Result<Kobo, T::Error> {
    let id = account.to_string();
    let sql = "INSERT INTO bonus_balances (account_id, balance) VALUES (?1, ?2)
               ON CONFLICT (account_id) DO UPDATE SET balance = bonus_balances.balance + excluded.balance";
    tx.execute(sql, &[&id, &amount.0]).await?;
    let after = bonus_balance(tx, account).await?;
    let sql =
        "INSERT INTO bonus_entries (account_id, kind, amount, balance_after, transaction_code,
                   referee_id, reference, created_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
    let params: [&dyn Param; 8] = [
        &id,
        &entry.kind,
        &amount.0,
        &after.0,
        &entry.transaction_code,
        &entry.referee.map(|r| r.to_string()),
        &entry.reference,
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    Ok(after)
}

async fn bonus_balance<T: Reads>(tx: &T, account: AccountId) -> Result<Kobo, T::Error> {
    const COLUMNS: &str = "balance";
    let sql = "SELECT balance FROM bonus_balances WHERE account_id = ?1";
    let found: Option<i64> = tx
        .query_opt(sql, &[&account.to_string()], |row| row.get(col!("balance")))
        .await?;
    Ok(Kobo(found.unwrap_or(0)))
}

const ENTRY_COLUMNS: &str =
    "id, account_id, kind, amount, balance_after, transaction_code, reference, created_at";

fn entry_row(row: &dyn RowRead) -> StoreResult<BonusEntry> {
    const COLUMNS: &str = ENTRY_COLUMNS;
    Ok(BonusEntry {
        id: row.get(col!("id"))?,
        account_id: row.parsed(col!("account_id"))?,
        kind: row.get(col!("kind"))?,
        amount: Kobo(row.get(col!("amount"))?),
        balance_after: Kobo(row.get(col!("balance_after"))?),
        transaction_code: row.get(col!("transaction_code"))?,
        reference: row.get(col!("reference"))?,
        created_at: row.get(col!("created_at"))?,
    })
}

async fn bonus_entries<T: ReadTx>(
    tx: &T,
    account: AccountId,
    limit: u32,
) -> Result<Vec<BonusEntry>, T::Error> {
    let sql = format!(
        "SELECT {ENTRY_COLUMNS} FROM bonus_entries WHERE account_id = ?1
         ORDER BY id DESC LIMIT CAST(?2 AS BIGINT)"
    );
    let params: [&dyn Param; 2] = [&account.to_string(), &i64::from(limit)];
    tx.query_all(&sql, &params, entry_row).await
}

async fn commission_of<T: Reads>(tx: &T, code: &str) -> Result<Option<Commission>, T::Error> {
    const COLUMNS: &str = "transaction_code, referrer_id, referee_id, product, charged, amount, earned_at, reversed_at";
    let sql = format!("SELECT {COLUMNS} FROM referral_commissions WHERE transaction_code = ?1");
    tx.query_opt(&sql, &[&code], |row| {
        Ok(Commission {
            transaction_code: row.get(col!("transaction_code"))?,
            referrer_id: row.parsed(col!("referrer_id"))?,
            referee_id: row.parsed(col!("referee_id"))?,
            product: row.parsed(col!("product"))?,
            charged: Kobo(row.get(col!("charged"))?),
            amount: Kobo(row.get(col!("amount"))?),
            earned_at: row.get(col!("earned_at"))?,
            reversed_at: row.get(col!("reversed_at"))?,
        })
    })
    .await
}

async fn totals<T: ReadTx>(tx: &T, account: AccountId) -> Result<ReferralTotals, T::Error> {
    let id = account.to_string();
    const COLUMNS: &str = "referees, earned, withdrawn";
    let sql = "SELECT
          CAST((SELECT COUNT(*) FROM referrals WHERE referrer_id = ?1) AS BIGINT) AS referees,
          CAST(COALESCE((SELECT SUM(amount) FROM bonus_entries
                         WHERE account_id = ?1 AND kind <> 'withdrawal'), 0) AS BIGINT) AS earned,
          CAST(COALESCE((SELECT -SUM(amount) FROM bonus_entries
                         WHERE account_id = ?1 AND kind = 'withdrawal'), 0) AS BIGINT) AS withdrawn";
    let (referees, earned, withdrawn) = tx
        .query_one(sql, &[&id], |row| {
            let referees: i64 = row.get(col!("referees"))?;
            let earned: i64 = row.get(col!("earned"))?;
            let withdrawn: i64 = row.get(col!("withdrawn"))?;
            Ok((referees, earned, withdrawn))
        })
        .await?;
    Ok(ReferralTotals {
        referees: u64::try_from(referees).unwrap_or(0),
        earned: Kobo(earned),
        pending: pending(tx, account).await?,
        withdrawn: Kobo(withdrawn),
        balance: bonus_balance(tx, account).await?,
    })
}

/// What the referees' purchases still processing would earn at today's rates.
async fn pending<T: ReadTx>(tx: &T, account: AccountId) -> Result<Kobo, T::Error> {
    const COLUMNS: &str = "product, amount, signed_up, placed";
    let sql = "SELECT t.product, t.amount, r.created_at AS signed_up, t.created_at AS placed
               FROM referrals r JOIN transactions t ON t.account_id = r.referee_id
               WHERE r.referrer_id = ?1 AND r.matched IS NULL AND r.voided_at IS NULL
                 AND t.status = 'processing'
               LIMIT 1000";
    let rows = tx
        .query_all(sql, &[&account.to_string()], |row| {
            let product: Product = row.parsed(col!("product"))?;
            let amount: i64 = row.get(col!("amount"))?;
            let signed_up: String = row.get(col!("signed_up"))?;
            let placed: String = row.get(col!("placed"))?;
            Ok((product, Kobo(amount), signed_up, placed))
        })
        .await?;
    if rows.is_empty() {
        return Ok(Kobo::ZERO);
    }
    let rates = rates(tx).await?;
    let mut total = 0;
    for (product, amount, signed_up, placed) in rows {
        let Some(rate) = rates.iter().find(|r| r.product == product) else {
            continue;
        };
        let (from, at) = (parse_rfc3339_ms(&signed_up), parse_rfc3339_ms(&placed));
        if rate.covers(from.unwrap_or(0), at.unwrap_or(0)) {
            total += rate.commission_on(amount).0;
        }
    }
    Ok(Kobo(total))
}

async fn top<T: ReadTx>(
    tx: &T,
    from: &str,
    until: &str,
    limit: u32,
) -> Result<Vec<TopReferrer>, T::Error> {
    const COLUMNS: &str = "referrer_id, email, referees, cost";
    let sql = "SELECT e.account_id AS referrer_id, a.email,
                      CAST((SELECT COUNT(*) FROM referrals r WHERE r.referrer_id = e.account_id)
                           AS BIGINT) AS referees,
                      CAST(SUM(e.amount) AS BIGINT) AS cost
               FROM bonus_entries e JOIN accounts a ON a.id = e.account_id
               WHERE e.kind <> 'withdrawal' AND e.created_at >= ?1 AND e.created_at < ?2
               GROUP BY e.account_id, a.email
               ORDER BY cost DESC, e.account_id LIMIT CAST(?3 AS BIGINT)";
    let params: [&dyn Param; 3] = [&from, &until, &i64::from(limit)];
    tx.query_all(sql, &params, |row| {
        let referees: i64 = row.get(col!("referees"))?;
        Ok(TopReferrer {
            referrer_id: row.parsed(col!("referrer_id"))?,
            email: row.get(col!("email"))?,
            referees: u64::try_from(referees).unwrap_or(0),
            cost: Kobo(row.get(col!("cost"))?),
        })
    })
    .await
}

/// Moves `amount` of the bonus balance to the wallet once per (account,
/// reference): the bonus debit and the wallet credit (source `referral`,
/// the same reference) in this transaction. The wallet's row lock is taken
/// first (as a reversal's refund takes it before the bonus row), so moves
/// of one account take turns on any node: a repeated reference answers the
/// first move, or is refused if its amount differs.
pub(crate) async fn withdraw<T: Tx>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    reference: &str,
) -> Result<Withdrawal, T::Error> {
    // The caller refuses it in the customer's words first (`operations::referrals`).
    if amount.0 <= 0 {
        return Err(StoreError::Invalid("a bonus move is of more than 0".into()).into());
    }
    let wallet_now = balance_locked(tx, account).await?;
    const COLUMNS: &str = "amount";
    let sql = "SELECT amount FROM bonus_entries
               WHERE account_id = ?1 AND kind = 'withdrawal' AND reference = ?2";
    let params: [&dyn Param; 2] = [&account.to_string(), &reference];
    let before: Option<i64> = tx
        .query_opt(sql, &params, |row| row.get(col!("amount")))
        .await?;
    let bonus = bonus_balance(tx, account).await?;
    if let Some(moved) = before {
        let moved = Kobo(-moved);
        return Ok(if moved == amount {
            Withdrawal::Repeated {
                bonus,
                wallet: wallet_now,
            }
        } else {
            Withdrawal::OtherAmount { moved }
        });
    }
    let minimum = settings(tx).await?.min_withdrawal;
    if amount < minimum {
        return Ok(Withdrawal::BelowMinimum { minimum });
    }
    if amount > bonus {
        return Ok(Withdrawal::MoreThanBalance { balance: bonus });
    }
    let entry = Bonus {
        kind: "withdrawal",
        transaction_code: None,
        referee: None,
        reference: Some(reference),
    };
    let bonus = post_bonus(tx, account, Kobo(-amount.0), &entry).await?;
    let credit = Entry::Credit(&CreditSource::Referral, reference);
    let wallet = post_ledger(tx, account, amount, credit).await?;
    told(tx, account, BONUS_MOVED, reference, amount, bonus).await?;
    Ok(Withdrawal::Moved { bonus, wallet })
}

/// The notice kind of a commission (or first-funding bonus) earned.
pub const COMMISSION_EARNED: &str = "referral_commission";
/// The notice kind of a bonus moved to the wallet.
pub const BONUS_MOVED: &str = "referral_bonus_moved";

/// The referrer's notice, in its transaction (once: its cause).
async fn told<T: Statements>(
    tx: &T,
    account: AccountId,
    kind: &str,
    cause: &str,
    amount: Kobo,
    balance: Kobo,
) -> Result<(), T::Error> {
    // `balance`: the bonus balance (the templates' `f.balance`).
    let data = serde_json::json!({ "amount": amount.0, "balance": balance.0 });
    let cause = format!("{kind}:{account}:{cause}");
    let owner = super::notices::Owner::Account(account);
    super::notices::for_account(tx, owner, NoticeTopic::Funding, kind, &cause, &data).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unambiguous_and_read_in_any_case() {
        for letter in [b'0', b'O', b'1', b'I', b'L'] {
            assert!(!CODE_ALPHABET.contains(&letter));
        }
        let code = new_code();
        assert_eq!(code.len(), CODE_LENGTH);
        assert_eq!(
            normal_code(&format!(" {} ", code.to_lowercase())),
            Some(code)
        );
        assert_eq!(normal_code("ABC0EFG"), None);
        assert_eq!(normal_code("ABC"), None);
    }

    #[test]
    fn a_mailbox_is_compared_without_gmail_dots_or_a_plus_tag() {
        assert_eq!(mailbox_key("J.Doe+promo@GMail.com"), "jdoe@gmail.com");
        assert_eq!(mailbox_key("jdoe@googlemail.com"), "jdoe@gmail.com");
        assert_eq!(mailbox_key("j.doe+x@example.com"), "j.doe@example.com");
        assert_eq!(phone_key("+234 803 123 4567"), phone_key("08031234567"));
    }

    #[test]
    fn a_commission_is_the_percent_rounded_down_to_the_kobo() {
        let rate = ReferralRate {
            product: Product::Data,
            basis_points: 150,
            days: Some(30),
            updated_at: String::new(),
        };
        assert_eq!(rate.commission_on(Kobo(10_000)), Kobo(150));
        assert_eq!(rate.commission_on(Kobo(99)), Kobo(1));
        assert_eq!(rate.commission_on(Kobo(66)), Kobo(0));
        assert!(rate.covers(0, 29 * 86_400_000));
        assert!(!rate.covers(0, 30 * 86_400_000));
    }
}
