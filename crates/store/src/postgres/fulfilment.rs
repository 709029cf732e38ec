//! What PostgreSQL does its own way for the fulfilment worker
//! (`areas/fulfilment.rs` has the rest): marking a purchase submitted and its
//! finalize, each one statement of the group-committed lanes
//! (`postgres/statements.rs`); the finalize is one statement of several parts
//! (`sql/finalize.sql`: status, refund with its usage given back, outbox
//! event, notice).

use super::PostgresStore;
use super::connection::{OwnedParams, borrow, owned, statement};
use super::error::violates;
use super::rows::get;
use crate::areas::notices::{dropped, hourly_bound, notice_hour, purchase_notice};
use crate::clock::{new_code, now_rfc3339, rfc3339};
use crate::db::to_dollar_placeholders;
use crate::*;
use billpay_domain::{Product, TxStatus};
use std::sync::LazyLock;

impl PostgresStore {
    /// Records that the supplier was asked, in a lane's batch.
    pub(crate) async fn mark_submitted_here(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        let params = owned![
            code.to_owned(),
            supplier.to_owned(),
            supplier_reference.map(str::to_owned)
        ];
        self.write_statement(MARK_SUBMITTED.as_str(), params)
            .await?;
        Ok(())
    }

    /// The one-statement finalize; `false` when the transaction was already
    /// final (nothing changed).
    pub(crate) async fn finalize_here(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        let mut draws = 0;
        let row = loop {
            let params = finalize_params(code, &fin);
            // A refund locks a wallet: never in a batch with other wallets' locks
            // (purchase batches take them in account order; this could not).
            let result = if fin.status == TxStatus::Failed {
                statement(&self.pool, &FINALIZE, &borrow(&params)).await
            } else {
                self.write_statement(FINALIZE.as_str(), params).await
            };
            match result {
                // Another event drew the same id: draw again.
                Err(e) if violates(&e, "events_pkey") && draws < 3 => draws += 1,
                other => break other?,
            }
        };
        let kind = notice_kind(fin.status);
        dropped(kind, "email", get::<i64>(&row, 2)?.max(0) as u64);
        dropped(kind, "sms", get::<i64>(&row, 3)?.max(0) as u64);
        changed(&row)
    }
}

/// The kind of the notice a finalize to `status` may add (`finalize.sql`'s `notice_kind`).
fn notice_kind(status: TxStatus) -> &'static str {
    match status {
        TxStatus::Failed => "purchase_refunded",
        _ => "purchase_receipt",
    }
}

/// The area's statement (`areas::fulfilment::MARK_SUBMITTED`), answering
/// one row (`RETURNING` in a `WITH`, found or not) as a lane's statement must.
static MARK_SUBMITTED: LazyLock<String> = LazyLock::new(|| {
    let update = to_dollar_placeholders(crate::areas::fulfilment::MARK_SUBMITTED);
    format!("WITH marked AS ({update} RETURNING 1) SELECT COUNT(*) FROM marked")
});

/// Whether the finalize's answer (the transaction exists, rows changed)
/// says it changed something; an unknown transaction is an error.
fn changed(row: &tokio_postgres::Row) -> StoreResult<bool> {
    let (found, changed): (bool, i64) = (get(row, 0)?, get(row, 1)?);
    if !found {
        return Err(StoreError::NotFound("transaction"));
    }
    Ok(changed > 0)
}

/// A final status, its refund (if failed) and its outbox event, as one
/// statement (`sql/finalize.sql`): the event name of each product, and what
/// a reversal does to the transaction's existing event, filled in.
static FINALIZE: LazyLock<String> = LazyLock::new(|| {
    let events = Product::ALL
        .iter()
        .map(|p| format!("WHEN '{}' THEN '{}'", p.service(), p.event()))
        .collect::<Vec<_>>()
        .join(" ");
    let receipts = Product::ALL
        .iter()
        .filter(|p| purchase_notice(**p, TxStatus::Successful).is_some())
        .map(|p| format!("'{}'", p.service()))
        .collect::<Vec<_>>()
        .join(", ");
    include_str!("sql/finalize.sql")
        .replace("{events}", &events)
        .replace("{resend}", crate::RESEND_ON_REVERSAL)
        .replace("{first_state}", crate::FIRST_STATE)
        .replace("{no_webhook_url}", &format!("'{}'", crate::NO_WEBHOOK_URL))
        .replace("{receipts}", &receipts)
});

fn finalize_params(code: &str, fin: &Finalization) -> OwnedParams {
    // the status it must be in now (NULL: none, so nothing changes)
    let from = fin.takes_from().map(TxStatus::as_str);
    // `sent` is an INTEGER: PostgreSQL binds it as `i32`
    let bound = i32::try_from(hourly_bound(notice_kind(fin.status))).unwrap_or(i32::MAX);
    owned![
        code.to_owned(),
        fin.status.as_str(),
        fin.message.clone(),
        fin.result.to_string(),
        rfc3339(fin.completed_at_ms),
        new_code("EV"),
        now_rfc3339(),
        fin.event_payload.clone(),
        fin.completed_at_ms,
        from,
        LedgerKind::Refund.as_str(),
        fin.cost.map(|c| c.0),
        fin.watch_at_ms,
        new_code("NT"),
        new_code("NT"),
        serde_json::json!({ "transaction": code }).to_string(),
        notice_hour(),
        bound,
    ]
}
