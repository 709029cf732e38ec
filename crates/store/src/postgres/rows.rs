//! `get`, for one-column answers of the PostgreSQL statements not written
//! once for both backends.

use super::error::PgError;
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
