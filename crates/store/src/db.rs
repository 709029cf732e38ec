//! The seam both backends share, so a store area is written once
//! (`areas/<area>.rs`) and runs on either engine:
//!
//! - [`Tx`]: a transaction (or, for reads, a connection) to run statements on:
//!   `execute`, `query_opt`, `query_all`. SQL is written once, in SQLite's
//!   spelling of placeholders (`?1`, `?2`…); the PostgreSQL engine rewrites them
//!   to `$1`… ([`to_dollar_placeholders`]) before its prepared-statement cache.
//!   What truly differs between the engines is asked of [`Reads::ENGINE`] and
//!   named where it is used. Its parts are bounds of their own: [`Reads`]
//!   (no `execute`; [`ReadTx`] with refusals), which a read and a guarded
//!   write's decision are given ([`Reading`]), and [`Statements`] (whose
//!   error cannot be a refusal), which a guarded write's change is given
//!   ([`Guarded`]).
//! - [`Param`]: a value both drivers bind (`&[&dyn Param]`); an integer's
//!   width is PostgreSQL's column type (`i32` for `INTEGER`, `i64` for
//!   `BIGINT`), which SQLite takes as well.
//! - [`RowRead`]: a row of either driver, read by column ([`Column`]: the
//!   column's name and its position in the selected list, found at compile
//!   time by [`col!`]; debug builds check the name against the driver's).
//!
//! The SQLite engine runs an area's function inside its writer (or reader)
//! closure with [`ready`]: its futures never wait, so one poll finishes them.

use crate::{BackendError, Refusal, StoreError, StoreResult};
use std::future::Future;

/// Which engine a [`Tx`] runs on, for the few spellings that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    /// Both engines, in the order of a [`PerEngine`]'s texts.
    const BOTH: [Engine; 2] = [Engine::Sqlite, Engine::Postgres];

    /// ` FOR UPDATE` on PostgreSQL, nothing on SQLite: the rows read stay
    /// locked until the transaction ends. SQLite has no row locks and no such
    /// clause; its one writer holds the whole database for the transaction.
    pub(crate) const fn for_update(self) -> &'static str {
        match self {
            Engine::Sqlite => "",
            Engine::Postgres => " FOR UPDATE",
        }
    }

    /// ` FOR UPDATE SKIP LOCKED` on PostgreSQL, nothing on SQLite: rows
    /// another node's transaction is writing are passed over, never waited
    /// for (a worker's claim). SQLite's one writer never meets such a row.
    pub(crate) const fn skip_locked(self) -> &'static str {
        match self {
            Engine::Sqlite => "",
            Engine::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }
}

/// A statement written once whose text differs by engine only where the
/// engines truly differ (a clause such as [`Engine::for_update`], a
/// function's spelling), each difference said beside it: `build` writes it
/// for an engine, once, on first use; [`PerEngine::sql`] answers the
/// engine's text.
pub(crate) struct PerEngine {
    build: fn(Engine) -> String,
    texts: std::sync::OnceLock<[String; 2]>,
}

impl PerEngine {
    pub(crate) const fn new(build: fn(Engine) -> String) -> PerEngine {
        PerEngine {
            build,
            texts: std::sync::OnceLock::new(),
        }
    }

    /// The statement as `engine` runs it.
    pub(crate) fn sql(&self, engine: Engine) -> &str {
        let texts = self.texts.get_or_init(|| Engine::BOTH.map(self.build));
        &texts[usize::from(engine == Engine::Postgres)]
    }
}

/// A value bound to a statement by either driver.
pub(crate) trait Param: Sync {
    fn lite(&self) -> &dyn rusqlite::ToSql;
    fn pg(&self) -> &(dyn tokio_postgres::types::ToSql + Sync);
}

impl<T: rusqlite::ToSql + tokio_postgres::types::ToSql + Sync> Param for T {
    fn lite(&self) -> &dyn rusqlite::ToSql {
        self
    }
    fn pg(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
        self
    }
}

/// Reads on one engine's transaction or connection: every store function
/// may run them, and a guarded write's decision runs nothing else
/// ([`Guarded`]). Its error converts from a [`BackendError`] (the engine
/// failed); [`ReadTx`] and [`Tx`] add the store's refusals.
pub(crate) trait Reads {
    type Error: From<BackendError>;
    const ENGINE: Engine;

    /// Prepares `sql` before statements are sent together, so each of them
    /// is sent when first polled, in the order polled (PostgreSQL's; SQLite
    /// runs every statement at once anyway).
    fn prepare(&self, sql: &str) -> impl Future<Output = Result<(), Self::Error>>;

    /// The first row, if any, through `map`.
    fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnOnce(&dyn RowRead) -> StoreResult<T>,
    ) -> impl Future<Output = Result<Option<T>, Self::Error>>;

    /// Every row, through `map`.
    fn query_all<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnMut(&dyn RowRead) -> StoreResult<T>,
    ) -> impl Future<Output = Result<Vec<T>, Self::Error>>;

    /// The one row `sql` answers (none is a backend error).
    fn query_one<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnOnce(&dyn RowRead) -> StoreResult<T>,
    ) -> impl Future<Output = Result<T, Self::Error>> {
        async move {
            let found = self.query_opt(sql, params, map).await?;
            found.ok_or_else(|| BackendError::new("the query returned no row").into())
        }
    }
}

/// Reads and writes on one engine's transaction or connection. A function
/// given only `Statements` (a guarded write's change, and the helpers it
/// calls) can fail but cannot refuse: its error converts from nothing but a
/// [`BackendError`].
pub(crate) trait Statements: Reads {
    /// Runs a statement; answers the rows it changed.
    fn execute(
        &self,
        sql: &str,
        params: &[&dyn Param],
    ) -> impl Future<Output = Result<u64, Self::Error>>;
}

/// Statements on one engine's transaction or connection, whose error may
/// be a refusal: an area's function takes `&impl Tx` and returns
/// `Result<_, T::Error>` (the engine's error, so PostgreSQL can still retry
/// a serialisation failure).
pub(crate) trait Tx: Statements<Error: From<StoreError> + From<Refusal>> {}
impl<S: Statements<Error: From<StoreError> + From<Refusal>>> Tx for S {}

/// Reads whose error may be a refusal: what a guarded write's decision,
/// and the reads it calls, take.
pub(crate) trait ReadTx: Reads<Error: From<StoreError> + From<Refusal>> {}
impl<R: Reads<Error: From<StoreError> + From<Refusal>>> ReadTx for R {}

/// A write whose refusals all come before its first change, by its types
/// (the store's `guarded` run kind gives one, `for_both_engines!`): it runs
/// as a decision given the transaction to read ([`Reading`]: no `execute`),
/// which may refuse, then a change given it to write ([`Changing`]: its
/// error is made only from an engine's failure), which cannot. So SQLite
/// runs it in its writer's batch without a savepoint: a failure after a
/// change is the engine's, and takes the batch with it as a failed COMMIT
/// would. A larger write calls a guarded function with its `&T`.
pub(crate) struct Guarded<'a, T>(&'a T);

impl<'a, T: Tx> From<&'a T> for Guarded<'a, T> {
    fn from(tx: &'a T) -> Self {
        Guarded(tx)
    }
}

impl<'a, T: Tx> Guarded<'a, T> {
    /// `decide`, then `change` with what it decided.
    pub(crate) async fn run<D, O, Decide, Change>(
        self,
        decide: impl FnOnce(Reading<'a, T>) -> Decide,
        change: impl FnOnce(Changing<'a, T>, D) -> Change,
    ) -> Result<O, T::Error>
    where
        Decide: Future<Output = Result<D, T::Error>>,
        Change: Future<Output = Result<O, Failed<T::Error>>>,
    {
        let decided = decide(Reading(self.0)).await?;
        let changed = change(Changing(self.0), decided).await;
        changed.map_err(|Failed(e)| e)
    }

    /// A change with nothing to decide first.
    pub(crate) async fn change<O, Change>(
        self,
        change: impl FnOnce(Changing<'a, T>) -> Change,
    ) -> Result<O, T::Error>
    where
        Change: Future<Output = Result<O, Failed<T::Error>>>,
    {
        change(Changing(self.0)).await.map_err(|Failed(e)| e)
    }
}

/// A transaction given to a guarded write's decision, or a connection given
/// to a read (the store's `read`, `snapshot` and `here` run kinds): reads
/// only.
pub(crate) struct Reading<'a, T>(&'a T);

impl<'a, T: Tx> From<&'a T> for Reading<'a, T> {
    fn from(tx: &'a T) -> Self {
        Reading(tx)
    }
}

impl<T: Tx> Reads for Reading<'_, T> {
    type Error = T::Error;
    const ENGINE: Engine = T::ENGINE;

    fn prepare(&self, sql: &str) -> impl Future<Output = Result<(), T::Error>> {
        self.0.prepare(sql)
    }
    fn query_opt<R>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnOnce(&dyn RowRead) -> StoreResult<R>,
    ) -> impl Future<Output = Result<Option<R>, T::Error>> {
        self.0.query_opt(sql, params, map)
    }
    fn query_all<R>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnMut(&dyn RowRead) -> StoreResult<R>,
    ) -> impl Future<Output = Result<Vec<R>, T::Error>> {
        self.0.query_all(sql, params, map)
    }
}

/// A transaction given to a guarded write's change: statements that can
/// fail, never refuse.
pub(crate) struct Changing<'a, T>(&'a T);

/// The engine's error of a guarded write's change. Its field is private to
/// this module: area code makes one only from a [`BackendError`].
pub(crate) struct Failed<E>(E);

impl<E: From<BackendError>> From<BackendError> for Failed<E> {
    fn from(e: BackendError) -> Self {
        Failed(E::from(e))
    }
}

impl<T: Tx> Reads for Changing<'_, T> {
    type Error = Failed<T::Error>;
    const ENGINE: Engine = T::ENGINE;

    async fn prepare(&self, sql: &str) -> Result<(), Self::Error> {
        self.0.prepare(sql).await.map_err(Failed)
    }
    async fn query_opt<R>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnOnce(&dyn RowRead) -> StoreResult<R>,
    ) -> Result<Option<R>, Self::Error> {
        self.0.query_opt(sql, params, map).await.map_err(Failed)
    }
    async fn query_all<R>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnMut(&dyn RowRead) -> StoreResult<R>,
    ) -> Result<Vec<R>, Self::Error> {
        self.0.query_all(sql, params, map).await.map_err(Failed)
    }
}

impl<T: Tx> Statements for Changing<'_, T> {
    async fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, Self::Error> {
        self.0.execute(sql, params).await.map_err(Failed)
    }
}

/// The answer of a future that never waits (an area's function on the SQLite
/// engine, whose statements run synchronously), in one poll.
pub(crate) fn ready<T>(future: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(answer) => answer,
        std::task::Poll::Pending => Err(StoreError::backend(
            "a SQLite store operation waited on something",
        )),
    }
}

/// Exactly one statement on an engine's [`Tx`]: each method takes `self`, so
/// a function given a `One` runs one statement and no second. The store's
/// `statement` run kind gives one (`for_both_engines!`): SQLite runs it in
/// the writer's batch without a savepoint of its own, which is safe for one
/// statement (SQLite undoes a failed statement by itself) and for nothing
/// more, and PostgreSQL autocommits it. A function that needs a second
/// statement does not compile there; it is a `write`.
pub(crate) struct One<'a, T>(&'a T);

/// A one-statement helper also called inside a larger write takes
/// `impl Into<One<'a, T>>`: that write passes its `&T`, a `statement` its `One`.
impl<'a, T: Tx> From<&'a T> for One<'a, T> {
    fn from(tx: &'a T) -> Self {
        One(tx)
    }
}

impl<T: Tx> One<'_, T> {
    pub(crate) async fn execute(self, sql: &str, params: &[&dyn Param]) -> Result<u64, T::Error> {
        self.0.execute(sql, params).await
    }

    pub(crate) async fn query_all<R>(
        self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnMut(&dyn RowRead) -> StoreResult<R>,
    ) -> Result<Vec<R>, T::Error> {
        self.0.query_all(sql, params, map).await
    }
}

/// `?1` → `$1`, outside quoted strings and identifiers: the one dialect's
/// placeholders in PostgreSQL's spelling.
pub(crate) fn to_dollar_placeholders(sql: &str) -> String {
    renumbered(sql, '$', 0)
}

/// `sql` with each numbered placeholder `?n` outside quoted strings and
/// identifiers written `{prefix}{n + offset}`; a bare `?` kept as it is.
fn renumbered(sql: &str, prefix: char, offset: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let (mut quote, mut chars) = (None, sql.chars().peekable());
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') if chars.peek().is_some_and(char::is_ascii_digit) => {
                let mut n = 0;
                while let Some(digit) = chars.next_if(char::is_ascii_digit) {
                    n = n * 10 + digit as usize - '0' as usize;
                }
                out.push(prefix);
                out.push_str(&(n + offset).to_string());
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// A statement over many rows, `width` parameters a row, whose text depends
/// on how many: an `INSERT` of many rows ([`values`]), a debit of several
/// wallets. A PostgreSQL lane's batch of orders writes each table in one
/// statement instead of one a row; SQLite places one order at a time and
/// runs the one-row text.
pub(crate) struct ManyRows {
    width: usize,
    /// The statement's text for `rows` rows of `width`, `?1`… numbered row
    /// after row.
    build: fn(width: usize, rows: usize) -> String,
    /// The text for `n` rows at `n - 1`, each built on first use.
    texts: [std::sync::OnceLock<String>; ManyRows::MOST],
}

impl ManyRows {
    /// Rows in one statement at most (so at most this many texts are
    /// prepared on a connection); more are sent as several statements.
    pub(crate) const MOST: usize = 32;

    pub(crate) const fn new(
        width: usize,
        build: fn(width: usize, rows: usize) -> String,
    ) -> ManyRows {
        ManyRows {
            width,
            build,
            texts: [const { std::sync::OnceLock::new() }; ManyRows::MOST],
        }
    }

    /// The statement for `rows` rows (1 to [`ManyRows::MOST`]).
    pub(crate) fn sql(&self, rows: usize) -> &str {
        self.texts[rows - 1].get_or_init(|| (self.build)(self.width, rows))
    }

    /// Runs the statements for the rows whose parameters `params` holds,
    /// `width` a row, in order: prepared first, then sent together (one
    /// round trip on PostgreSQL, each sent as it is polled); answers the
    /// rows they changed.
    pub(crate) async fn execute<T: Statements>(
        &self,
        tx: &T,
        params: &[&dyn Param],
    ) -> Result<u64, T::Error> {
        debug_assert_eq!(params.len() % self.width, 0, "whole rows");
        let chunks = params.chunks(self.width * Self::MOST);
        let texts: Vec<&str> = chunks
            .clone()
            .map(|c| self.sql(c.len() / self.width))
            .collect();
        for text in &texts {
            tx.prepare(text).await?;
        }
        let sent = chunks.zip(texts).map(|(chunk, sql)| tx.execute(sql, chunk));
        Ok(futures_util::future::try_join_all(sent)
            .await?
            .into_iter()
            .sum())
    }
}

/// `head`, then `row` (`(?1, …, ?width)`) `rows` times, each numbered on
/// from the one before, then `tail`: an `INSERT … VALUES` of many rows.
pub(crate) fn values(head: &str, row: &str, tail: &str, width: usize, rows: usize) -> String {
    let each: Vec<String> = (0..rows).map(|n| renumbered(row, '?', n * width)).collect();
    format!("{head} {} {tail}", each.join(", "))
        .trim_end()
        .to_owned()
}

/// A JSON array of `values`: a list bound as one parameter, read back by
/// [`json_values`].
pub(crate) fn json_list(values: &[String]) -> StoreResult<String> {
    serde_json::to_string(values).map_err(StoreError::caused)
}

/// The texts of the JSON array bound at `param` (`"?2"`), as a subquery's
/// rows (`x IN ({…})`): SQLite's `json_each`, PostgreSQL's
/// `jsonb_array_elements_text`.
pub(crate) fn json_values(engine: Engine, param: &str) -> String {
    match engine {
        Engine::Sqlite => format!("SELECT value FROM json_each({param})"),
        Engine::Postgres => {
            format!("SELECT jsonb_array_elements_text(CAST(CAST({param} AS TEXT) AS JSONB))")
        }
    }
}

/// A column of a selected list: its name and its position there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Column {
    pub index: usize,
    pub name: &'static str,
}

impl Column {
    /// The column at `index` of an expression list whose names the drivers
    /// spell differently (`CAST(COUNT(*) AS BIGINT)`): read by position only.
    pub const fn nth(index: usize) -> Column {
        Column { index, name: "" }
    }

    /// Whether a driver's name for the column is this one's.
    pub fn is(&self, name: &str) -> bool {
        self.name.is_empty() || name.eq_ignore_ascii_case(self.name)
    }
}

/// `name`'s position in a column list such as `"a, b, c"`; evaluated at
/// compile time, where a missing name is an error.
pub(crate) const fn position(columns: &str, name: &str) -> usize {
    let list = columns.as_bytes();
    let mut start = 0;
    let mut index = 0;
    while start < list.len() {
        while start < list.len() && list[start].is_ascii_whitespace() {
            start += 1;
        }
        let mut end = start;
        while end < list.len() && list[end] != b',' && !list[end].is_ascii_whitespace() {
            end += 1;
        }
        if same(list, start, end, name.as_bytes()) {
            return index;
        }
        while end < list.len() && list[end] != b',' {
            end += 1;
        }
        start = end + 1;
        index += 1;
    }
    panic!("a mapper reads a column its list does not select");
}

/// How many columns a list such as `"a, b, c"` has: the position of a
/// column selected after them.
pub(crate) const fn width(columns: &str) -> usize {
    let list = columns.as_bytes();
    let (mut i, mut commas) = (0, 0);
    while i < list.len() {
        if list[i] == b',' {
            commas += 1;
        }
        i += 1;
    }
    commas + 1
}

/// Whether `list[start..end]` is `name`.
const fn same(list: &[u8], start: usize, end: usize, name: &[u8]) -> bool {
    if end - start != name.len() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if list[start + i] != name[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `col!("name")`: the column `name` of `COLUMNS` (a const in the calling
/// function), placed at compile time; `col!(LIST, "name")` of another list.
macro_rules! col {
    ($name:literal) => {
        $crate::db::col!(COLUMNS, $name)
    };
    ($list:expr, $name:literal) => {
        $crate::db::Column {
            index: const { $crate::db::position($list, $name) },
            name: $name,
        }
    };
}
pub(crate) use col;

/// A row of either driver, read by column. What is stored as an integer is
/// read as `i64` whatever its width; a flag is PostgreSQL's `BOOLEAN` or
/// SQLite's 0/1.
pub(crate) trait RowRead {
    fn int(&self, column: Column) -> StoreResult<Option<i64>>;
    fn text(&self, column: Column) -> StoreResult<Option<String>>;
    fn flag(&self, column: Column) -> StoreResult<Option<bool>>;
    /// The driver's names of the selected columns, in order.
    fn names(&self) -> Vec<String>;
}

/// A value read from a row's column.
pub(crate) trait Value: Sized {
    fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self>;
}

impl dyn RowRead + '_ {
    /// The column's value.
    pub fn get<T: Value>(&self, column: Column) -> StoreResult<T> {
        T::read(self, column)
    }

    /// The column's text, parsed.
    pub fn parsed<T: std::str::FromStr>(&self, column: Column) -> StoreResult<T>
    where
        T::Err: std::fmt::Display,
    {
        let text: String = self.get(column)?;
        parse(column, text)
    }

    /// The column's text parsed, `None` when it is NULL.
    pub fn parsed_opt<T: std::str::FromStr>(&self, column: Column) -> StoreResult<Option<T>>
    where
        T::Err: std::fmt::Display,
    {
        let text: Option<String> = self.get(column)?;
        text.map(|text| parse(column, text)).transpose()
    }

    /// The column's JSON text, read.
    pub fn json<T: serde::de::DeserializeOwned>(&self, column: Column) -> StoreResult<T> {
        let text: String = self.get(column)?;
        serde_json::from_str(&text).map_err(|e| unreadable(column, e))
    }
}

fn parse<T: std::str::FromStr>(column: Column, text: String) -> StoreResult<T>
where
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e| unreadable(column, format!("cannot read {text:?}: {e}")))
}

/// A column whose value cannot be read as asked.
pub(crate) fn unreadable(column: Column, e: impl std::fmt::Display) -> StoreError {
    StoreError::backend(format!("column {}: {e}", column.name))
}

fn present<T>(value: Option<T>, column: Column) -> StoreResult<T> {
    value.ok_or_else(|| unreadable(column, "unexpected NULL"))
}

impl Value for Option<String> {
    fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
        row.text(column)
    }
}

impl Value for Option<bool> {
    fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
        row.flag(column)
    }
}

impl Value for String {
    fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
        present(row.text(column)?, column)
    }
}

impl Value for bool {
    fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
        present(row.flag(column)?, column)
    }
}

/// Integers of every width, read from the stored `i64` (out of range is an error).
macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
                let value = present(row.int(column)?, column)?;
                <$t>::try_from(value).map_err(|e| unreadable(column, e))
            }
        }
        impl Value for Option<$t> {
            fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
                row.int(column)?
                    .map(|v| <$t>::try_from(v).map_err(|e| unreadable(column, e)))
                    .transpose()
            }
        }
    )*};
}
integers!(i64, i32, u32, u64, u16, u8);

impl Value for billpay_domain::Kobo {
    fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
        row.get::<i64>(column).map(billpay_domain::Kobo)
    }
}

impl Value for Option<billpay_domain::Kobo> {
    fn read(row: &dyn RowRead, column: Column) -> StoreResult<Self> {
        Ok(row.get::<Option<i64>>(column)?.map(billpay_domain::Kobo))
    }
}

/// An area's trait, declared and implemented for both engines from one list
/// (`pub trait XStore { fn … }` in `areas/x.rs`): each method
/// names how it runs and the area's function it calls with the engine's [`Tx`]
/// (arguments are taken as owned values first: `to_owned`, or as the
/// method says after `=>`):
///
/// - `write`: one transaction (SQLite: a job of the writer's group commit;
///   PostgreSQL: a pooled transaction, retried whole on a serialisation failure);
/// - `statement`: a write that is one statement, the function given a
///   [`One`] so it cannot run a second (SQLite: as `write`, without the
///   job's savepoint, `Engine::write_bare`; PostgreSQL: autocommitted, no
///   BEGIN/COMMIT round trips);
/// - `claim`: a worker's claim (`areas/claims.rs`), a `statement` that
///   leases a queue's due rows (SQLite: as `statement`; PostgreSQL: in a
///   transaction planned with bitmap scans off, `PostgresStore::in_index_order`,
///   so the due rows' index is walked in order and stops at the claim's
///   `LIMIT` whatever the table's statistics say);
/// - `guarded`: a write whose refusals all come before its first change,
///   the function given a [`Guarded`] (a decision that reads, then a change
///   that cannot refuse); SQLite: as `statement` (should it fail after a
///   change, the engine failed, and its batch is rolled back whole);
///   PostgreSQL: as `write`;
/// - `read`: a read (SQLite: a reader thread; PostgreSQL: a pooled connection),
///   the function given the connection as a [`Reading`] (as are `snapshot`'s
///   and `here`'s), so it takes [`ReadTx`] and cannot write;
/// - `snapshot`: reads that must agree (SQLite: in one read transaction;
///   PostgreSQL: in one read-only `REPEATABLE READ` transaction);
/// - `here`: a point read of the request path, or the few rows of a page's
///   panel (SQLite: this thread's own connection, in one read transaction,
///   `Engine::read_here`; PostgreSQL: as `read`).
///
/// Secrets (`crate::sealing`): an argument marked `#[sealed]` is sealed with
/// the engine's key before it goes to the engine; `opened` after the kind
/// (`= read opened |tx| …`) opens the answer as it leaves. Neither runs on
/// SQLite's writer thread.
///
/// `…, postgres |store| store.method_here(…)` after the call: PostgreSQL
/// runs its own method instead (the area's function as a unit of its
/// group-committed lanes, `postgres/units.rs`), SQLite the area's function
/// as `kind` says.
macro_rules! for_both_engines {
    (
        $(#[$area_meta:meta])*
        pub trait $area:ident {
            $(
                $(#[$meta:meta])*
                fn $name:ident($($(#[$seal:ident])? $arg:ident: $ty:ty $(=> $own:expr)?),* $(,)?)
                    -> $ret:ty
                    = $kind:ident $($open:ident)? |$tx:ident| $call:expr
                    $(, postgres |$pg:ident| $pg_call:expr)?;
            )*
        }
    ) => {
        $(#[$area_meta])*
        #[async_trait::async_trait]
        pub trait $area: Send + Sync + 'static {
            $(
                $(#[$meta])*
                async fn $name(&self, $($arg: $ty),*) -> $crate::StoreResult<$ret>;
            )*
        }

        #[async_trait::async_trait]
        // A borrowed argument is owned for PostgreSQL's closures, not for
        // SQLite's `here`: the one call borrows it for both. An argument
        // already owned (`arg => arg`) is moved into the closure as it is.
        #[allow(clippy::needless_borrow, clippy::redundant_locals)]
        impl $area for $crate::sqlite::SqliteStore {
            $(
                $(#[$meta])*
                async fn $name(&self, $($arg: $ty),*) -> $crate::StoreResult<$ret> {
                    $($crate::db::for_both_engines!(@seal self $arg $($seal)?);)*
                    let answer =
                        $crate::db::for_both_engines!(@sqlite $kind self ($($arg $(=> $own)?),*) $tx $call);
                    $crate::db::for_both_engines!(@open self answer $($open)?)
                }
            )*
        }

        #[async_trait::async_trait]
        #[allow(clippy::redundant_locals)]
        impl $area for $crate::postgres::PostgresStore {
            $(
                $(#[$meta])*
                async fn $name(&self, $($arg: $ty),*) -> $crate::StoreResult<$ret> {
                    $($crate::db::for_both_engines!(@seal self $arg $($seal)?);)*
                    let answer = $crate::db::for_both_engines!(
                        @postgres_own ($($pg $pg_call)?) $kind self ($($arg $(=> $own)?),*) $tx $call
                    );
                    $crate::db::for_both_engines!(@open self answer $($open)?)
                }
            )*
        }
    };
    (@seal $store:ident $arg:ident) => {};
    (@seal $store:ident $arg:ident sealed) => {
        let $arg = $store.sealer.seal($arg)?;
    };
    (@open $store:ident $answer:ident) => {
        $answer
    };
    (@open $store:ident $answer:ident opened) => {
        $store.sealer.open($answer?)
    };
    (@postgres_own ($pg:ident $pg_call:expr) $kind:ident $store:ident $args:tt $tx:ident $call:expr) => {{
        let $pg = $store;
        $pg_call.await
    }};
    (@postgres_own () $kind:ident $store:ident $args:tt $tx:ident $call:expr) => {
        $crate::db::for_both_engines!(@postgres $kind $store $args $tx $call)
    };
    (@sqlite write $($rest:tt)*) => {
        $crate::db::for_both_engines!(@sqlite_writer write ::std::convert::identity, $($rest)*)
    };
    (@sqlite guarded $($rest:tt)*) => {
        $crate::db::for_both_engines!(@sqlite_writer write_bare $crate::db::Guarded::from, $($rest)*)
    };
    (@sqlite statement $($rest:tt)*) => {
        $crate::db::for_both_engines!(@sqlite_writer write_bare $crate::db::One::from, $($rest)*)
    };
    (@sqlite claim $($rest:tt)*) => {
        $crate::db::for_both_engines!(@sqlite statement $($rest)*)
    };
    // The writer's job: `write` in its own savepoint, `write_bare` without;
    // the function given the connection as `$give` makes it (a `One` for
    // `statement`).
    (@sqlite_writer $job:ident $give:path, $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {{
        $(let $arg = $crate::db::for_both_engines!(@own $arg $($own)?);)*
        $store.engine.$job(move |conn| {
            let lite = $crate::sqlite::Lite(conn);
            let $tx = $give(&lite);
            $crate::db::ready($call)
        }).await
    }};
    (@own $arg:ident) => {
        $arg.to_owned()
    };
    (@own $arg:ident $own:expr) => {
        $own
    };
    // The read kinds give the function the connection as a [`Reading`]
    // (no `execute`): a read that writes does not compile.
    (@sqlite read $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {{
        $(let $arg = $crate::db::for_both_engines!(@own $arg $($own)?);)*
        $store.engine.read(move |conn| {
            $crate::db::for_both_engines!(@reading $crate::sqlite::Lite(conn), $tx $call)
        }).await
    }};
    (@sqlite snapshot $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {{
        $(let $arg = $crate::db::for_both_engines!(@own $arg $($own)?);)*
        $store.engine.read(move |conn| {
            $crate::sqlite::agreeing(conn, |conn| {
                $crate::db::for_both_engines!(@reading $crate::sqlite::Lite(conn), $tx $call)
            })
        }).await
    }};
    (@sqlite here $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {
        $store.engine.read_here(|conn| {
            $crate::db::for_both_engines!(@reading $crate::sqlite::Lite(conn), $tx $call)
        })
    };
    (@reading $conn:expr, $tx:ident $call:expr) => {{
        let conn = $conn;
        let reading = $crate::db::Reading::from(&conn);
        let $tx = &reading;
        $crate::db::ready($call)
    }};
    (@postgres write $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {{
        $(let $arg = $crate::db::for_both_engines!(@own $arg $($own)?);)*
        $store.write(move |t| {
            $(let $arg = $arg.clone();)*
            Box::pin(async move {
                let pg = $crate::postgres::Pg(t);
                let $tx = &pg;
                $call.await
            })
        }).await
    }};
    (@postgres guarded $($rest:tt)*) => {
        $crate::db::for_both_engines!(@postgres write $($rest)*)
    };
    (@postgres snapshot $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {{
        $(let $arg = $crate::db::for_both_engines!(@own $arg $($own)?);)*
        $store.snapshot(move |t| {
            Box::pin(async move {
                $crate::db::for_both_engines!(@pg_reading t, $tx $call)
            })
        }).await
    }};
    // A statement, autocommitted; a claim, in a transaction whose planner
    // walks the due rows' index in order. Either given as a [`One`].
    (@postgres statement $($rest:tt)*) => {
        $crate::db::for_both_engines!(@postgres_one autocommit $($rest)*)
    };
    (@postgres claim $($rest:tt)*) => {
        $crate::db::for_both_engines!(@postgres_one in_index_order $($rest)*)
    };
    (@postgres_one $run:ident $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {{
        $(let $arg = $crate::db::for_both_engines!(@own $arg $($own)?);)*
        $store.$run(move |c| {
            Box::pin(async move {
                let pg = $crate::postgres::Pg(c);
                let $tx = $crate::db::One::from(&pg);
                $call.await
            })
        }).await
    }};
    // `read` and `here`: autocommitted reads.
    (@postgres $read_or_here:ident $store:ident ($($arg:ident $(=> $own:expr)?),*) $tx:ident $call:expr) => {{
        $(let $arg = $crate::db::for_both_engines!(@own $arg $($own)?);)*
        $store.autocommit(move |c| {
            Box::pin(async move {
                $crate::db::for_both_engines!(@pg_reading c, $tx $call)
            })
        }).await
    }};
    // PostgreSQL's transaction or connection `$conn` given as a [`Reading`].
    (@pg_reading $conn:ident, $tx:ident $call:expr) => {{
        let pg = $crate::postgres::Pg($conn);
        let reading = $crate::db::Reading::from(&pg);
        let $tx = &reading;
        $call.await
    }};
}
pub(crate) use for_both_engines;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_rows_number_each_rows_placeholders_on() {
        static ROWS: ManyRows = ManyRows::new(2, |width, rows| {
            values(
                "INSERT INTO t (a, b, c) VALUES",
                "(?1, 'x?1', ?2)",
                "ON CONFLICT DO NOTHING",
                width,
                rows,
            )
        });
        assert_eq!(
            ROWS.sql(1),
            "INSERT INTO t (a, b, c) VALUES (?1, 'x?1', ?2) ON CONFLICT DO NOTHING"
        );
        assert_eq!(
            ROWS.sql(3),
            "INSERT INTO t (a, b, c) VALUES (?1, 'x?1', ?2), (?3, 'x?1', ?4), (?5, 'x?1', ?6) \
             ON CONFLICT DO NOTHING"
        );
    }

    #[test]
    fn placeholders_are_rewritten_outside_quotes_only() {
        let sql = "SELECT '?1', \"a?2\" FROM t WHERE a = ?1 AND b = ?12 AND c = ? AND d = '?'";
        assert_eq!(
            to_dollar_placeholders(sql),
            "SELECT '?1', \"a?2\" FROM t WHERE a = $1 AND b = $12 AND c = ? AND d = '?'"
        );
    }

    #[test]
    fn a_name_is_placed_at_its_position_in_its_list() {
        assert_eq!(position("a, ab,\n  b", "b"), 2);
        assert_eq!(position("a, ab,\n  b", "ab"), 1);
        assert_eq!(position("a, ab,\n  b", "a"), 0);
    }

    #[test]
    fn ready_answers_a_future_that_does_not_wait() {
        assert_eq!(ready(async { Ok(7) }).unwrap(), 7);
    }
}
