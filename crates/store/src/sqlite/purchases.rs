//! Placing a purchase: one job of the writer's group commit, running the
//! placement both engines share (`areas/purchases.rs::place`).

use super::SqliteStore;
use super::statements::Lite;
use crate::areas::purchases::{Order, place};
use crate::db::ready;
use crate::*;

impl SqliteStore {
    /// One order placed in the next group commit (the one writer orders
    /// every debit, so limits cannot be raced). Every refusal comes before
    /// the first change, so the job needs no savepoint of its own
    /// (`Engine::write_bare`).
    pub(crate) async fn place_purchase_here(&self, new: NewPurchase) -> StoreResult<Transaction> {
        self.engine
            .write_bare(move |conn| {
                let order = Order::new(new);
                let mut placed = ready(place(&Lite(conn), &[&order]))?;
                placed.pop().expect("one outcome per order")
            })
            .await
    }
}
