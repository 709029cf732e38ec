//! Placing a purchase: one job of the writer's group commit (the check and
//! the reads are written once, `areas/purchases.rs`).

use super::SqliteStore;
use super::statements::Lite;
use super::statements::{execute, query_row};
use super::wallet::{Entry, post_ledger};
use crate::areas::{limits, purchases};
use crate::clock::{new_code, now_ms, rfc3339};
use crate::db::ready;
use crate::*;
use billpay_domain::{AccountId, Kobo};
use rusqlite::{Connection, params};

impl SqliteStore {
    /// The reference, the blocklist, limits and velocity rules, the debit,
    /// the transaction row (held for review when a rule says so), its ledger
    /// entry and its usage, in one job of the next group commit (the one
    /// writer orders every debit, so limits cannot be raced). Every refusal
    /// comes before the debit, the first change, so the job needs no
    /// savepoint of its own (`Engine::write_bare`).
    pub(crate) async fn place_purchase_here(&self, new: NewPurchase) -> StoreResult<Transaction> {
        self.engine
            .write_bare(move |conn| {
                if reference_used(conn, new.account_id, &new.reference)? {
                    return Err(Refusal::DuplicateReference.into());
                }
                let code = new_code("BP");
                let (tx, today) = (&Lite(conn), limits::Today::now());
                let (account, recipient) = (new.account_id, new.recipient.as_str());
                // The guarded debit refuses an amount over the balance.
                let passed = ready(limits::check(tx, account, recipient, new.amount, &today))?;
                let debit = Kobo(-new.amount.0);
                let balance_after = post_ledger(conn, new.account_id, debit, Entry::Debit(&code))?;
                let now = now_ms();
                let placed = purchases::Placed {
                    new: &new,
                    code: &code,
                    details: &new.details.to_json(),
                    created_at: &rfc3339(now),
                    balance_before: passed.balance,
                    balance_after,
                    held_for: passed.hold.map(str::to_owned),
                };
                insert(conn, &placed, now)?;
                let kept = passed.keeps_recipient.then_some(recipient);
                let hourly = Some((passed.hourly, recipient));
                ready(limits::record_usage(
                    tx,
                    account,
                    (kept, hourly),
                    new.amount,
                    &today,
                ))?;
                placed.transaction()
            })
            .await
    }
}

/// The transaction row, due at `now` (milliseconds) unless it is held.
fn insert(conn: &Connection, placed: &purchases::Placed, now: i64) -> StoreResult<()> {
    let new = placed.new;
    // A held purchase is not due until an owner releases it.
    let due = if placed.held_for.is_some() {
        limits::HELD_UNTIL_MS
    } else {
        now
    };
    execute(
        conn,
        include_str!("sql/insert_transaction.sql"),
        params![
            placed.code,
            new.account_id.to_string(),
            new.key_id.to_string(),
            new.reference,
            new.product.service(),
            new.provider,
            new.plan_id,
            new.label,
            new.recipient,
            new.amount.0,
            placed.details,
            new.batch_id(),
            placed.balance_before.0,
            placed.balance_after.0,
            due,
            placed.created_at,
            new.face_value.0,
            new.tier,
            placed.held_for,
            purchases::PROCESSING,
        ],
    )?;
    Ok(())
}

fn reference_used(conn: &Connection, account: AccountId, reference: &str) -> StoreResult<bool> {
    let sql = "SELECT EXISTS(SELECT 1 FROM transactions WHERE account_id = ?1 AND reference = ?2)";
    Ok(query_row(
        conn,
        sql,
        params![account.to_string(), reference],
        |r| r.get(0),
    )?)
}
