//! Throw-away databases for tests and benchmarks: `CREATE DATABASE
//! billpay_t_<random>` on a server, `DROP DATABASE … WITH (FORCE)` on drop.

use crate::{StoreError, StoreResult};
use tokio_postgres::NoTls;

pub struct ScratchDatabase {
    /// The new database's URL.
    pub url: String,
    admin_url: String,
    name: String,
}

/// `postgres://u@h:5432/db?x=y` with another database name.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let host_start = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[host_start..]
        .find('/')
        .map_or(base.len(), |i| host_start + i);
    format!("{}/{database}{query}", &base[..host_end])
}

async fn admin(url: &str) -> StoreResult<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| StoreError::caused_in("cannot connect to PostgreSQL", e))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

impl ScratchDatabase {
    /// Creates an empty database on the server `admin_url` points at
    /// (that URL's database is only used to run `CREATE DATABASE`).
    pub async fn create(admin_url: &str) -> StoreResult<ScratchDatabase> {
        use rand::Rng;
        let name = format!(
            "billpay_t_{}_{:08x}",
            std::process::id(),
            rand::rng().random::<u32>()
        );
        let client = admin(admin_url).await?;
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .await
            .map_err(|e| StoreError::caused_in(format!("CREATE DATABASE {name}"), e))?;
        Ok(ScratchDatabase {
            url: with_database(admin_url, &name),
            admin_url: admin_url.to_owned(),
            name,
        })
    }

    /// A database created for a unit test on the server
    /// `BILLPAY_TEST_POSTGRES_URL` names; `None` (the test says it is
    /// skipped) when that is unset.
    #[cfg(test)]
    pub(crate) async fn for_test() -> Option<ScratchDatabase> {
        let url = std::env::var("BILLPAY_TEST_POSTGRES_URL").unwrap_or_default();
        if url.is_empty() {
            eprintln!("SKIPPED: set BILLPAY_TEST_POSTGRES_URL to run it");
            return None;
        }
        Some(ScratchDatabase::create(&url).await.unwrap())
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop may run inside an async runtime: use a thread with its own.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let client = admin(&admin_url).await.map_err(|e| e.to_string())?;
                client
                    .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .await
                    .map_err(|e| e.to_string())
            })
        })
        .join();
        if let Ok(Err(e)) = dropped {
            eprintln!("could not drop scratch database {}: {e}", self.name);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn swaps_the_database_name() {
        use super::with_database;
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(with_database("postgresql://h", "x"), "postgresql://h/x");
    }
}
