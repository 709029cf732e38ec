//! The money invariants `billpay audit` proves, as SQL that runs unchanged on
//! SQLite and PostgreSQL. Each check selects the rows that break its rule
//! (every column cast to text), so a clean database selects nothing and a
//! violation names its offending rows.

use serde::Serialize;
use std::collections::BTreeMap;

/// One invariant and the query that finds the rows breaking it.
pub struct Check {
    pub name: &'static str,
    pub rule: &'static str,
    pub sql: &'static str,
}

/// An offending row: column name → value (`None` for SQL NULL).
pub type AuditRow = BTreeMap<String, Option<String>>;

#[derive(Debug, Clone, Serialize)]
pub struct CheckOutcome {
    pub name: &'static str,
    pub rule: &'static str,
    pub violations: Vec<AuditRow>,
}

impl CheckOutcome {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

pub const CHECKS: &[Check] = &[
    Check {
        name: "balance_equals_ledger",
        rule: "every wallet balance equals the sum of its ledger entries",
        sql: "SELECT a.id AS account_id, CAST(a.balance AS TEXT) AS balance,
                     CAST(COALESCE(SUM(l.amount), 0) AS TEXT) AS ledger_sum
              FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id
              GROUP BY a.id, a.balance
              HAVING a.balance <> COALESCE(SUM(l.amount), 0)",
    },
    Check {
        name: "no_negative_balance",
        rule: "no wallet balance, and no balance after a ledger entry, is negative",
        sql: "SELECT id AS account_id, CAST(NULL AS TEXT) AS ledger_id, CAST(balance AS TEXT) AS balance
              FROM accounts WHERE balance < 0
              UNION ALL
              SELECT account_id, CAST(id AS TEXT), CAST(balance_after AS TEXT)
              FROM ledger WHERE balance_after < 0",
    },
    Check {
        name: "ledger_running_balance",
        rule: "each ledger entry's balance_after is the running sum of its account's entries",
        sql: "SELECT account_id, CAST(id AS TEXT) AS ledger_id,
                     CAST(balance_after AS TEXT) AS balance_after, CAST(running AS TEXT) AS running_sum
              FROM (SELECT id, account_id, balance_after,
                           SUM(amount) OVER (PARTITION BY account_id ORDER BY id) AS running
                    FROM ledger) entries
              WHERE balance_after <> running",
    },
    Check {
        name: "debited_once",
        rule: "every purchase is debited exactly once, by its stored charged amount (its tier's price)",
        sql: "SELECT t.code AS reference_code, CAST(t.amount AS TEXT) AS amount,
                     CAST(COUNT(l.id) AS TEXT) AS debits, CAST(COALESCE(SUM(l.amount), 0) AS TEXT) AS debited
              FROM transactions t
              LEFT JOIN ledger l ON l.transaction_code = t.code AND l.kind = 'debit'
              GROUP BY t.code, t.amount
              HAVING COUNT(l.id) <> 1 OR SUM(l.amount) <> -t.amount",
    },
    Check {
        name: "priced_purchase",
        rule: "every purchase's charged amount and face value are positive; a supplier cost is recorded only for a successful one, and is not negative",
        sql: "SELECT code AS reference_code, status, CAST(amount AS TEXT) AS charged,
                     CAST(face_value AS TEXT) AS face_value, CAST(cost AS TEXT) AS cost
              FROM transactions
              WHERE amount <= 0 OR face_value <= 0
                 OR (cost IS NOT NULL AND (cost < 0 OR status <> 'successful'))",
    },
    Check {
        name: "refunded_once_if_failed",
        rule: "every failed purchase is refunded exactly once, by its amount; no other purchase is refunded",
        sql: "SELECT t.code AS reference_code, t.status, CAST(t.amount AS TEXT) AS amount,
                     CAST(COUNT(l.id) AS TEXT) AS refunds, CAST(COALESCE(SUM(l.amount), 0) AS TEXT) AS refunded
              FROM transactions t
              LEFT JOIN ledger l ON l.transaction_code = t.code AND l.kind = 'refund'
              GROUP BY t.code, t.status, t.amount
              HAVING (t.status = 'failed' AND (COUNT(l.id) <> 1 OR SUM(l.amount) <> t.amount))
                  OR (t.status <> 'failed' AND COUNT(l.id) > 0)",
    },
    Check {
        name: "final_has_one_event",
        rule: "every final purchase has exactly one webhook event; a processing one has none",
        sql: "SELECT t.code AS reference_code, t.status, CAST(COUNT(e.id) AS TEXT) AS events
              FROM transactions t LEFT JOIN events e ON e.transaction_code = t.code
              GROUP BY t.code, t.status
              HAVING (t.status <> 'processing' AND COUNT(e.id) <> 1)
                  OR (t.status = 'processing' AND COUNT(e.id) > 0)",
    },
    Check {
        name: "reference_used_once",
        rule: "no purchase reference is used twice by one account",
        sql: "SELECT account_id, reference, CAST(COUNT(*) AS TEXT) AS uses
              FROM transactions GROUP BY account_id, reference HAVING COUNT(*) > 1",
    },
    Check {
        name: "credit_reference_once",
        rule: "every wallet credit reference is counted once per account and source",
        // A credit from before sources has none: an operator's (CreditSource).
        sql: "SELECT account_id, COALESCE(credit_source, 'operator') AS credit_source,
                     credit_reference, CAST(COUNT(*) AS TEXT) AS credits
              FROM ledger WHERE credit_reference IS NOT NULL
              GROUP BY account_id, COALESCE(credit_source, 'operator'), credit_reference
              HAVING COUNT(*) > 1",
    },
];
