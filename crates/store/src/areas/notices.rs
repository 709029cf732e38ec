//! The notification outbox (issue 30): a notice is added in the same
//! transaction as its cause ([`enqueue`], or [`for_account`] for a customer
//! notice the customer may have turned off), then claimed under a lease and
//! sent by the worker, which records each send ([`NoticeOutcome`]).
//!
//! An address a provider refused for good is suppressed: a notice to it is
//! written `failed` at once (the console shows why) until an operator resends one.

use crate::clock::{new_code, now_ms, now_rfc3339};
use crate::db::{
    Column, One, Param, PerEngine, ReadTx, RowRead, Statements, Tx, col, for_both_engines,
};
use crate::listing::{Filters, Listing};
use crate::*;
use billpay_domain::{AccountId, Kobo, TxStatus};
use std::sync::LazyLock;
use std::time::Duration;

for_both_engines! {
    /// The notification outbox: notices written with their cause, sent by the worker.
    pub trait NoticeStore {
        /// Adds a notice on its own (a cause with no other change, such as a
        /// test message); `false` when one for that cause and channel exists.
        fn enqueue_notice(#[sealed] notice: NewNotice) -> bool = write |tx| enqueue(tx, &notice);
        /// Leases up to `limit` due notices of `channels` (the ones the worker can send: `email`,
        /// `sms`; PostgreSQL: skipping those another node is claiming), each counted as one more
        /// attempt. A notice of another channel is left queued, for a node that has that channel
        /// (or this one, once configured).
        fn claim_notices(channels: Vec<String> => channels, limit: u32, lease: Duration) -> Vec<Notice>
            = claim opened |tx| claim(tx, &channels, limit, lease);
        /// How a send went; a notice no longer queued is left as it is. A
        /// [`NoticeOutcome::Refused`] also suppresses its address.
        fn record_notice(id: &str, outcome: NoticeOutcome) -> ()
            = write |tx| record(tx, &id, &outcome);
        /// Newest first.
        fn notices(filter: NoticeFilter) -> Vec<Notice> = read |tx| list(tx, &filter);
        fn notice(id: &str) -> Option<Notice> = read |tx| find(tx, &id);
        /// Queues it to be sent again now, lifting a suppression of its address;
        /// refused with [`StoreError::DeliveryInProgress`] while a send holds it.
        fn requeue_notice(id: &str) -> () = write |tx| requeue(tx, &id);
        /// The customer's choices of optional notices (the defaults if never set).
        fn notice_preferences(account: AccountId) -> NoticePreferences
            = read |tx| preferences(tx, account);
        /// Every choice but the phone (`choices.phone` is ignored): that is set only
        /// by its proof ([`NoticeStore::check_phone_code`]).
        fn set_notice_preferences(account: AccountId, choices: NoticePreferences) -> ()
            = write |tx| set_preferences(tx, account, &choices);
        /// A fresh code (replacing any) proving `phone` (`234XXXXXXXXXX`) for
        /// `account`, sent to it by SMS with the code's notice; `false`, nothing
        /// written, when codes went to this number or for this account too often
        /// this hour (the bound of `phone_verification`: [`hourly_bound`]).
        fn start_phone_proof(account: AccountId, phone: &str, #[sealed] code: EmailCode) -> bool
            = write |tx| start_phone_proof(tx, account, &phone, &code);
        /// One try of a phone code: counted atomically, at most `max_attempts` per
        /// code. Right: the phone becomes the one SMS notices go to.
        fn check_phone_code(account: AccountId, code_hash: String, max_attempts: u32) -> PhoneCheck
            = write |tx| check_phone_code(tx, account, &code_hash, max_attempts);
        /// The phone a live code was sent to, not yet proven.
        fn pending_phone(account: AccountId) -> Option<String>
            = read |tx| pending_phone(tx, account);
        /// Tells the customer of a purchase held for review that it is held,
        /// and that it is refunded if no one reviews it by `until` (RFC 3339):
        /// once per purchase (its cause), however often it is asked.
        fn notice_purchase_held(code: &str, until: &str) -> ()
            = write |tx| purchase_held(tx, &code, &until);
        /// Whether [`NoticeStore::watch_low_balances`] has anything to do (a read).
        fn low_balance_due() -> bool = read |tx| super::low_balance::pending(tx);
        /// The low-balance watch (`areas/low_balance.rs`), edge-triggered: arms again each watch
        /// whose balance is back at or above its mark, and tells up to `limit` customers with an
        /// armed watch under their mark (disarming it), once per episode. Answers the accounts
        /// told.
        fn watch_low_balances(limit: u32) -> Vec<AccountId>
            = write |tx| super::low_balance::watch(tx, limit);
    }
}

const COLUMNS: &str = "id, cause, kind, channel, recipient, account_id, operator_id, data, \
     status, attempts, next_attempt_at, last_error, provider, provider_id, created_at, sent_at";

fn notice(row: &dyn RowRead) -> StoreResult<Notice> {
    let account_id = row.parsed_opt(col!("account_id"))?;
    Ok(Notice {
        id: row.get(col!("id"))?,
        cause: row.get(col!("cause"))?,
        kind: row.get(col!("kind"))?,
        channel: row.get(col!("channel"))?,
        recipient: row.get(col!("recipient"))?,
        account_id,
        operator_id: row.get(col!("operator_id"))?,
        data: row.json(col!("data"))?,
        status: row.parsed(col!("status"))?,
        attempts: row.get(col!("attempts"))?,
        next_attempt_at_ms: row.get(col!("next_attempt_at"))?,
        last_error: row.get(col!("last_error"))?,
        provider: row.get(col!("provider"))?,
        provider_id: row.get(col!("provider_id"))?,
        created_at: row.get(col!("created_at"))?,
        sent_at: row.get(col!("sent_at"))?,
    })
}

/// The insert both kinds of enqueue share: `?1`…`?8` the notice, `{source}`
/// the query answering its `recipient` and `account_id` (none: no notice).
/// A suppressed address gets the notice already `failed`, saying why.
fn insert_from(source: &str) -> String {
    format!(
        "INSERT INTO notices (id, cause, kind, channel, recipient, account_id, operator_id,
             data, status, last_error, next_attempt_at, created_at)
         SELECT CAST(?1 AS TEXT), CAST(?2 AS TEXT), CAST(?3 AS TEXT), CAST(?4 AS TEXT),
             r.recipient, r.account_id, CAST(?5 AS TEXT), CAST(?6 AS TEXT),
             CASE WHEN s.recipient IS NULL THEN 'queued' ELSE 'failed' END,
             CASE WHEN s.recipient IS NULL THEN NULL
                  ELSE 'not sent: this address was refused before (' || s.reason || ')' END,
             CAST(?7 AS BIGINT), CAST(?8 AS TEXT)
         FROM ({source}) r
         LEFT JOIN notice_suppressions s ON s.channel = ?4 AND s.recipient = r.recipient
         WHERE r.recipient IS NOT NULL
         ON CONFLICT (cause, channel) DO NOTHING"
    )
}

/// How many notices of `kind` may be queued in one clock hour for one
/// account (per channel) and for one destination (an address or a phone),
/// whatever caused them: docs/notifications.md. The excess is dropped and
/// counted in `billpay_notices_dropped_total{kind, channel}`.
pub fn hourly_bound(kind: &str) -> u32 {
    match kind {
        "phone_verification" | "account_exists" | "low_balance" => 3,
        "email_verification" | "password_reset" | "pin_reset" => 5,
        "api_key_created" | "webhook_url_changed" => 5,
        "funding_credited" | "purchase_refunded" => 60,
        "purchase_held" | "purchase_released" => 60,
        "schedule_skipped" | "schedule_stopped" => 60,
        "referral_commission" | "referral_bonus_moved" => 60,
        "purchase_receipt" => 120,
        operator if operator.starts_with("operator_") => 30,
        _ => 10,
    }
}

/// The clock hour a notice queued now is counted in.
pub(crate) fn notice_hour() -> i64 {
    now_ms().div_euclid(3_600_000)
}

/// The scopes a notice is counted in: its account's (per channel), if it
/// has one, then its destination's — the address or phone as its SHA-256
/// (hex), so the counts hold no personal data an erasure would have to find.
fn count_scopes(notice: &NewNotice) -> Vec<String> {
    let (channel, kind) = (&notice.channel, &notice.kind);
    let account = notice
        .account_id
        .map(|a| format!("account:{a}:{channel}:{kind}"));
    let recipient = billpay_domain::keys::hash_api_key(&notice.recipient.to_lowercase());
    let destination = format!("{channel}:{recipient}:{kind}");
    account.into_iter().chain([destination]).collect()
}

/// What became of a notice offered to the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queued {
    Added,
    /// One for the same cause and channel is there already.
    Exists,
    /// Over its hourly bound ([`hourly_bound`]): dropped and counted.
    OverBound,
}

/// Adds `notice` to the outbox inside the caller's transaction; `false` when
/// a notice for the same cause and channel is already there, or when it is
/// over its hourly bound (dropped).
pub(crate) async fn enqueue<T: Tx>(tx: &T, notice: &NewNotice) -> Result<bool, T::Error> {
    Ok(add(tx, notice).await? == Queued::Added)
}

/// [`enqueue`], saying which of [`Queued`] it was. The notice is written,
/// then counted in each of its scopes by one conditional upsert (`… DO
/// UPDATE … WHERE sent < bound`): exact across nodes, as the row of a
/// scope's hour is locked by the first to count in it until it commits. A
/// notice over its bound is deleted again (its counts given back) and
/// counted as dropped.
pub(crate) async fn add<T: Statements>(tx: &T, notice: &NewNotice) -> Result<Queued, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        insert_from("SELECT CAST(?9 AS TEXT) AS recipient, CAST(?10 AS TEXT) AS account_id")
    });
    let account = notice.account_id.map(|a| a.to_string());
    let (id, data) = (new_code("NT"), notice.data.to_string());
    let params: [&dyn Param; 10] = [
        &id,
        &notice.cause,
        &notice.kind,
        &notice.channel,
        &notice.operator_id,
        &data,
        &now_ms(),
        &now_rfc3339(),
        &notice.recipient,
        &account,
    ];
    if tx.execute(&SQL, &params).await? != 1 {
        return Ok(Queued::Exists);
    }
    let count = "INSERT INTO notice_counts (scope, hour, sent) VALUES (?1, ?2, 1)
                 ON CONFLICT (scope, hour) DO UPDATE SET sent = notice_counts.sent + 1
                 WHERE notice_counts.sent < ?3";
    let give_back = "UPDATE notice_counts SET sent = sent - 1 WHERE scope = ?1 AND hour = ?2";
    // `sent` is an INTEGER: PostgreSQL binds it as `i32`.
    let bound = i32::try_from(hourly_bound(&notice.kind)).unwrap_or(i32::MAX);
    let hour = notice_hour();
    let mut counted: Vec<String> = Vec::new();
    for scope in count_scopes(notice) {
        if tx.execute(count, &[&scope, &hour, &bound]).await? == 1 {
            counted.push(scope);
            continue;
        }
        for scope in &counted {
            tx.execute(give_back, &[scope, &hour]).await?;
        }
        tx.execute("DELETE FROM notices WHERE id = ?1", &[&id])
            .await?;
        dropped(&notice.kind, &notice.channel, 1);
        return Ok(Queued::OverBound);
    }
    Ok(Queued::Added)
}

/// Counts `n` notices of `kind` by `channel` dropped over their hourly bound.
pub(crate) fn dropped(kind: &str, channel: &str, n: u64) {
    if n == 0 {
        return;
    }
    tracing::warn!(
        kind,
        channel,
        dropped = n,
        "notice over its hourly bound: dropped"
    );
    let labels = [("kind", kind.to_owned()), ("channel", channel.to_owned())];
    ::metrics::counter!("billpay_notices_dropped_total", &labels).increment(n);
}

/// Whose account a customer notice is for: `?1` is its id, or the code of
/// one of its transactions.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Owner<'a> {
    Account(AccountId),
    Transaction(&'a str),
}

/// Where a customer may be told anything but a code proving an address:
/// an address the account proved (or the operator gave when opening it).
pub(crate) const VERIFIED: &str = "(a.signed_up = 'operator' OR a.email_verified_at IS NOT NULL)";

/// A customer notice of `topic`, inside its cause's transaction, each
/// channel [`add`]ed (so bounded per hour). Only to an account whose email
/// is verified ([`VERIFIED`]): by email unless the customer turned it off
/// (security notices cannot be), by SMS if they turned it on and proved
/// their phone. Nothing is added for a channel they do not want.
pub(crate) async fn for_account<T: Statements>(
    tx: &T,
    owner: Owner<'_>,
    topic: NoticeTopic,
    kind: &str,
    cause: &str,
    data: &serde_json::Value,
) -> Result<(), T::Error> {
    let (key, account) = match owner {
        Owner::Account(id) => (id.to_string(), "?1"),
        Owner::Transaction(code) => (
            code.to_owned(),
            "(SELECT account_id FROM transactions WHERE code = ?1)",
        ),
    };
    let name = topic.as_str();
    let by_email = match topic {
        NoticeTopic::Security => "TRUE".to_owned(),
        _ => format!("COALESCE(p.{name}_email, TRUE)"),
    };
    let sql = format!(
        "SELECT a.id, a.email, {by_email},
             CASE WHEN p.phone_proven_at IS NOT NULL AND COALESCE(p.{name}_sms, FALSE)
                  THEN p.phone END
         FROM accounts a LEFT JOIN notice_preferences p ON p.account_id = a.id
         WHERE a.id = {account} AND {VERIFIED}"
    );
    let found = tx
        .query_opt(&sql, &[&key], |row| {
            Ok((
                row.parsed::<AccountId>(Column::nth(0))?,
                row.get::<String>(Column::nth(1))?,
                row.get::<bool>(Column::nth(2))?,
                row.get::<Option<String>>(Column::nth(3))?,
            ))
        })
        .await?;
    let Some((account, email, by_email, phone)) = found else {
        return Ok(());
    };
    let to = [("email", by_email.then_some(email)), ("sms", phone)];
    for (channel, recipient) in to {
        let Some(recipient) = recipient else { continue };
        let notice = NewNotice {
            cause: cause.to_owned(),
            kind: kind.to_owned(),
            channel: channel.to_owned(),
            recipient,
            account_id: Some(account),
            operator_id: None,
            data: data.clone(),
        };
        add(tx, &notice).await?;
    }
    Ok(())
}

/// Funding credited: the amount paid, the fee, and the balance now (read in
/// the credit's transaction). Once per payment (`funding:<id>`).
pub(crate) async fn funding_credited<T: Tx>(
    tx: &T,
    account: AccountId,
    funding_id: &str,
    amount: Kobo,
    fee: Kobo,
) -> Result<(), T::Error> {
    let balance = super::wallet::balance_of(tx, account).await?;
    let data = serde_json::json!({
        "funding": funding_id,
        "amount": amount.0,
        "fee": fee.0,
        "credited": amount.0 - fee.0,
        "balance": balance.0,
    });
    let cause = format!("funding:{funding_id}");
    let topic = NoticeTopic::Funding;
    for_account(
        tx,
        Owner::Account(account),
        topic,
        "funding_credited",
        &cause,
        &data,
    )
    .await
}

/// A purchase made final: a failed one's refund notice; a delivered token
/// or pins' receipt. The notice holds only the code: the worker reads the
/// transaction (whose pins are sealed at rest) when it sends.
pub(crate) async fn purchase_final<T: Statements>(
    tx: &T,
    code: &str,
    product: billpay_domain::Product,
    status: TxStatus,
) -> Result<(), T::Error> {
    let Some((topic, kind)) = purchase_notice(product, status) else {
        return Ok(());
    };
    let data = serde_json::json!({ "transaction": code });
    for_purchase(tx, code, topic, kind, &data).await
}

/// A held purchase's notice to its customer: held, and refunded if nobody
/// reviews it by `until`. The topic is the refunds' — a purchase that did
/// not go through as usual —, so a customer's choice for those applies.
pub(crate) async fn purchase_held<T: Tx>(tx: &T, code: &str, until: &str) -> Result<(), T::Error> {
    let data = serde_json::json!({ "transaction": code, "until": until });
    for_purchase(tx, code, NoticeTopic::Refund, "purchase_held", &data).await
}

/// A held purchase released by an owner: the customer is told it goes on.
pub(crate) async fn purchase_released<T: Tx>(tx: &T, code: &str) -> Result<(), T::Error> {
    let data = serde_json::json!({ "transaction": code });
    for_purchase(tx, code, NoticeTopic::Refund, "purchase_released", &data).await
}

/// A notice of `kind` about purchase `code` to its customer, once (its
/// cause, `purchase:<code>:<kind>`, is unique per channel).
async fn for_purchase<T: Statements>(
    tx: &T,
    code: &str,
    topic: NoticeTopic,
    kind: &str,
    data: &serde_json::Value,
) -> Result<(), T::Error> {
    let cause = format!("purchase:{code}:{kind}");
    for_account(tx, Owner::Transaction(code), topic, kind, &cause, data).await
}

/// Which notice a purchase that became `status` gets, if any.
pub fn purchase_notice(
    product: billpay_domain::Product,
    status: TxStatus,
) -> Option<(NoticeTopic, &'static str)> {
    use billpay_domain::Product::{Education, Electricity, Epin};
    match status {
        TxStatus::Failed => Some((NoticeTopic::Refund, "purchase_refunded")),
        TxStatus::Successful if matches!(product, Electricity | Epin | Education) => {
            Some((NoticeTopic::Receipt, "purchase_receipt"))
        }
        _ => None,
    }
}

async fn claim<T: Tx>(
    tx: One<'_, T>,
    channels: &[String],
    limit: u32,
    lease: Duration,
) -> Result<Vec<Notice>, T::Error> {
    // PostgreSQL: rows another node is claiming are skipped, not waited for.
    static SQL: PerEngine = PerEngine::new(|engine| {
        format!(
            "UPDATE notices SET lease_until = ?1, attempts = attempts + 1
             WHERE id IN (SELECT id FROM notices
                 WHERE status = 'queued' AND next_attempt_at <= ?2 AND lease_until <= ?2
                   AND channel IN (?4, ?5)
                 ORDER BY next_attempt_at LIMIT CAST(?3 AS BIGINT){})
             RETURNING {COLUMNS}",
            engine.skip_locked()
        )
    });
    let sql = SQL.sql(T::ENGINE);
    let now = now_ms();
    let until = now + lease.as_millis() as i64;
    // two channels at most (email, sms); a missing one matches no notice
    let channel = |i: usize| channels.get(i).cloned().unwrap_or_default();
    let (first, second) = (channel(0), channel(1));
    let params: [&dyn Param; 5] = [&until, &now, &i64::from(limit), &first, &second];
    let mut claimed = tx.query_all(sql, &params, notice).await?;
    claimed.sort_by_key(|n| n.next_attempt_at_ms);
    Ok(claimed)
}

async fn record<T: Tx>(tx: &T, id: &str, outcome: &NoticeOutcome) -> Result<(), T::Error> {
    let sql = "UPDATE notices SET status = ?2, provider = ?3, provider_id = ?4, last_error = ?5,
                   next_attempt_at = COALESCE(?6, next_attempt_at), sent_at = ?7, lease_until = 0
               WHERE id = ?1 AND status = 'queued'";
    let (status, provider, provider_id, error, at, sent_at) = match outcome.clone() {
        NoticeOutcome::Sent {
            provider,
            provider_id,
        } => (
            "sent",
            provider,
            provider_id,
            None,
            None,
            Some(now_rfc3339()),
        ),
        NoticeOutcome::Retry {
            provider,
            error,
            at_ms,
        } => ("queued", provider, None, Some(error), Some(at_ms), None),
        NoticeOutcome::Failed { provider, error } | NoticeOutcome::Refused { provider, error } => {
            ("failed", provider, None, Some(error), None, None)
        }
    };
    let params: [&dyn Param; 7] = [&id, &status, &provider, &provider_id, &error, &at, &sent_at];
    let changed = tx.execute(sql, &params).await?;
    if let (1, NoticeOutcome::Refused { error, .. }) = (changed, outcome) {
        let sql = "INSERT INTO notice_suppressions (channel, recipient, reason, created_at)
                   SELECT channel, recipient, ?2, ?3 FROM notices WHERE id = ?1
                   ON CONFLICT (channel, recipient) DO NOTHING";
        tx.execute(sql, &[&id, error, &now_rfc3339()]).await?;
    }
    Ok(())
}

async fn list<T: ReadTx>(tx: &T, filter: &NoticeFilter) -> Result<Vec<Notice>, T::Error> {
    let listing = listing(filter);
    tx.query_all(&listing.sql, &listing.params(), notice).await
}

/// The listing's statement: only the filters set (`crate::listing`).
pub(crate) fn listing(filter: &NoticeFilter) -> Listing {
    Filters::default()
        .and("status = ?", filter.status.map(NoticeStatus::as_str))
        .and("account_id = ?", filter.account_id.map(|a| a.to_string()))
        .and("channel = ?", filter.channel.clone())
        .and("kind = ?", filter.kind.clone())
        .page(
            &format!("SELECT {COLUMNS} FROM notices"),
            "ORDER BY created_at DESC, id DESC",
            filter.limit.max(1),
            Some(filter.offset),
        )
}

async fn find<T: ReadTx>(tx: &T, id: &str) -> Result<Option<Notice>, T::Error> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {COLUMNS} FROM notices WHERE id = ?1"));
    tx.query_opt(&SQL, &[&id], notice).await
}

pub(crate) async fn requeue<T: Tx>(tx: &T, id: &str) -> Result<(), T::Error> {
    // Not while a send holds it: that could send it twice at once.
    let sql = "UPDATE notices SET status = 'queued', next_attempt_at = ?1, attempts = 0,
                   sent_at = NULL, last_error = NULL
               WHERE id = ?2 AND lease_until <= ?1";
    let queued = tx.execute(sql, &[&now_ms(), &id]).await? > 0;
    let found = find(tx, id).await?;
    if let (true, Some(notice)) = (queued, &found) {
        let sql = "DELETE FROM notice_suppressions WHERE channel = ?1 AND recipient = ?2";
        tx.execute(sql, &[&notice.channel, &notice.recipient])
            .await?;
    }
    match (queued, found) {
        (true, _) => Ok(()),
        (false, None) => Err(StoreError::NotFound("notice").into()),
        (false, Some(_)) => Err(StoreError::DeliveryInProgress.into()),
    }
}

/// `phone, low_balance_below, funding_email, funding_sms, …` in
/// [`NoticeTopic::ALL`]'s order.
static PREFERENCE_COLUMNS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let topics = NoticeTopic::ALL.iter().map(|t| t.as_str());
    let choices = topics.flat_map(|t| [format!("{t}_email"), format!("{t}_sms")]);
    ["phone".to_owned(), "low_balance_below".to_owned()]
        .into_iter()
        .chain(choices)
        .collect()
});

async fn preferences<T: ReadTx>(tx: &T, account: AccountId) -> Result<NoticePreferences, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        // the phone only once proven: SMS goes nowhere else
        let columns = PREFERENCE_COLUMNS[1..].join(", ");
        format!(
            "SELECT CASE WHEN phone_proven_at IS NOT NULL THEN phone END AS phone, {columns}
             FROM notice_preferences WHERE account_id = ?1"
        )
    });
    let found = tx
        .query_opt(&SQL, &[&account.to_string()], |row| {
            let mut choices = NoticePreferences {
                phone: row.get(Column::nth(0))?,
                low_balance_below: row.get::<Option<Kobo>>(Column::nth(1))?,
                ..NoticePreferences::default()
            };
            for (i, topic) in NoticeTopic::ALL.into_iter().enumerate() {
                let default = choices.topic(topic);
                let email: Option<bool> = row.get(Column::nth(2 + 2 * i))?;
                let sms: Option<bool> = row.get(Column::nth(3 + 2 * i))?;
                let choice = TopicChoice {
                    email: email.unwrap_or(default.email),
                    sms: sms.unwrap_or(default.sms),
                };
                choices.set_topic(topic, choice);
            }
            Ok(choices)
        })
        .await?;
    Ok(found.unwrap_or_default())
}

async fn set_preferences<T: Tx>(
    tx: &T,
    account: AccountId,
    choices: &NoticePreferences,
) -> Result<(), T::Error> {
    // not the phone: it is set only by its proof (`prove_phone`)
    static SQL: LazyLock<String> = LazyLock::new(|| {
        let chosen = &PREFERENCE_COLUMNS[1..];
        let columns = chosen.join(", ");
        let values: Vec<String> = (3..chosen.len() + 3).map(|i| format!("?{i}")).collect();
        let updates: Vec<String> = chosen
            .iter()
            .map(|c| format!("{c} = excluded.{c}"))
            .collect();
        format!(
            "INSERT INTO notice_preferences (account_id, updated_at, {columns})
             VALUES (?1, ?2, {})
             ON CONFLICT (account_id) DO UPDATE SET updated_at = excluded.updated_at, {}",
            values.join(", "),
            updates.join(", ")
        )
    });
    super::wallet::balance_of(tx, account).await?; // the account must exist
    let (id, now) = (account.to_string(), now_rfc3339());
    let below = choices.low_balance_below.map(|k| k.0);
    let flags: Vec<bool> = choices
        .topics
        .iter()
        .flat_map(|c| [c.email, c.sms])
        .collect();
    let mut params: Vec<&dyn Param> = vec![&id, &now, &below];
    params.extend(flags.iter().map(|f| f as &dyn Param));
    tx.execute(&SQL, &params).await?;
    Ok(())
}

/// Replaces the account's phone code (its tries start at zero) and queues
/// its SMS; nothing is written when that SMS is over its hourly bound.
async fn start_phone_proof<T: Tx>(
    tx: &T,
    account: AccountId,
    phone: &str,
    code: &EmailCode,
) -> Result<bool, T::Error> {
    let notice = NewNotice {
        channel: "sms".into(),
        ..code.notice.addressed(phone, account, new_code("phone:"))
    };
    if add(tx, &notice).await? != Queued::Added {
        return Ok(false);
    }
    super::account_care::PHONE_CODES
        .save(tx, account, phone, code)
        .await?;
    Ok(true)
}

/// One try of a phone code (`account_care::CodeTable::try_code`, as an email
/// code's); a right one makes the phone it proves the account's phone for
/// SMS, proven now.
async fn check_phone_code<T: Tx>(
    tx: &T,
    account: AccountId,
    code_hash: &str,
    max_attempts: u32,
) -> Result<PhoneCheck, T::Error> {
    use super::account_care::{CodeTry, PHONE_CODES};
    let phone = match PHONE_CODES
        .try_code(tx, account, code_hash, max_attempts)
        .await?
    {
        CodeTry::NoCode => return Ok(PhoneCheck::NoCode),
        CodeTry::Wrong { left } => return Ok(PhoneCheck::Wrong { left }),
        CodeTry::Right { address } => address,
    };
    let id = account.to_string();
    let proven = "INSERT INTO notice_preferences (account_id, updated_at, phone, phone_proven_at)
                  VALUES (?1, ?2, ?3, ?2)
                  ON CONFLICT (account_id) DO UPDATE SET updated_at = excluded.updated_at,
                      phone = excluded.phone, phone_proven_at = excluded.phone_proven_at";
    tx.execute(proven, &[&id, &now_rfc3339(), &phone]).await?;
    Ok(PhoneCheck::Proven { phone })
}

async fn pending_phone<T: ReadTx>(tx: &T, account: AccountId) -> Result<Option<String>, T::Error> {
    let sql = "SELECT phone FROM phone_codes WHERE account_id = ?1 AND expires_at > ?2";
    tx.query_opt(sql, &[&account.to_string(), &now_ms()], |row| {
        row.get(Column::nth(0))
    })
    .await
}
