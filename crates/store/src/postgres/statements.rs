//! The workers' single-statement writes that lock no wallet (mark submitted,
//! a successful finalize with its outbox event, a delivery attempt),
//! group-committed in lanes sharing one queue.

use super::PostgresStore;
use super::batch::Job;
use super::connection::{OwnedParams, borrow, statement};
use super::error::{PgResult, stopped_queue};
use deadpool_postgres::Pool;
use tokio::sync::oneshot;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

pub(super) struct StatementJob {
    sql: &'static str,
    params: OwnedParams,
    reply: oneshot::Sender<PgResult<Row>>,
}

impl Job for StatementJob {
    const QUEUE: &'static str = "statements";

    fn sql(&self) -> &'static str {
        self.sql
    }

    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        borrow(&self.params)
    }

    fn answer(self, row: PgResult<Row>) {
        let _ = self.reply.send(row);
    }

    async fn run_alone(self, pool: &Pool) {
        let row = statement(pool, self.sql, &borrow(&self.params)).await;
        self.answer(row);
    }
}

impl PostgresStore {
    /// One statement returning one row: group-committed with other workers'
    /// statements when group commit is on, else in a transaction of its own.
    /// Answered after COMMIT either way. For statements that lock no wallet
    /// (so a batch of them never deadlocks with a batch of purchases).
    pub(super) async fn write_statement(
        &self,
        sql: &'static str,
        params: OwnedParams,
    ) -> PgResult<Row> {
        let Some(lanes) = &self.statements else {
            return statement(&self.pool, sql, &borrow(&params)).await;
        };
        let (reply, answer) = oneshot::channel();
        lanes.submit(0, StatementJob { sql, params, reply })?;
        answer
            .await
            .map_err(|_| stopped_queue(StatementJob::QUEUE))?
    }
}
