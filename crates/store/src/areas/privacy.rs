//! Data protection (issue 32, NDPA): an account closed by an operator, the
//! erasure of a closed account's personal data, and the pages of a
//! customer's own data that "Download my data" streams.
//!
//! **Closing** needs an empty wallet and no purchase in flight; it suspends
//! the account for good (its keys stop, its sessions end) and is logged in
//! the same transaction. A closed account is never reactivated.
//!
//! **Erasing** a closed account replaces everything that names the person —
//! name, email, phone, the recipients and details of its purchases, its
//! webhook URLs and bodies, its notices' addresses and contents, the payer
//! names of its bank transfers, the operator log's text about it — with the
//! tombstone `erased-<account id>` (or `[erased]` in the log), and deletes
//! what only served the person (sessions, codes, reset links, PIN,
//! beneficiaries, notification choices, identity last-4s, the limits' counts
//! per recipient). Amounts, codes, references, times and the ledger stay, so
//! the audit still balances. [`PERSONAL_DATA`] lists every table holding
//! personal data and what erasure and the data download do with it. One
//! transaction, one operator-log line. On SQLite the freed bytes are zeroed
//! (`PRAGMA secure_delete`, set on every connection), so the old values are
//! not left in the file's free space.

use super::{accounts, operators};
use crate::clock::now_rfc3339;
use crate::columns::LEDGER_COLUMNS;
use crate::db::{Param, PerEngine, ReadTx, Tx, col, for_both_engines};
use crate::rows::ledger_entry;
use crate::*;
use billpay_domain::{AccountId, Kobo};
use std::sync::LazyLock;

/// When an operator closed an account, and when its personal data was erased.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Closure {
    pub closed_at: String,
    pub erased_at: Option<String>,
}

/// What an erase replaced or deleted, counted for the operator.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Erasure {
    /// What every erased text now reads.
    pub tombstone: String,
    pub purchases: u64,
    pub beneficiaries: u64,
    pub notices: u64,
    pub keys: u64,
    pub log_lines: u64,
}

/// A purchase as the customer's data download lists it (no delivered
/// tokens: those are on the receipt, sealed at rest).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PurchaseRecord {
    pub code: String,
    pub reference: String,
    pub product: String,
    pub provider: String,
    pub label: String,
    pub recipient: String,
    /// What was charged.
    pub amount: Kobo,
    /// What the recipient was to get (`None`: the amount, from before tiers).
    pub face_value: Option<Kobo>,
    pub status: String,
    pub message: String,
    pub created_at: String,
    pub completed_at: Option<String>,
}

/// Where a page of purchases ends: the next page starts after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurchaseCursor {
    pub created_at: String,
    pub code: String,
}

/// What erasure does with a table's rows of the account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Erased {
    /// Deleted: `erase` runs `DELETE FROM <table> WHERE account_id = ?1` for
    /// each table so marked in [`PERSONAL_DATA`].
    Deleted,
    /// Kept, the fields that name the person replaced by a statement of
    /// `erase` (a unit test holds the two to each other).
    Masked,
    /// Kept as it is, for the reason given.
    Kept(&'static str),
}

/// Whether "Download my data" (`dashboard::care::my_data`) holds a table's
/// rows of the account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exported {
    /// Read through the store method (or function) named.
    By(&'static str),
    /// Left out, for the reason given.
    Left(&'static str),
}

/// A table holding a customer's personal data, and what erasure and the
/// data download do with it.
#[derive(Debug, Clone, Copy)]
pub struct PersonalTable {
    pub table: &'static str,
    pub erased: Erased,
    pub exported: Exported,
}

const fn personal(table: &'static str, erased: Erased, exported: Exported) -> PersonalTable {
    PersonalTable {
        table,
        erased,
        exported,
    }
}

use Erased::{Deleted, Kept, Masked};
use Exported::{By, Left};

/// Why a live secret's table is not in the download.
const SECRET: &str = "a secret's hash, live for minutes or a session: nothing to read";
/// Why the limits' counters are not.
const COUNTERS: &str = "the limits' counters, pruned within days; the purchases they count are";

/// Every table holding a customer's personal data: erasure (`erase`) and
/// the download go by this list, and `tests/personal_data.rs` fails when the
/// schema has a table naming an account or a person that is neither here
/// nor in [`STAFF_DATA`]. A new such table: its line here, and what erasure
/// and the download do with it.
pub const PERSONAL_DATA: &[PersonalTable] = &[
    personal("accounts", Masked, By("account (the profile)")),
    personal(
        "account_closures",
        Kept("when the account was closed and erased: the record that it was; no personal field"),
        Left("a closed account cannot sign in to download"),
    ),
    personal(
        "account_kyc",
        Masked,
        By("account_limits (the profile's kyc_level, kyc_method, kyc_last4, kyc_set)"),
    ),
    personal(
        "account_limits",
        Kept("the operator's limits on the account: amounts and actions, no personal field"),
        Left("the operator's fraud settings for the account, not data about the person"),
    ),
    personal(
        "account_tiers",
        Kept("the account's price tier, an operator's name: no personal field"),
        By("operations::pricing::account_tier (the profile's price_tier)"),
    ),
    personal("api_keys", Masked, By("api_keys")),
    personal(
        "batch_items",
        Deleted,
        Left("a batch's items are its purchases' bodies; the purchases are in the download"),
    ),
    personal(
        "batches",
        Deleted,
        Left("a batch is its items' purchases, which are in the download"),
    ),
    personal("beneficiaries", Deleted, By("all_beneficiaries")),
    personal(
        "checkouts",
        Kept("hosted checkouts' references and amounts, kept like the ledger they credit"),
        Left("a paid checkout is its credit's statement line; an unpaid one moved nothing"),
    ),
    personal("email_codes", Deleted, Left(SECRET)),
    personal(
        "events",
        Masked,
        Left("the purchases' results sent to the customer's webhook; the purchases are in it"),
    ),
    personal(
        "funding_accounts",
        Masked,
        Left("the bank accounts reserved for the customer, on the dashboard's funding page"),
    ),
    personal(
        "funding_customers",
        Kept("the gateway's reference for the customer: no personal field, matches its reports"),
        Left("the gateway's internal reference for the customer"),
    ),
    personal(
        "funding_events",
        Masked,
        Left("each credited transfer is its statement line; the payer may be someone else"),
    ),
    personal("hourly_usage", Deleted, Left(COUNTERS)),
    personal(
        "ledger",
        Kept("the wallet's money record, kept for the audit (balance = SUM) and by law"),
        By("ledger_page"),
    ),
    personal(
        "limit_usage",
        Kept("daily amounts and counts, no personal field; pruned with the days"),
        Left(COUNTERS),
    ),
    personal("notice_preferences", Deleted, By("notice_preferences")),
    personal(
        "notices",
        Masked,
        Left("copies of the messages the customer was sent"),
    ),
    personal(
        "notice_suppressions",
        Masked,
        Left("addresses that refused mail, kept by address, not by account"),
    ),
    personal("password_resets", Deleted, Left(SECRET)),
    personal("phone_codes", Deleted, Left(SECRET)),
    personal("recipient_usage", Deleted, Left(COUNTERS)),
    personal(
        "referral_codes",
        Kept("the account's referral code: no personal field; kept so no one else is given it"),
        Left("the code is on the dashboard's referrals page"),
    ),
    personal(
        "referrals",
        Kept("who referred whom, kept with the commissions it earned (the audit pairs them)"),
        Left("the referees are listed, their names masked, on the dashboard's referrals page"),
    ),
    personal(
        "referral_commissions",
        Kept("the commissions' money record, kept like the ledger"),
        Left("each commission is a bonus entry on the dashboard's referrals page"),
    ),
    personal(
        "bonus_balances",
        Kept("the bonus balance, kept for the audit (balance = SUM of its entries)"),
        Left("the bonus balance is on the dashboard's referrals page"),
    ),
    personal(
        "bonus_entries",
        Kept("the bonus balance's money record, kept for the audit and by law"),
        Left("the bonus history is on the dashboard's referrals page"),
    ),
    personal(
        "reservation_identities",
        Deleted,
        Left("which identity a gateway checked for a reserved account, by its last 4 digits"),
    ),
    // the runs first: they name their schedule
    personal(
        "schedule_runs",
        Deleted,
        Left("each run is a purchase, in the download; the schedules page lists the runs"),
    ),
    personal(
        "schedules",
        Deleted,
        Left("standing orders, listed on the dashboard's schedules page; their runs are purchases"),
    ),
    personal("sessions", Deleted, Left(SECRET)),
    personal(
        "tier_upgrades",
        Kept("upgrades bought, kept like the ledger entries of their fees (the audit pairs them)"),
        Left("each upgrade's fee is in the ledger's pages, its tier in the profile"),
    ),
    personal("transaction_pins", Deleted, Left(SECRET)),
    personal("transactions", Masked, By("purchases_page")),
    personal(
        "webhook_attempts",
        Masked,
        Left("deliveries to the customer's own webhook URL, which is in the download"),
    ),
    personal(
        "blocklist",
        Masked,
        Left("fraud control, never shown to the customer"),
    ),
    personal(
        "operator_log",
        Masked,
        Left("the operators' record of what they did"),
    ),
];

/// Tables naming a person who is not a customer — the business's own
/// operators — which erasure and the download (a customer's) leave alone:
/// an operator is disabled with `billpay operator`, and their log lines stay.
pub const STAFF_DATA: &[&str] = &[
    "operators",
    "operator_sessions",
    "operator_alert_channels",
    "operator_alert_opt_outs",
];

for_both_engines! {
    /// Data protection (`areas/privacy.rs`): closing an account, erasing a
    /// closed account's personal data, and the pages of a customer's own data.
    pub trait PrivacyStore {
        /// `None`: open (or no such account).
        fn account_closure(account: AccountId) -> Option<Closure>
            = read |tx| closure(tx, account);
        /// The account's ledger entries after `after_id`, oldest first.
        fn ledger_page(account: AccountId, after_id: i64, limit: u32) -> Vec<LedgerEntry>
            = read |tx| ledger_after(tx, account, after_id, limit);
        /// The account's purchases after `after` (from the first with `None`), oldest first.
        fn purchases_page(account: AccountId, after: Option<PurchaseCursor>, limit: u32)
            -> Vec<PurchaseRecord> = read |tx| purchases_after(tx, account, after.as_ref(), limit);
        /// Every saved recipient of the account, by product and nickname.
        fn all_beneficiaries(account: AccountId) -> Vec<Beneficiary>
            = read |tx| beneficiaries_of(tx, account);
    }
}

async fn closure<T: ReadTx>(tx: &T, account: AccountId) -> Result<Option<Closure>, T::Error> {
    const COLUMNS: &str = "closed_at, erased_at";
    let sql = "SELECT closed_at, erased_at FROM account_closures WHERE account_id = ?1";
    tx.query_opt(sql, &[&account.to_string()], |row| {
        Ok(Closure {
            closed_at: row.get(col!("closed_at"))?,
            erased_at: row.get(col!("erased_at"))?,
        })
    })
    .await
}

/// The account as a closure or an erase sees it (PostgreSQL: locked, so a
/// credit or a purchase on it waits until this transaction ends).
struct Held {
    balance: Kobo,
    status: String,
    name: String,
    email: String,
    phone: Option<String>,
}

async fn hold<T: Tx>(tx: &T, account: AccountId) -> Result<Held, T::Error> {
    const COLUMNS: &str = "balance, status, name, email, phone";
    static SQL: PerEngine = PerEngine::new(|engine| {
        let lock = engine.for_update();
        format!("SELECT {COLUMNS} FROM accounts WHERE id = ?1{lock}")
    });
    let held = tx
        .query_opt(SQL.sql(T::ENGINE), &[&account.to_string()], |row| {
            Ok(Held {
                balance: row.get(col!("balance"))?,
                status: row.get(col!("status"))?,
                name: row.get(col!("name"))?,
                email: row.get(col!("email"))?,
                phone: row.get(col!("phone"))?,
            })
        })
        .await?;
    Ok(held.ok_or(StoreError::NotFound("account"))?)
}

/// An account with money in it or a purchase in flight is still someone's:
/// it is neither closed nor erased.
async fn refuse_unsettled<T: Tx>(
    tx: &T,
    account: AccountId,
    held: &Held,
    doing: &str,
) -> Result<(), T::Error> {
    if held.balance > Kobo(0) {
        return Err(StoreError::Invalid(format!(
            "account {account} still has {} in its wallet: pay it back to the customer and \
             debit it (billpay wallet debit) before you {doing} it",
            held.balance
        ))
        .into());
    }
    const COLUMNS: &str = "processing";
    let sql = "SELECT CAST(COUNT(*) AS BIGINT) AS processing FROM transactions
               WHERE account_id = ?1 AND status = 'processing'";
    let processing: i64 = tx
        .query_one(sql, &[&account.to_string()], |row| {
            row.get(col!("processing"))
        })
        .await?;
    if processing > 0 {
        return Err(StoreError::Invalid(format!(
            "account {account} has {processing} purchase(s) still processing: {doing} it once \
             they are final"
        ))
        .into());
    }
    Ok(())
}

pub(crate) async fn close<T: Tx>(
    tx: &T,
    account: AccountId,
    log: &NewLogEntry,
) -> Result<Closure, T::Error> {
    let held = hold(tx, account).await?;
    if let Some(closed) = closure(tx, account).await? {
        return Err(StoreError::Invalid(format!(
            "account {account} was closed on {}",
            closed.closed_at
        ))
        .into());
    }
    refuse_unsettled(tx, account, &held, "close").await?;
    accounts::set_status(tx, account, AccountStatus::Suspended).await?;
    let now = now_rfc3339();
    let sql = "INSERT INTO account_closures (account_id, closed_at) VALUES (?1, ?2)";
    tx.execute(sql, &[&account.to_string(), &now]).await?;
    operators::append(tx, &log.clone().with_before(&held.status)).await?;
    Ok(Closure {
        closed_at: now,
        erased_at: None,
    })
}

/// Whether an account is closed: a closed account is never reactivated
/// (`logged::set_account_status` asks, inside its transaction).
pub(crate) async fn refuse_if_closed<T: Tx>(tx: &T, account: AccountId) -> Result<(), T::Error> {
    match closure(tx, account).await? {
        None => Ok(()),
        Some(closed) => Err(StoreError::Invalid(format!(
            "account {account} was closed on {}: a closed account stays closed",
            closed.closed_at
        ))
        .into()),
    }
}

/// The text an erase leaves wherever the person was named.
pub fn tombstone(account: AccountId) -> String {
    format!("erased-{account}")
}

pub(crate) async fn erase<T: Tx>(
    tx: &T,
    account: AccountId,
    log: &NewLogEntry,
) -> Result<Erasure, T::Error> {
    let held = hold(tx, account).await?;
    match closure(tx, account).await? {
        None => {
            return Err(StoreError::Invalid(format!(
                "account {account} is open: close it first (billpay account close), then erase it"
            ))
            .into());
        }
        Some(Closure {
            erased_at: Some(at),
            ..
        }) => {
            return Err(StoreError::Invalid(format!(
                "account {account}'s personal data was already erased on {at}"
            ))
            .into());
        }
        Some(_) => {}
    }
    refuse_unsettled(tx, account, &held, "erase").await?;
    let person = person_of(tx, account, held).await?;
    let tombstone = tombstone(account);
    let mut erasure = Erasure {
        tombstone: tombstone.clone(),
        log_lines: redact_log(tx, account, &person).await?,
        purchases: erase_purchases(tx, account, &tombstone).await?,
        ..Erasure::default()
    };
    erase_messages(tx, account, &person, &tombstone, &mut erasure).await?;
    erase_profile(tx, account, &tombstone, &mut erasure).await?;
    let sql = "UPDATE account_closures SET erased_at = ?2 WHERE account_id = ?1";
    tx.execute(sql, &[&account.to_string(), &now_rfc3339()])
        .await?;
    operators::append(tx, log).await?;
    Ok(erasure)
}

/// What names the person: the account's name, email, every phone it gave,
/// and the last 4 digits of a BVN or NIN verified for its KYC level.
struct Person {
    name: String,
    email: String,
    phones: Vec<String>,
    identity_last4: Option<String>,
}

async fn person_of<T: Tx>(tx: &T, account: AccountId, held: Held) -> Result<Person, T::Error> {
    const COLUMNS: &str = "phone";
    let sql = "SELECT phone FROM notice_preferences WHERE account_id = ?1 AND phone IS NOT NULL";
    let mut phones: Vec<String> = tx
        .query_all(sql, &[&account.to_string()], |row| row.get(col!("phone")))
        .await?;
    phones.extend(held.phone);
    phones.retain(|p| !p.trim().is_empty());
    let identity_last4 = {
        const COLUMNS: &str = "last4";
        let sql = "SELECT last4 FROM account_kyc WHERE account_id = ?1";
        tx.query_opt(sql, &[&account.to_string()], |row| {
            row.get::<Option<String>>(col!("last4"))
        })
        .await?
        .flatten()
    };
    Ok(Person {
        name: held.name,
        email: held.email,
        phones,
        identity_last4,
    })
}

/// Purchases keep their codes, amounts, statuses and times; their
/// recipients, the product details that name or number someone, what the
/// supplier delivered, and their webhook bodies and attempts are erased.
async fn erase_purchases<T: Tx>(
    tx: &T,
    account: AccountId,
    tombstone: &str,
) -> Result<u64, T::Error> {
    let id = account.to_string();
    let params: [&dyn Param; 2] = [&id, &tombstone];
    let purchases = tx
        .execute(
            "UPDATE transactions SET recipient = ?2, details = '{}', result = '{}'
             WHERE account_id = ?1",
            &params,
        )
        .await?;
    tx.execute(
        "UPDATE webhook_attempts SET url = NULL, response_excerpt = '',
                error = CASE WHEN error IS NULL THEN NULL ELSE 'erased' END
         WHERE event_id IN (SELECT id FROM events WHERE account_id = ?1)",
        &[&id],
    )
    .await?;
    tx.execute(
        "UPDATE events SET payload = '{\"erased\":true}',
                status = CASE WHEN status = 'pending' THEN 'skipped' ELSE status END
         WHERE account_id = ?1",
        &[&id],
    )
    .await?;
    Ok(purchases)
}

/// Notices keep their kind, channel, status and times; their address,
/// contents and errors (which may quote the address) are erased, and any
/// notice still queued is not sent. The erased address is suppressed, so a
/// later cause (a transfer to its old bank account) writes no notice to it.
async fn erase_messages<T: Tx>(
    tx: &T,
    account: AccountId,
    person: &Person,
    tombstone: &str,
    erasure: &mut Erasure,
) -> Result<(), T::Error> {
    let id = account.to_string();
    let mut addresses = person.phones.clone();
    addresses.push(person.email.clone());
    let params: [&dyn Param; 2] = [&id, &tombstone];
    erasure.notices = tx
        .execute(
            "UPDATE notices SET recipient = ?2, data = '{}',
                    last_error = CASE WHEN last_error IS NULL THEN NULL ELSE 'erased' END,
                    status = CASE WHEN status = 'queued' THEN 'failed' ELSE status END
             WHERE account_id = ?1",
            &params,
        )
        .await?;
    for address in &addresses {
        let params: [&dyn Param; 2] = [&address, &tombstone];
        erasure.notices += tx
            .execute(
                "UPDATE notices SET recipient = ?2, data = '{}',
                        last_error = CASE WHEN last_error IS NULL THEN NULL ELSE 'erased' END,
                        status = CASE WHEN status = 'queued' THEN 'failed' ELSE status END
                 WHERE lower(recipient) = lower(?1)",
                &params,
            )
            .await?;
        tx.execute(
            "DELETE FROM notice_suppressions WHERE lower(recipient) = lower(?1)",
            &[&address],
        )
        .await?;
    }
    let params: [&dyn Param; 2] = [&tombstone, &now_rfc3339()];
    tx.execute(
        "INSERT INTO notice_suppressions (channel, recipient, reason, created_at)
         VALUES ('email', ?1, 'account erased', ?2) ON CONFLICT DO NOTHING",
        &params,
    )
    .await?;
    Ok(())
}

/// The account row keeps its id, status, balance and times; what only
/// served the person is deleted; keys are revoked and lose their names and
/// webhooks; reserved bank accounts and payments keep their numbers and
/// amounts, not the names on them.
async fn erase_profile<T: Tx>(
    tx: &T,
    account: AccountId,
    tombstone: &str,
    erasure: &mut Erasure,
) -> Result<(), T::Error> {
    let id = account.to_string();
    let params: [&dyn Param; 2] = [&id, &tombstone];
    tx.execute(
        "UPDATE accounts SET name = ?2, email = ?2, phone = NULL, password_hash = NULL
         WHERE id = ?1",
        &params,
    )
    .await?;
    erasure.keys = tx
        .execute(
            "UPDATE api_keys SET status = 'revoked', name = NULL, webhook_url = NULL,
                    webhook_secret_sealed = NULL
             WHERE account_id = ?1",
            &[&id],
        )
        .await?;
    tx.execute(
        "UPDATE funding_accounts SET account_name = ?2 WHERE account_id = ?1",
        &params,
    )
    .await?;
    tx.execute(
        "UPDATE funding_events SET payer = CASE WHEN payer IS NULL THEN NULL ELSE ?2 END
         WHERE account_id = ?1",
        &params,
    )
    .await?;
    for personal in PERSONAL_DATA.iter().filter(|p| p.erased == Deleted) {
        let sql = format!("DELETE FROM {} WHERE account_id = ?1", personal.table);
        let deleted = tx.execute(&sql, &[&id]).await?;
        if personal.table == "beneficiaries" {
            erasure.beneficiaries = deleted;
        }
    }
    // Limits (issue 32): the usage rows naming recipients are deleted above;
    // the KYC record keeps its level, method and who set it, not the last 4
    // digits or the operator's words about the person. A blocked recipient
    // stays blocked (fraud control outlives the customer), an entry blocking
    // this account loses its reason.
    tx.execute(
        "UPDATE account_kyc SET last4 = NULL, reason = '[erased]' WHERE account_id = ?1",
        &[&id],
    )
    .await?;
    tx.execute(
        "UPDATE blocklist SET reason = '[erased]' WHERE kind = 'account' AND value = ?1",
        &[&id],
    )
    .await?;
    Ok(())
}

/// The operator log's text that names the person becomes `[erased]` (the
/// only change its trigger allows): lines about the account that hold its
/// name, email or a phone, and any other line that holds its email or a
/// phone. Who did what, when and to which subject stays.
async fn redact_log<T: Tx>(tx: &T, account: AccountId, person: &Person) -> Result<u64, T::Error> {
    let mut everywhere: Vec<String> = person.phones.iter().map(|p| p.to_lowercase()).collect();
    everywhere.push(person.email.to_lowercase());
    let mut about_account = everywhere.clone();
    about_account.push(person.name.to_lowercase());
    // `billpay kyc set-level` logs "level 1 (bvn ending 1234)".
    about_account.extend(person.identity_last4.iter().map(|l| format!("ending {l}")));
    const COLUMNS: &str = "id, subject, before_state, after_state, reason";
    let sql = "SELECT id, subject, before_state, after_state, reason FROM operator_log
               WHERE subject = ?1
                  OR lower(COALESCE(before_state, '') || ' ' || COALESCE(after_state, '') || ' '
                           || COALESCE(reason, '')) LIKE ?2";
    let (id, pattern) = (
        account.to_string(),
        format!("%{}%", person.email.to_lowercase()),
    );
    let params: [&dyn Param; 2] = [&id, &pattern];
    let mut lines = tx
        .query_all(sql, &params, |row| {
            let texts: [Option<String>; 3] = [
                row.get(col!("before_state"))?,
                row.get(col!("after_state"))?,
                row.get(col!("reason"))?,
            ];
            let subject: String = row.get(col!("subject"))?;
            Ok((row.get::<i64>(col!("id"))?, subject, texts))
        })
        .await?;
    for phone in &person.phones {
        let pattern = format!("%{}%", phone.to_lowercase());
        let params: [&dyn Param; 2] = [&id, &pattern];
        let sql = "SELECT id, subject, before_state, after_state, reason FROM operator_log
                   WHERE subject <> ?1
                     AND lower(COALESCE(before_state, '') || ' ' || COALESCE(after_state, '')
                               || ' ' || COALESCE(reason, '')) LIKE ?2";
        lines.extend(
            tx.query_all(sql, &params, |row| {
                let texts: [Option<String>; 3] = [
                    row.get(col!("before_state"))?,
                    row.get(col!("after_state"))?,
                    row.get(col!("reason"))?,
                ];
                Ok((
                    row.get::<i64>(col!("id"))?,
                    row.get(col!("subject"))?,
                    texts,
                ))
            })
            .await?,
        );
    }
    let mut redacted = 0;
    for (line, subject, texts) in lines {
        let terms = if subject == id {
            &about_account
        } else {
            &everywhere
        };
        let names = |text: &Option<String>| {
            text.as_deref().is_some_and(|t| {
                let t = t.to_lowercase();
                terms
                    .iter()
                    .any(|term| !term.is_empty() && t.contains(term))
            })
        };
        let [before, after, reason] = [&texts[0], &texts[1], &texts[2]].map(names);
        if !(before || after || reason) {
            continue;
        }
        let sql = "UPDATE operator_log SET
                       before_state = CASE WHEN ?2 = 1 THEN '[erased]' ELSE before_state END,
                       after_state = CASE WHEN ?3 = 1 THEN '[erased]' ELSE after_state END,
                       reason = CASE WHEN ?4 = 1 THEN '[erased]' ELSE reason END
                   WHERE id = ?1";
        let [before, after, reason] = [before, after, reason].map(i32::from);
        let params: [&dyn Param; 4] = [&line, &before, &after, &reason];
        redacted += tx.execute(sql, &params).await?;
    }
    Ok(redacted)
}

async fn ledger_after<T: ReadTx>(
    tx: &T,
    account: AccountId,
    after_id: i64,
    limit: u32,
) -> Result<Vec<LedgerEntry>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {LEDGER_COLUMNS} FROM ledger WHERE account_id = ?1 AND id > ?2
             ORDER BY id LIMIT CAST(?3 AS BIGINT)"
        )
    });
    let params: [&dyn Param; 3] = [&account.to_string(), &after_id, &i64::from(limit)];
    tx.query_all(&SQL, &params, ledger_entry).await
}

/// Oldest first, by (created_at, code): the `transactions_account` index.
async fn purchases_after<T: ReadTx>(
    tx: &T,
    account: AccountId,
    after: Option<&PurchaseCursor>,
    limit: u32,
) -> Result<Vec<PurchaseRecord>, T::Error> {
    const COLUMNS: &str = "code, reference, product, provider, label, recipient, amount, \
                           face_value, status, message, created_at, completed_at";
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {COLUMNS} FROM transactions
             WHERE account_id = ?1 AND (created_at > ?2 OR (created_at = ?2 AND code > ?3))
             ORDER BY created_at, code LIMIT CAST(?4 AS BIGINT)"
        )
    });
    let (from, code) = after.map_or((String::new(), String::new()), |c| {
        (c.created_at.clone(), c.code.clone())
    });
    let params: [&dyn Param; 4] = [&account.to_string(), &from, &code, &i64::from(limit)];
    tx.query_all(&SQL, &params, |row| {
        Ok(PurchaseRecord {
            code: row.get(col!("code"))?,
            reference: row.get(col!("reference"))?,
            product: row.get(col!("product"))?,
            provider: row.get(col!("provider"))?,
            label: row.get(col!("label"))?,
            recipient: row.get(col!("recipient"))?,
            amount: row.get(col!("amount"))?,
            face_value: row.get(col!("face_value"))?,
            status: row.get(col!("status"))?,
            message: row.get(col!("message"))?,
            created_at: row.get(col!("created_at"))?,
            completed_at: row.get(col!("completed_at"))?,
        })
    })
    .await
}

async fn beneficiaries_of<T: ReadTx>(
    tx: &T,
    account: AccountId,
) -> Result<Vec<Beneficiary>, T::Error> {
    let sql = format!(
        "SELECT {} FROM beneficiaries WHERE account_id = ?1 ORDER BY product, nickname, recipient",
        super::beneficiaries::BENEFICIARY
    );
    tx.query_all(
        &sql,
        &[&account.to_string()],
        super::beneficiaries::beneficiary,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables this file's statements change (`UPDATE t`, `DELETE FROM t`).
    fn changed_here() -> std::collections::BTreeSet<String> {
        let source = include_str!("privacy.rs");
        let code = &source[..source.find("#[cfg(test)]").unwrap()];
        let mut tables = std::collections::BTreeSet::new();
        for verb in ["UPDATE ", "DELETE FROM "] {
            for (at, _) in code.match_indices(verb) {
                let name: String = code[at + verb.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    tables.insert(name);
                }
            }
        }
        tables
    }

    #[test]
    fn erasure_changes_exactly_the_tables_its_list_says_it_masks() {
        let changed = changed_here();
        for personal in PERSONAL_DATA {
            if personal.erased == Masked {
                assert!(
                    changed.contains(personal.table),
                    "{} is listed as masked but no statement here changes it",
                    personal.table
                );
            }
        }
        for table in &changed {
            // the erasure's own record
            if table == "account_closures" {
                continue;
            }
            let listed = PERSONAL_DATA.iter().find(|p| p.table == table);
            assert!(
                listed.is_some_and(|p| p.erased == Masked),
                "erasure changes {table}: list it in PERSONAL_DATA as Masked"
            );
        }
    }
}
