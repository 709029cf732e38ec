//! The shared row mappers (`crate::rows`) for the SQLite statements not yet
//! written once for both backends (rusqlite's `Row` → the record).

use super::statements::LiteRow;
use crate::db::RowRead;
use crate::*;
use rusqlite::Row;

fn lift<T>(row: &Row, map: fn(&dyn RowRead) -> StoreResult<T>) -> rusqlite::Result<T> {
    map(&LiteRow(row)).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

pub fn transaction(row: &Row) -> rusqlite::Result<Transaction> {
    lift(row, crate::rows::transaction)
}

pub fn daily_spend_row(row: &Row) -> rusqlite::Result<DailySpend> {
    lift(row, crate::rows::daily_spend_row)
}
