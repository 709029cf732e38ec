//! The operator's changes, each with its log line in the same transaction:
//! both are stored or neither. A money move's line gets the wallet's balance
//! before and after, a status change's the status before. Each is its area's
//! change with the line (`Some(&log)`); PostgreSQL's logged finalize is its
//! one-statement finalize with the line (`finalize_logged_here`).

use super::{accounts, catalogue, fulfilment, keys, pricing, wallet};
use crate::db::{Engine, Tx, col, for_both_engines};
use crate::operators::applied_balance_before;
use crate::*;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::{Rule, Scope};
use billpay_domain::{AccountId, Kobo};

for_both_engines! {
    impl LoggedStore {
        fn credit_logged(account: AccountId, amount: Kobo, reference: &str, log: NewLogEntry)
            -> Credit = write |tx| credit(tx, account, amount, &reference, &log);
        fn debit_logged(account: AccountId, amount: Kobo, reference: &str, log: NewLogEntry)
            -> Credit = write |tx| wallet::debit(tx, account, amount, &reference, &log);
        fn set_account_status_logged(account: AccountId, status: AccountStatus, log: NewLogEntry)
            -> () = write |tx| set_account_status(tx, account, status, &log);
        fn finalize_logged(code: &str, fin: Finalization => fin, log: NewLogEntry => log) -> bool
            = write |tx| fulfilment::finalize_logged(tx, &code, &fin, &log),
            postgres |store| store.finalize_logged_here(code, fin, log);
        fn set_account_tier_logged(
            account: AccountId,
            tier: Option<&str> => tier.map(str::to_owned),
            log: NewLogEntry,
        ) -> () = write |tx| pricing::set_account_tier(tx, account, tier.as_deref(), Some(&log));
        fn set_catalogue_active_logged(target: &str, active: bool, log: NewLogEntry) -> String
            = write |tx| catalogue::set_active(tx, &target, active, Some(&log));
        fn create_api_key_logged(new: NewApiKey, log: NewLogEntry) -> ApiKey
            = write |tx| keys::create(tx, &new, Some(&log));
        fn create_account_logged(new: NewAccount, log: NewLogEntry) -> Account
            = write |tx| accounts::create(tx, &new, Some(&log));
        fn replace_catalogue_logged(catalogue: &Catalogue, log: NewLogEntry) -> ()
            = write |tx| catalogue::replace(tx, &catalogue, Some(&log));
        fn create_tier_logged(name: &str, log: NewLogEntry) -> ()
            = write |tx| pricing::create_tier(tx, &name, Some(&log));
        fn set_price_rule_logged(tier: &str, scope: Scope, rule: Option<Rule>, log: NewLogEntry)
            -> bool = write |tx| pricing::set_rule(tx, &tier, &scope, rule, Some(&log));
        fn update_api_key_logged(id: KeyId, change: KeyChange, log: NewLogEntry) -> ApiKey
            = write |tx| keys::update(tx, id, &change, Some(&log));
    }
}

/// An operator's credit; its line only when it applied.
async fn credit<T: Tx>(
    tx: &T,
    account: AccountId,
    amount: Kobo,
    reference: &str,
    log: &NewLogEntry,
) -> Result<Credit, T::Error> {
    let credit = wallet::credit(tx, account, amount, CreditSource::Operator, reference).await?;
    if credit.applied {
        let before = applied_balance_before(&credit, amount);
        let log = log.clone().with_balances(before, credit.balance);
        super::operators::append(tx, &log).await?;
    }
    Ok(credit)
}

/// The status before goes in the line (PostgreSQL: read under the row's lock).
async fn set_account_status<T: Tx>(
    tx: &T,
    account: AccountId,
    status: AccountStatus,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    const COLUMNS: &str = "status";
    let sql = match T::ENGINE {
        Engine::Sqlite => "SELECT status FROM accounts WHERE id = ?1",
        Engine::Postgres => "SELECT status FROM accounts WHERE id = ?1 FOR UPDATE",
    };
    let before: Option<String> = tx
        .query_opt(sql, &[&account.to_string()], |row| row.get(col!("status")))
        .await?;
    let before = before.ok_or(StoreError::NotFound("account"))?;
    if status == AccountStatus::Active {
        super::privacy::refuse_if_closed(tx, account).await?;
    }
    accounts::set_status(tx, account, status).await?;
    super::operators::append(tx, &log.clone().with_before(&before)).await
}
