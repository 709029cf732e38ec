//! A listing's statement from the filters its caller set (the transactions,
//! webhook events, notices, bank transfers, the operators' log): a filter
//! left unset adds no term. With `(?n IS NULL OR column = ?n)` for each,
//! neither engine could read the index a set filter names, and SQLite
//! scanned and sorted every row for each page (docs/decisions.md, "A
//! listing's statement holds only the filters it sets").

use crate::db::Param;

/// A value bound to a listing's statement, owned by it.
type Value = Box<dyn Param + Send>;

/// The terms of the filters set, and their values.
#[derive(Default)]
pub(crate) struct Filters {
    terms: Vec<String>,
    values: Vec<Value>,
}

impl Filters {
    /// `sql` when `value` is set, each `?` in it bound to `value`.
    pub(crate) fn and<V: Param + Send + 'static>(mut self, sql: &str, value: Option<V>) -> Self {
        if let Some(value) = value {
            self.values.push(Box::new(value));
            let number = format!("?{}", self.values.len());
            self.terms.push(sql.replace('?', &number));
        }
        self
    }

    /// `sql`, which binds nothing, when there is one: a flag's condition, or
    /// an enum's own text written out so the planner can match a partial
    /// index on it.
    pub(crate) fn and_sql(mut self, sql: Option<String>) -> Self {
        self.terms.extend(sql);
        self
    }

    /// `select`, the terms set, `order`, and a page of `limit` rows after
    /// `offset` (none: the first page).
    pub(crate) fn page(
        mut self,
        select: &str,
        order: &str,
        limit: u32,
        offset: Option<u32>,
    ) -> Listing {
        let filtered = match self.terms.is_empty() {
            true => String::new(),
            false => format!(" WHERE {}", self.terms.join(" AND ")),
        };
        self.values.push(Box::new(i64::from(limit)));
        let mut sql = format!(
            "{select}{filtered} {order} LIMIT CAST(?{} AS BIGINT)",
            self.values.len()
        );
        if let Some(offset) = offset {
            self.values.push(Box::new(i64::from(offset)));
            sql += &format!(" OFFSET CAST(?{} AS BIGINT)", self.values.len());
        }
        Listing {
            sql,
            values: self.values,
        }
    }
}

/// A listing's statement and the values it binds, in order.
pub(crate) struct Listing {
    pub(crate) sql: String,
    values: Vec<Value>,
}

impl Listing {
    pub(crate) fn params(&self) -> Vec<&dyn Param> {
        self.values
            .iter()
            .map(|v| v.as_ref() as &dyn Param)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Filters;

    #[test]
    fn only_the_filters_set_are_written_their_values_numbered_in_turn() {
        let listing = Filters::default()
            .and("account_id = ?", Some("a".to_owned()))
            .and("key_id = ?", None::<String>)
            .and(
                "(instr(reference, ?) > 0 OR instr(code, ?) > 0)",
                Some("r".to_owned()),
            )
            .and_sql(Some("status = 'failed'".into()))
            .and_sql(None)
            .page("SELECT code FROM t", "ORDER BY code", 20, Some(40));
        assert_eq!(
            listing.sql,
            "SELECT code FROM t WHERE account_id = ?1 AND \
             (instr(reference, ?2) > 0 OR instr(code, ?2) > 0) AND status = 'failed' \
             ORDER BY code LIMIT CAST(?3 AS BIGINT) OFFSET CAST(?4 AS BIGINT)"
        );
        assert_eq!(listing.params().len(), 4);
        let unfiltered = Filters::default().page("SELECT code FROM t", "ORDER BY code", 5, None);
        assert_eq!(
            unfiltered.sql,
            "SELECT code FROM t ORDER BY code LIMIT CAST(?1 AS BIGINT)"
        );
    }
}
