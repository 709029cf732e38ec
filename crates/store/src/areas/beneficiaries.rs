//! Saved recipients of the shop (issue 31): a phone, meter, smartcard or
//! betting id with the customer's nickname for it, per product, with every
//! field of the purchase it was saved from (provider, meter type, plan,
//! phone, amount: migration `035_beneficiary_fields`), so it is bought again
//! as it was; and the last recipients an account bought a product for, read
//! from its purchases with the same fields.

use crate::clock::{new_code, now_rfc3339};
use crate::db::{One, Param, ReadTx, RowRead, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::{AccountId, Kobo, Product, PurchaseDetails};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beneficiary {
    pub id: String,
    pub product: Product,
    pub recipient: String,
    pub nickname: String,
    /// What buying for it again fills in.
    pub refill: Refill,
}

/// What a purchase for a recipient is made again with: its provider, the
/// product's own fields as the purchase stored them (meter type, plan,
/// phone…) and, where the buyer chose it, the amount. A recipient saved
/// before these were kept has an empty provider and no fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refill {
    pub recipient: String,
    pub provider: String,
    pub details: PurchaseDetails,
    /// The face value bought (airtime, electricity, betting: the amount asked).
    pub amount: Option<Kobo>,
}

#[derive(Debug, Clone)]
pub struct NewBeneficiary {
    pub account_id: AccountId,
    pub product: Product,
    pub nickname: String,
    pub refill: Refill,
}

for_both_engines! {
    /// The shop's saved recipients (`areas/beneficiaries.rs`).
    pub trait BeneficiaryStore {
        /// Saving a recipient already saved renames it.
        fn save_beneficiary(new: NewBeneficiary) -> Beneficiary = write |tx| save(tx, &new);
        /// The account's saved recipients of `product`, by nickname.
        fn beneficiaries(account: AccountId, product: Product) -> Vec<Beneficiary>
            = read |tx| saved(tx, account, product);
        /// `false` when the account has no such beneficiary.
        fn delete_beneficiary(account: AccountId, id: &str) -> bool
            = statement |tx| delete(tx, account, &id);
        /// The last `limit` different recipients `account` bought `product`
        /// for, newest first, each with its latest purchase's fields.
        fn recent_recipients(account: AccountId, product: Product, limit: u32) -> Vec<Refill>
            = read |tx| recent(tx, account, product, limit);
    }
}

async fn save<T: Tx>(tx: &T, new: &NewBeneficiary) -> Result<Beneficiary, T::Error> {
    let sql = "INSERT INTO beneficiaries
                   (id, account_id, product, recipient, nickname, created_at, provider, details, amount)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
               ON CONFLICT (account_id, product, recipient) DO UPDATE
                   SET nickname = excluded.nickname, provider = excluded.provider,
                       details = excluded.details, amount = excluded.amount";
    let (id, account) = (new_code("BN"), new.account_id.to_string());
    let refill = &new.refill;
    let amount = refill.amount.map(|a| a.0);
    let params: [&dyn Param; 9] = [
        &id,
        &account,
        &new.product.service(),
        &refill.recipient,
        &new.nickname,
        &now_rfc3339(),
        &refill.provider,
        &refill.details.to_json(),
        &amount,
    ];
    tx.execute(sql, &params).await?;
    let found = saved(tx, new.account_id, new.product).await?;
    let saved = found.into_iter().find(|b| b.recipient == refill.recipient);
    Ok(saved.ok_or(StoreError::NotFound("beneficiary"))?)
}

async fn saved<T: ReadTx>(
    tx: &T,
    account: AccountId,
    product: Product,
) -> Result<Vec<Beneficiary>, T::Error> {
    let sql =
        "SELECT id, product, recipient, nickname, provider, details, amount FROM beneficiaries
               WHERE account_id = ?1 AND product = ?2 ORDER BY nickname, recipient";
    let params: [&dyn Param; 2] = [&account.to_string(), &product.service()];
    tx.query_all(sql, &params, beneficiary).await
}

pub(crate) const BENEFICIARY: &str = "id, product, recipient, nickname, provider, details, amount";

/// A row of [`BENEFICIARY`]'s columns.
pub(crate) fn beneficiary(row: &dyn RowRead) -> StoreResult<Beneficiary> {
    const COLUMNS: &str = BENEFICIARY;
    let recipient: String = row.get(col!("recipient"))?;
    Ok(Beneficiary {
        id: row.get(col!("id"))?,
        product: row.parsed(col!("product"))?,
        nickname: row.get(col!("nickname"))?,
        refill: Refill {
            recipient: recipient.clone(),
            provider: row.get(col!("provider"))?,
            details: row.json(col!("details"))?,
            amount: row.get(col!("amount"))?,
        },
        recipient,
    })
}

async fn delete<T: Tx>(tx: One<'_, T>, account: AccountId, id: &str) -> Result<bool, T::Error> {
    let sql = "DELETE FROM beneficiaries WHERE account_id = ?1 AND id = ?2";
    let params: [&dyn Param; 2] = [&account.to_string(), &id];
    Ok(tx.execute(sql, &params).await? > 0)
}

async fn recent<T: ReadTx>(
    tx: &T,
    account: AccountId,
    product: Product,
    limit: u32,
) -> Result<Vec<Refill>, T::Error> {
    const COLUMNS: &str = "recipient, provider, details, face_value";
    // each recipient's latest purchase (both engines have window functions)
    let sql = "SELECT recipient, provider, details, face_value FROM (
                   SELECT recipient, provider, details, face_value, created_at,
                          ROW_NUMBER() OVER (PARTITION BY recipient ORDER BY created_at DESC) AS nth
                   FROM transactions WHERE account_id = ?1 AND product = ?2) latest
               WHERE nth = 1 ORDER BY created_at DESC LIMIT CAST(?3 AS BIGINT)";
    let params: [&dyn Param; 3] = [&account.to_string(), &product.service(), &i64::from(limit)];
    tx.query_all(sql, &params, |row| {
        Ok(Refill {
            recipient: row.get(col!("recipient"))?,
            provider: row.get(col!("provider"))?,
            details: row.json(col!("details"))?,
            amount: row.get(col!("face_value"))?,
        })
    })
    .await
}
