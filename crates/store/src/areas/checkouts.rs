//! Pay now through a gateway's hosted checkout (issue 31): the checkouts
//! billpay initialized, by reference, with whose they are and what was agreed
//! (the amount the customer pays, the operator's fee on it). The money itself
//! is credited as a funding event (`record_funding`, once per gateway and
//! reference): a checkout's status only follows it. Also the identity number
//! a gateway was given to reserve accounts, as its last 4 digits only.

use crate::clock::now_rfc3339;
use crate::db::{One, ReadTx, RowRead, Tx, col, for_both_engines};
use crate::model::text_enum;
use crate::*;
use billpay_domain::{AccountId, Kobo};
use serde::Serialize;
use std::str::FromStr;

/// Where a checkout stands: `open` until its payment is credited, the
/// gateway says it failed, or it is still unpaid a day on (`abandoned`: the
/// reconciler stops asking; a payment that still comes is credited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckoutStatus {
    Open,
    Credited,
    Failed,
    Abandoned,
}

text_enum!(CheckoutStatus { Open = "open", Credited = "credited", Failed = "failed", Abandoned = "abandoned" });

#[derive(Debug, Clone)]
pub struct NewCheckout {
    /// Ours, sent to the gateway as its reference too: unique.
    pub reference: String,
    pub account_id: AccountId,
    pub gateway: String,
    /// What the customer pays.
    pub amount: Kobo,
    /// The operator's fee on it (less than `amount`).
    pub fee: Kobo,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checkout {
    pub reference: String,
    pub account_id: AccountId,
    pub gateway: String,
    pub amount: Kobo,
    pub fee: Kobo,
    pub status: CheckoutStatus,
    pub created_at: String,
    pub updated_at: String,
}

impl Checkout {
    /// What the wallet receives when it is paid as agreed.
    pub fn credit(&self) -> Kobo {
        Kobo(self.amount.0 - self.fee.0)
    }
}

/// The identity number (BVN or NIN) a gateway was given: its last 4 digits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReservationIdentity {
    pub account_id: AccountId,
    pub gateway: String,
    /// `bvn` or `nin`.
    pub kind: String,
    pub last4: String,
    /// `accepted` or `refused` (by the gateway).
    pub state: String,
}

for_both_engines! {
    /// Pay now through a gateway's hosted checkout, and the identity numbers
    /// (last 4 digits) given to reserve accounts (`areas/checkouts.rs`).
    pub trait CheckoutStore {
        /// Stores a new checkout, `open`; a reference already used is refused.
        fn create_checkout(new: NewCheckout) -> Checkout = write |tx| create(tx, &new);
        fn checkout(reference: &str) -> Option<Checkout> = read |tx| find(tx, &reference);
        /// `open` checkouts of `gateway` created at or after `since` (RFC 3339), oldest first.
        fn open_checkouts(gateway: &str, since: &str) -> Vec<Checkout>
            = read |tx| open_since(tx, &gateway, &since);
        /// The latest checkouts of an account, newest first.
        fn account_checkouts(account: AccountId, limit: u32) -> Vec<Checkout>
            = read |tx| of_account(tx, account, limit);
        /// Moves an `open` checkout to `status` (an `abandoned` one only to
        /// `credited`: its payment came after all); `false` when it did not move.
        fn close_checkout(reference: &str, status: CheckoutStatus) -> bool
            = statement |tx| close(tx, &reference, status);
        /// Keeps (replacing) the last 4 digits given to a gateway and its answer.
        fn save_reservation_identity(identity: ReservationIdentity) -> ()
            = statement |tx| save_identity(tx, &identity);
        fn reservation_identity(account: AccountId, gateway: &str) -> Option<ReservationIdentity>
            = read |tx| find_identity(tx, account, &gateway);
    }
}

const COLUMNS: &str = "reference, account_id, gateway, amount, fee, status, created_at, updated_at";

fn read_checkout(row: &dyn RowRead) -> StoreResult<Checkout> {
    let account: String = row.get(col!("account_id"))?;
    Ok(Checkout {
        reference: row.get(col!("reference"))?,
        account_id: AccountId::from_str(&account)
            .map_err(|e| StoreError::caused_in(format!("checkout account {account}"), e))?,
        gateway: row.get(col!("gateway"))?,
        amount: row.get(col!("amount"))?,
        fee: row.get(col!("fee"))?,
        status: row.parsed(col!("status"))?,
        created_at: row.get(col!("created_at"))?,
        updated_at: row.get(col!("updated_at"))?,
    })
}

async fn create<T: Tx>(tx: &T, new: &NewCheckout) -> Result<Checkout, T::Error> {
    if new.amount.0 <= 0 || new.fee.0 < 0 || new.fee.0 >= new.amount.0 {
        let why = "a checkout's amount must be positive and more than its fee";
        return Err(StoreError::Invalid(why.into()).into());
    }
    let sql = "INSERT INTO checkouts
                   (reference, account_id, gateway, amount, fee, status, created_at, updated_at)
               VALUES (?1, ?2, ?3, ?4, ?5, 'open', ?6, ?6)
               ON CONFLICT (reference) DO NOTHING";
    let (account, now) = (new.account_id.to_string(), now_rfc3339());
    let params: [&dyn crate::db::Param; 6] = [
        &new.reference,
        &account,
        &new.gateway,
        &new.amount.0,
        &new.fee.0,
        &now,
    ];
    if tx.execute(sql, &params).await? == 0 {
        return Err(Refusal::DuplicateReference.into());
    }
    let found = find(tx, &new.reference).await?;
    found.ok_or_else(|| StoreError::NotFound("checkout").into())
}

async fn find<T: ReadTx>(tx: &T, reference: &str) -> Result<Option<Checkout>, T::Error> {
    let sql = format!("SELECT {COLUMNS} FROM checkouts WHERE reference = ?1");
    tx.query_opt(&sql, &[&reference], read_checkout).await
}

async fn open_since<T: ReadTx>(
    tx: &T,
    gateway: &str,
    since: &str,
) -> Result<Vec<Checkout>, T::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM checkouts
         WHERE status = 'open' AND gateway = ?1 AND created_at >= ?2
         ORDER BY created_at, reference LIMIT 500"
    );
    tx.query_all(&sql, &[&gateway, &since], read_checkout).await
}

async fn of_account<T: ReadTx>(
    tx: &T,
    account: AccountId,
    limit: u32,
) -> Result<Vec<Checkout>, T::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM checkouts WHERE account_id = ?1
         ORDER BY created_at DESC, reference DESC LIMIT CAST(?2 AS BIGINT)"
    );
    let (account, limit) = (account.to_string(), i64::from(limit));
    tx.query_all(&sql, &[&account, &limit], read_checkout).await
}

async fn close<T: Tx>(
    tx: One<'_, T>,
    reference: &str,
    status: CheckoutStatus,
) -> Result<bool, T::Error> {
    let sql = "UPDATE checkouts SET status = ?2, updated_at = ?3
               WHERE reference = ?1
                 AND (status = 'open' OR (status = 'abandoned' AND ?2 = 'credited'))";
    let changed = tx
        .execute(sql, &[&reference, &status.as_str(), &now_rfc3339()])
        .await?;
    Ok(changed == 1)
}

async fn save_identity<T: Tx>(
    tx: One<'_, T>,
    identity: &ReservationIdentity,
) -> Result<(), T::Error> {
    let last4_ok = identity.last4.len() == 4 && identity.last4.bytes().all(|b| b.is_ascii_digit());
    if !last4_ok {
        return Err(StoreError::Invalid("only the last 4 digits are kept".into()).into());
    }
    let sql = "INSERT INTO reservation_identities
                   (account_id, gateway, kind, last4, state, updated_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6)
               ON CONFLICT (account_id, gateway) DO UPDATE SET
                   kind = excluded.kind, last4 = excluded.last4,
                   state = excluded.state, updated_at = excluded.updated_at";
    let account = identity.account_id.to_string();
    let params: [&dyn crate::db::Param; 6] = [
        &account,
        &identity.gateway,
        &identity.kind,
        &identity.last4,
        &identity.state,
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    Ok(())
}

async fn find_identity<T: ReadTx>(
    tx: &T,
    account: AccountId,
    gateway: &str,
) -> Result<Option<ReservationIdentity>, T::Error> {
    const COLUMNS: &str = "kind, last4, state";
    let sql = "SELECT kind, last4, state FROM reservation_identities
               WHERE account_id = ?1 AND gateway = ?2";
    let account_text = account.to_string();
    tx.query_opt(sql, &[&account_text, &gateway], |row| {
        Ok(ReservationIdentity {
            account_id: account,
            gateway: gateway.to_owned(),
            kind: row.get(col!("kind"))?,
            last4: row.get(col!("last4"))?,
            state: row.get(col!("state"))?,
        })
    })
    .await
}
