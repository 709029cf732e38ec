//! The fulfilment worker's and the delivery worker's writes on PostgreSQL:
//! the area's own functions (`areas/fulfilment.rs`, `areas/events.rs`), run
//! as units of the group-committed lanes (`units.rs`) — marking a purchase
//! submitted, a successful finalize, an event's attempt — or, for a refund
//! (it locks a wallet, which a batch of other wallets' locks must not),
//! in a transaction of its own.

use super::PostgresStore;
use super::connection::{BoxFut, Pg, PgTx, transaction};
use super::error::violates;
use crate::areas::{events, fulfilment};
use crate::*;
use billpay_domain::TxStatus;
use std::sync::Arc;

impl PostgresStore {
    /// Records that the supplier was asked, in a lane's batch.
    pub(crate) async fn mark_submitted_here(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        let (code, supplier) = (code.to_owned(), supplier.to_owned());
        let supplier_reference = supplier_reference.map(str::to_owned);
        let marked = self.batched(move |tx| {
            let (code, supplier, reference) =
                (code.clone(), supplier.clone(), supplier_reference.clone());
            Box::pin(async move {
                fulfilment::mark_submitted(&Pg(tx), &code, &supplier, reference.as_deref()).await
            })
        });
        Ok(marked.await?)
    }

    /// The area's finalize; `false` when the transaction was already final
    /// (nothing changed). Drawn again should its event's id be taken.
    pub(crate) async fn finalize_here(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        let refund = fin.status == TxStatus::Failed;
        let unit = finalize_unit(code.to_owned(), Arc::new(fin));
        let mut draws = 0;
        loop {
            let result = if refund {
                transaction(&self.pool, &unit).await
            } else {
                self.batched(unit.clone()).await
            };
            match result {
                // Another event drew the same id: draw again.
                Err(e) if violates(&e, "events_pkey") && draws < 3 => draws += 1,
                other => return Ok(other?),
            }
        }
    }

    /// The attempt and the event's next state, in a lane's batch.
    pub(crate) async fn record_delivery_here(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        let (event_id, attempt) = (event_id.to_owned(), Arc::new(attempt));
        let recorded = self.batched(move |tx| {
            let (event_id, attempt) = (event_id.clone(), attempt.clone());
            Box::pin(async move { events::record(&Pg(tx), &event_id, &attempt, &next).await })
        });
        Ok(recorded.await?)
    }
}

/// The area's finalize of `code` as a unit of work (each run draws its
/// event's id afresh).
fn finalize_unit(
    code: String,
    fin: Arc<Finalization>,
) -> impl for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, bool> + Clone + Send + Sync + 'static {
    move |tx| {
        let (code, fin) = (code.clone(), fin.clone());
        Box::pin(async move { fulfilment::finalize(&Pg(tx), &code, &fin).await })
    }
}
