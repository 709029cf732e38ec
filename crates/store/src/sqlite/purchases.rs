//! Placing a purchase: one job of the writer's group commit (the placement
//! itself is written once, `areas/purchases.rs::place`).

use super::SqliteStore;
use super::statements::Lite;
use crate::areas::{limits, purchases};
use crate::clock::{new_code, now_ms};
use crate::db::ready;
use crate::*;

impl SqliteStore {
    /// The area's placement in one job of the next group commit (the one
    /// writer orders every debit, so limits cannot be raced, and holds every
    /// row, so no wallet is locked). Every refusal comes before the first
    /// change, so the job needs no savepoint of its own (`Engine::write_bare`).
    pub(crate) async fn place_purchase_here(&self, new: NewPurchase) -> StoreResult<Transaction> {
        self.engine
            .write_bare(move |conn| {
                let (code, today) = (new_code("BP"), limits::Today::now());
                ready(purchases::place(&Lite(conn), &new, &code, &today, now_ms()))
            })
            .await
    }
}
