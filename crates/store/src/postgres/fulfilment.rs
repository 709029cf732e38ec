//! The fulfilment worker's side: claiming due purchases under a lease,
//! recording what the supplier was asked, rescheduling, and the final status
//! with its refund and outbox event.

use super::PostgresStore;
use super::connection::{
    borrow, execute, map_rows, owned, query, query_one, statement, with_columns,
};
use super::error::violates;
use super::rows::{get, transaction};
use crate::areas::notices::purchase_notice;
use crate::clock::{new_code, now_ms, now_rfc3339, rfc3339};
use crate::columns::{TX_COLUMNS, qualified};
use crate::rules::ms_from_now;
use crate::*;
use async_trait::async_trait;
use billpay_domain::{Product, TxStatus};
use std::sync::LazyLock;
use std::time::Duration;

impl PostgresStore {
    /// Runs a claim statement (`$1` lease until, `$2` now, `$3` limit) that
    /// leases up to `limit` transactions and returns them.
    async fn claim_leased(
        &self,
        sql: &'static str,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        self.autocommit(|c| {
            Box::pin(async move {
                let now = now_ms();
                let until = now + lease.as_millis() as i64;
                let rows = query(c, sql, &[&until, &now, &i64::from(limit)]).await?;
                map_rows(rows, transaction)
            })
        })
        .await
    }
}

#[async_trait]
impl FulfilmentStore for PostgresStore {
    /// Leases up to `limit` due processing transactions, oldest placed first.
    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            with_columns(
                include_str!("sql/claim_fulfilments.sql"),
                &qualified(TX_COLUMNS, "t"),
            )
        });
        let mut claimed = self.claim_leased(&SQL, limit, lease).await?;
        claimed.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        Ok(claimed)
    }

    /// Leases up to `limit` successful transactions whose watch is due.
    async fn claim_watches(&self, limit: u32, lease: Duration) -> StoreResult<Vec<Transaction>> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            with_columns(
                include_str!("sql/claim_watches.sql"),
                &qualified(TX_COLUMNS, "t"),
            )
        });
        self.claim_leased(&SQL, limit, lease).await
    }

    async fn rewatch(&self, code: &str, at_ms: Option<i64>) -> StoreResult<()> {
        let code = code.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "UPDATE transactions SET watch_at = $1, lease_until = 0
                           WHERE code = $2 AND status = 'successful'";
                execute(c, sql, &[&at_ms, &code]).await?;
                Ok(())
            })
        })
        .await
    }

    /// Extends the leases of transactions still being processed.
    async fn renew_fulfilment_leases(
        &self,
        codes: Vec<String>,
        lease: Duration,
    ) -> StoreResult<()> {
        if codes.is_empty() {
            return Ok(());
        }
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = include_str!("sql/renew_leases.sql");
                execute(c, sql, &[&ms_from_now(lease), &codes]).await?;
                Ok(())
            })
        })
        .await
    }

    async fn mark_submitted(
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
        self.write_statement(include_str!("sql/mark_submitted.sql"), params)
            .await?;
        Ok(())
    }

    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()> {
        let (code, note) = (code.to_owned(), note.to_owned());
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = include_str!("sql/reschedule.sql");
                execute(c, sql, &[&ms_from_now(delay), &note, &code]).await?;
                Ok(())
            })
        })
        .await
    }

    /// `false` when the transaction was already final (nothing changed).
    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
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
        let (found, changed): (bool, i64) = (get(&row, 0)?, get(&row, 1)?);
        if !found {
            return Err(StoreError::NotFound("transaction"));
        }
        Ok(changed > 0)
    }

    /// How many purchases are `processing`, and since when the oldest.
    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        self.autocommit(|c| {
            Box::pin(async move {
                let row = query_one(c, crate::BACKLOG, &[]).await?;
                Ok(Backlog {
                    processing: get::<i64>(&row, 0)? as u64,
                    oldest_created_at: get(&row, 1)?,
                })
            })
        })
        .await
    }
}

/// A final status, its refund (if failed) and its outbox event, as one
/// statement (`sql/finalize.sql`): the event name of each product, and what
/// a reversal does to the transaction's existing event, filled in.
pub(super) static FINALIZE: LazyLock<String> = LazyLock::new(|| {
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
        .replace("{receipts}", &receipts)
});

pub(super) fn finalize_params(code: &str, fin: &Finalization) -> super::connection::OwnedParams {
    // the status it must be in now
    let from = if fin.reversal {
        "successful"
    } else {
        "processing"
    };
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
    ]
}
