//! The shared row mappers (`crate::rows`) for the PostgreSQL statements not
//! yet written once for both backends, and `get` for one-column answers.

use super::connection::mapped;
use super::error::PgError;
use crate::*;
use tokio_postgres::Row;
use tokio_postgres::row::RowIndex;
use tokio_postgres::types::FromSql;

/// A column by its position (one-column answers) or by its name (records).
pub fn get<'a, T: FromSql<'a>>(
    row: &'a Row,
    column: impl RowIndex + std::fmt::Display,
) -> Result<T, PgError> {
    Ok(row.try_get(column)?)
}

pub fn transaction(row: &Row) -> Result<Transaction, PgError> {
    mapped(row, crate::rows::transaction)
}

pub fn daily_spend_row(row: &Row) -> Result<DailySpend, PgError> {
    mapped(row, crate::rows::daily_spend_row)
}
