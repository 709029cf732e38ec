//! "Fund your wallet" on the overview and wallet pages: the bank accounts
//! reserved for the signed-in account (a transfer to one credits the
//! wallet) and the payments received through them.

use crate::format::{naira, short_time};
use billpay_domain::AccountId;
use billpay_store::{FundingFilter, ReservedAccount, SharedStore, StoreResult};

/// Payments shown on a page.
const SHOWN: u32 = 20;

pub struct FundAccount {
    pub bank_name: String,
    pub account_number: String,
    pub account_name: String,
}

pub struct FundingRow {
    pub at: String,
    pub gateway: String,
    pub amount: String,
    pub fee: String,
    pub credited: String,
    pub status: &'static str,
    pub reference: String,
}

/// What the "Fund your wallet" section shows. The wallet page adds the
/// pay-now form, the accounts still to reserve and the latest card payments
/// (`pay_now::wallet_extras`); the overview shows the accounts and history.
pub struct FundingSection {
    pub fund_accounts: Vec<FundAccount>,
    pub fundings: Vec<FundingRow>,
    pub extras: Option<super::pay_now::WalletExtras>,
}

impl FundingSection {
    /// The wallet page asks for a BVN or NIN (instead of "ask your provider").
    pub fn asks_identity(&self) -> bool {
        self.extras
            .as_ref()
            .is_some_and(|x| !x.identity_asks.is_empty())
    }
}

impl From<ReservedAccount> for FundAccount {
    fn from(a: ReservedAccount) -> Self {
        FundAccount {
            bank_name: a.bank_name,
            account_number: a.account_number,
            account_name: a.account_name,
        }
    }
}

pub async fn load(store: &SharedStore, account: AccountId) -> StoreResult<FundingSection> {
    let held = store.reserved_accounts(Some(account)).await?;
    let filter = FundingFilter {
        account_id: Some(account),
        limit: SHOWN,
        ..FundingFilter::default()
    };
    let events = store.funding_events(filter).await?;
    Ok(FundingSection {
        fund_accounts: held.into_iter().map(FundAccount::from).collect(),
        fundings: events
            .into_iter()
            .map(|e| FundingRow {
                at: short_time(&e.created_at),
                gateway: e.gateway,
                amount: naira(e.amount),
                fee: naira(e.fee),
                credited: naira(e.credited),
                status: e.status.as_str(),
                reference: e.gateway_reference,
            })
            .collect(),
        extras: None,
    })
}
