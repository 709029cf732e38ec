//! The schema's migrations, once for both engines: one list, one numbering (a
//! step's version is its place in [`MIGRATIONS`]), a folder per step in
//! `crates/store/migrations/`: its `both.sql`, then the engine's own `sqlite.sql`
//! or `postgres.sql` (absent: nothing). `both.sql` is in PostgreSQL's types,
//! which SQLite reads as its schema spells them ([`FOR_SQLITE`]: types, and
//! `chr(n)` as `char(n)`); PostgreSQL drops `WITHOUT ROWID`. Adding a step:
//! its folder and one line below. A step may end with a statement the store
//! builds (`=> path`, a `fn() -> String` in both engines' SQL) when the same
//! statement serves elsewhere too (038's backfill of the sales rollup).

use crate::db::Engine;

pub struct Migration {
    pub name: &'static str,
    both: Option<&'static str>,
    sqlite: Option<&'static str>,
    postgres: Option<&'static str>,
    /// Run last: a statement the store also runs elsewhere.
    then: Option<fn() -> String>,
}

/// `"NNN_name": both postgres;`: a step's folder and the files it has.
macro_rules! migrations {
    ($($name:literal: $($file:ident)+ $(=> $then:path)?;)*) => {
        &[$(Migration {
            $($file: Some(include_str!(concat!("../migrations/", $name, "/", stringify!($file), ".sql"))),)+
            $(then: Some($then),)?
            ..Migration { name: $name, both: None, sqlite: None, postgres: None, then: None }
        },)*]
    };
}

/// Applied databases have run these: never edit one, add the next.
pub const MIGRATIONS: &[Migration] = migrations! {
    "001_initial": sqlite postgres;
    "002_sessions": sqlite;
    "003_supplier": both;
    "004_events_due_by_key": both;
    "005_ledger_by_transaction": both;
    "006_credit_source": both;
    "007_pricing": both postgres;
    "008_funding": both sqlite postgres;
    "009_operators": both sqlite postgres;
    "010_totp_step": both;
    "011_reversal_watch": both;
    "012_last_cost": both;
    "013_notices": both;
    "014_notice_outbox": both;
    "015_operator_alerts": both;
    "016_account_care": both;
    "017_shop_buying": both;
    "018_checkouts": both;
    "019_notice_watches": both;
    "020_checkouts_abandoned": sqlite postgres;
    "021_privacy": both sqlite postgres;
    "022_limits": both postgres;
    "023_velocity": both postgres;
    "024_checks_as_comparisons": sqlite;
    "025_transactions_by_time": both;
    "026_pin_checks_in_flight": both;
    "027_canonical_emails": sqlite postgres;
    "028_canonical_recipients": both;
    "029_throttles": both;
    "030_proven_phones": both;
    "031_first_session": both;
    "032_brand": both;
    "033_supplier_health": both;
    "034_developer_access": both;
    "035_beneficiary_fields": both;
    "036_level_zero_name": both;
    "037_review_requested": both;
    "038_sales_rollup": both => crate::areas::sales_rollup::backfill_unsharded;
    "039_batches": both sqlite postgres;
    "040_schedules": both;
    "041_upgrades": both;
    "042_tier_developer_access": both;
    "043_referrals": both;
    "044_sales_rollup_shards": both;
    "045_placement_functions_dropped": postgres;
    "046_sales_rollup_folded": both;
    "047_batch_id_partial": postgres;
};

/// PostgreSQL's spellings in a `both.sql`, as SQLite's schema has them.
const FOR_SQLITE: &[(&str, &str)] = &[
    ("BIGSERIAL PRIMARY KEY", "INTEGER PRIMARY KEY AUTOINCREMENT"),
    ("BIGINT", "INTEGER"),
    ("BOOLEAN", "INTEGER"),
    ("DEFAULT TRUE", "DEFAULT 1"),
    ("DEFAULT FALSE", "DEFAULT 0"),
    (" COLLATE \"C\"", ""),
    ("chr(", "char("),
];

impl Migration {
    /// What this step runs on `engine` (empty: nothing).
    pub(crate) fn sql(&self, engine: Engine) -> String {
        let (own, spellings) = match engine {
            Engine::Sqlite => (self.sqlite, FOR_SQLITE),
            Engine::Postgres => (self.postgres, &[(" WITHOUT ROWID", "")][..]),
        };
        let both = self.both.map(|sql| {
            let read = |sql: String, (from, to): &(&str, &str)| sql.replace(from, to);
            spellings.iter().fold(sql.to_owned(), read)
        });
        let then = self.then.map(|then| then() + ";");
        [both.as_deref(), own, then.as_deref()]
            .map(Option::unwrap_or_default)
            .join("\n")
    }
}

/// Migrates `database_url` up to step `last` and stops: for the migrations' tests.
#[doc(hidden)]
pub async fn migrate_to(database_url: &str, last: usize) -> crate::StoreResult<()> {
    if crate::is_postgres_url(database_url) {
        return crate::postgres::migrate(&crate::postgres::pool(database_url, 1)?, last).await;
    }
    let path = crate::sqlite::path_from_url(database_url)?;
    crate::sqlite::migrate(&crate::sqlite::connect(&path)?, last)
}
