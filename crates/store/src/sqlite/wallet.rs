//! The shared wallet functions (`areas/wallet.rs`) inside SQLite's writer
//! jobs (purchases, refunds, funding).

use super::statements::Lite;
use crate::areas::wallet;
use crate::db::ready;
use crate::*;
use billpay_domain::{AccountId, Kobo};
use rusqlite::Connection;

pub(super) use crate::areas::wallet::Entry;

/// Moves a wallet by `amount` (signed) and appends the matching ledger
/// entry; refused below zero.
pub(super) fn post_ledger(
    conn: &Connection,
    account: AccountId,
    amount: Kobo,
    entry: Entry,
) -> StoreResult<Kobo> {
    ready(wallet::post_ledger(&Lite(conn), account, amount, entry))
}
