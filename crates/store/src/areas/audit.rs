//! The audit: every check of [`crate::audit::CHECKS`] on one snapshot, each
//! offending row read column by column as text.

use crate::audit::{
    AuditRow, CheckOutcome, EMAILS_RESOLVE, EmailCollision, ONE_ACCOUNT_PER_ADDRESS,
    ONE_ACCOUNT_PER_ADDRESS_RULE, sql_checks,
};
use crate::db::{Column, ReadTx, RowRead, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::EmailAddress;
use std::collections::BTreeMap;

for_both_engines! {
    pub trait AuditStore {
        /// Runs every SQL check ([`crate::audit::CHECKS`] and the sales
        /// rollup's) on one consistent snapshot.
        fn audit() -> Vec<CheckOutcome> = snapshot |tx| run(tx);
        /// Accounts whose addresses are one canonical address (oldest first).
        fn email_collisions() -> Vec<EmailCollision> = read |tx| email_collisions(tx);
        /// Stores each account's address in its canonical form where it
        /// parses and no other account reaches that mailbox (a group is
        /// left as it is, for the operator); how many were rewritten.
        fn canonicalize_emails() -> u64 = write |tx| canonicalize(tx);
    }
}

async fn run<T: ReadTx>(tx: &T) -> Result<Vec<CheckOutcome>, T::Error> {
    let mut outcomes = Vec::new();
    for check in sql_checks() {
        outcomes.push(CheckOutcome {
            name: check.name,
            rule: check.rule,
            violations: tx.query_all(check.sql, &[], as_text).await?,
        });
    }
    let mut violations = Vec::new();
    for collision in email_collisions(tx).await? {
        for (account, email) in collision.accounts {
            let row = [
                ("account_id", account),
                ("email", email),
                ("canonical", collision.canonical.clone()),
                ("resolve", EMAILS_RESOLVE.to_owned()),
            ];
            violations.push(row.map(|(k, v)| (k.to_owned(), Some(v))).into());
        }
    }
    outcomes.push(CheckOutcome {
        name: ONE_ACCOUNT_PER_ADDRESS,
        rule: ONE_ACCOUNT_PER_ADDRESS_RULE,
        violations,
    });
    Ok(outcomes)
}

/// Every account's stored address read as the mailbox it reaches
/// ([`EmailAddress::mailbox_of`]), grouped: the groups of more than one.
/// An address that reaches no mailbox (an erased account's tombstone) is
/// in no group.
async fn email_collisions<T: ReadTx>(tx: &T) -> Result<Vec<EmailCollision>, T::Error> {
    Ok(by_mailbox(all_emails(tx).await?)
        .into_iter()
        .filter(|(_, accounts)| accounts.len() > 1)
        .map(|(canonical, accounts)| EmailCollision {
            canonical,
            accounts,
        })
        .collect())
}

/// Every column of an audit query's row (each selected as text) by its name.
fn as_text(row: &dyn RowRead) -> StoreResult<AuditRow> {
    let names = row.names().into_iter().enumerate();
    names
        .map(|(i, name)| Ok((name, row.text(Column::nth(i))?)))
        .collect()
}

/// Every account's id and address as stored, oldest first.
async fn all_emails<T: ReadTx>(tx: &T) -> Result<Vec<(String, String)>, T::Error> {
    const COLUMNS: &str = "id, email";
    let sql = "SELECT id, email FROM accounts ORDER BY created_at, id";
    tx.query_all(sql, &[], |row| {
        Ok((row.get(col!("id"))?, row.get(col!("email"))?))
    })
    .await
}

/// The accounts by the mailbox their address reaches.
fn by_mailbox(rows: Vec<(String, String)>) -> BTreeMap<String, Vec<(String, String)>> {
    let mut groups: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (id, email) in rows {
        if let Some(mailbox) = EmailAddress::mailbox_of(&email) {
            groups
                .entry(mailbox.into_string())
                .or_default()
                .push((id, email));
        }
    }
    groups
}

/// See [`AuditStore::canonicalize_emails`]: an address that parses and
/// reaches a mailbox no other account does is rewritten as it parses (an
/// `É` stored before lowercasing was Unicode's, which SQLite's `NOCASE`
/// would not find as `é`). Never two accounts made one.
async fn canonicalize<T: Tx>(tx: &T) -> Result<u64, T::Error> {
    let groups = by_mailbox(all_emails(tx).await?);
    let mut rewritten = 0;
    for (canonical, accounts) in groups {
        let [(id, stored)] = accounts.as_slice() else {
            continue;
        };
        if *stored == canonical || EmailAddress::parse(stored).is_err() {
            continue;
        }
        let sql = "UPDATE accounts SET email = ?1 WHERE id = ?2 AND email = ?3";
        rewritten += tx.execute(sql, &[&canonical, id, stored]).await?;
    }
    Ok(rewritten)
}
