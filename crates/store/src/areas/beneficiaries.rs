//! Saved recipients of the shop (issue 31): a phone, meter, smartcard or
//! betting id with the customer's nickname for it, per product; and the last
//! recipients an account bought a product for, read from its purchases.

use crate::clock::{new_code, now_rfc3339};
use crate::db::{Param, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::{AccountId, Product};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beneficiary {
    pub id: String,
    pub product: Product,
    pub recipient: String,
    pub nickname: String,
}

#[derive(Debug, Clone)]
pub struct NewBeneficiary {
    pub account_id: AccountId,
    pub product: Product,
    pub recipient: String,
    pub nickname: String,
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
        /// The last `limit` different recipients `account` bought `product` for, newest first.
        fn recent_recipients(account: AccountId, product: Product, limit: u32) -> Vec<String>
            = read |tx| recent(tx, account, product, limit);
    }
}

async fn save<T: Tx>(tx: &T, new: &NewBeneficiary) -> Result<Beneficiary, T::Error> {
    let sql = "INSERT INTO beneficiaries (id, account_id, product, recipient, nickname, created_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6)
               ON CONFLICT (account_id, product, recipient) DO UPDATE
                   SET nickname = excluded.nickname";
    let (id, account) = (new_code("BN"), new.account_id.to_string());
    let params: [&dyn Param; 6] = [
        &id,
        &account,
        &new.product.service(),
        &new.recipient,
        &new.nickname,
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    let found = saved(tx, new.account_id, new.product).await?;
    let saved = found.into_iter().find(|b| b.recipient == new.recipient);
    Ok(saved.ok_or(StoreError::NotFound("beneficiary"))?)
}

async fn saved<T: Tx>(
    tx: &T,
    account: AccountId,
    product: Product,
) -> Result<Vec<Beneficiary>, T::Error> {
    const COLUMNS: &str = "id, product, recipient, nickname";
    let sql = "SELECT id, product, recipient, nickname FROM beneficiaries
               WHERE account_id = ?1 AND product = ?2 ORDER BY nickname, recipient";
    let params: [&dyn Param; 2] = [&account.to_string(), &product.service()];
    tx.query_all(sql, &params, |row| {
        let product: String = row.get(col!("product"))?;
        Ok(Beneficiary {
            id: row.get(col!("id"))?,
            product: product
                .parse()
                .map_err(|_| StoreError::backend(format!("unknown product {product}")))?,
            recipient: row.get(col!("recipient"))?,
            nickname: row.get(col!("nickname"))?,
        })
    })
    .await
}

async fn delete<T: Tx>(tx: &T, account: AccountId, id: &str) -> Result<bool, T::Error> {
    let sql = "DELETE FROM beneficiaries WHERE account_id = ?1 AND id = ?2";
    let params: [&dyn Param; 2] = [&account.to_string(), &id];
    Ok(tx.execute(sql, &params).await? > 0)
}

async fn recent<T: Tx>(
    tx: &T,
    account: AccountId,
    product: Product,
    limit: u32,
) -> Result<Vec<String>, T::Error> {
    const COLUMNS: &str = "recipient, latest";
    let sql = "SELECT recipient, MAX(created_at) AS latest FROM transactions
               WHERE account_id = ?1 AND product = ?2
               GROUP BY recipient ORDER BY latest DESC LIMIT CAST(?3 AS BIGINT)";
    let params: [&dyn Param; 3] = [&account.to_string(), &product.service(), &i64::from(limit)];
    tx.query_all(sql, &params, |row| row.get(col!("recipient")))
        .await
}
