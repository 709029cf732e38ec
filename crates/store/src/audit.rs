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

/// Accounts whose addresses, stored before every address entered through
/// `billpay_domain::EmailAddress::parse`, reach one mailbox: one canonical
/// address (`EmailAddress::mailbox_of` of each). Never merged: an operator
/// decides which account keeps the address ([`EMAILS_RESOLVE`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmailCollision {
    /// The one canonical address they share.
    pub canonical: String,
    /// Each account's id and its address as stored, oldest first.
    pub accounts: Vec<(String, String)>,
}

/// The audit's check of [`EmailCollision`]s (computed in Rust: SQL cannot
/// normalise Unicode or lowercase it on SQLite).
pub const ONE_ACCOUNT_PER_ADDRESS: &str = "one_account_per_address";
/// Its rule, as `billpay audit` prints it.
pub const ONE_ACCOUNT_PER_ADDRESS_RULE: &str =
    "no two accounts' email addresses are one canonical address (one mailbox)";
/// Every check's name, in the order the audit reports them: the SQL
/// checks ([`sql_checks`]), then [`ONE_ACCOUNT_PER_ADDRESS`] (computed in Rust).
pub fn check_names() -> impl Iterator<Item = &'static str> {
    sql_checks()
        .map(|check| check.name)
        .chain([ONE_ACCOUNT_PER_ADDRESS])
}

/// The checks that are one query each: [`CHECKS`], then the sales rollup's
/// (its statement built from the rollup's one rule, `areas/sales_rollup.rs`).
pub fn sql_checks() -> impl Iterator<Item = &'static Check> {
    CHECKS.iter().chain([&*crate::areas::sales_rollup::CHECK])
}

/// How an operator resolves one, as the audit and `serve`'s warning say.
pub const EMAILS_RESOLVE: &str = "keep the address on one account: have the other owners change their address on the dashboard's account page, or close the other accounts (billpay accounts close); accounts are never merged automatically";

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
    Check {
        name: "funding_credited_exactly",
        rule: "every credited bank-transfer payment has exactly its ledger entries on its account \
               (the payment, then the fee if any): payment − fee = the wallet credit; \
               a payment not credited has none",
        sql: "SELECT f.id AS funding_id, f.status, CAST(f.amount AS TEXT) AS amount, CAST(f.fee AS TEXT) AS fee,
                     CAST(SUM(CASE WHEN l.kind = 'credit' THEN 1 ELSE 0 END) AS TEXT) AS payments,
                     CAST(COALESCE(SUM(CASE WHEN l.kind = 'credit' THEN l.amount END), 0) AS TEXT) AS paid,
                     CAST(SUM(CASE WHEN l.kind = 'fee' THEN 1 ELSE 0 END) AS TEXT) AS fees,
                     CAST(COALESCE(SUM(CASE WHEN l.kind = 'fee' THEN l.amount END), 0) AS TEXT) AS fee_entries
              FROM funding_events f LEFT JOIN ledger l ON l.funding_id = f.id
              GROUP BY f.id, f.status, f.amount, f.fee, f.account_id
              HAVING (f.status = 'credited' AND (
                         SUM(CASE WHEN l.kind = 'credit' THEN 1 ELSE 0 END) <> 1
                      OR COALESCE(SUM(CASE WHEN l.kind = 'credit' THEN l.amount END), 0) <> f.amount
                      OR SUM(CASE WHEN l.kind = 'fee' THEN 1 ELSE 0 END) <> CASE WHEN f.fee > 0 THEN 1 ELSE 0 END
                      OR COALESCE(SUM(CASE WHEN l.kind = 'fee' THEN l.amount END), 0) <> -f.fee
                      OR SUM(CASE WHEN l.account_id <> f.account_id OR f.account_id IS NULL THEN 1 ELSE 0 END) > 0
                      OR SUM(CASE WHEN l.kind NOT IN ('credit', 'fee') THEN 1 ELSE 0 END) > 0))
                  OR (f.status <> 'credited' AND COUNT(l.id) > 0)",
    },
    Check {
        name: "funding_entries_have_a_payment",
        rule: "every fee and every gateway credit in the ledger belongs to a credited payment (an upgrade's fee is checked by upgrade_fee_moved_one_tier_change, a bonus moved to the wallet by bonus_moved_once_to_the_wallet)",
        sql: "SELECT l.account_id, CAST(l.id AS TEXT) AS ledger_id, l.kind, l.funding_id, l.credit_reference
              FROM ledger l LEFT JOIN funding_events f ON f.id = l.funding_id
              WHERE (l.kind = 'fee' OR l.funding_id IS NOT NULL
                     OR COALESCE(l.credit_source, 'operator') NOT IN ('operator', 'upgrade', 'referral'))
                AND (f.id IS NULL OR f.status <> 'credited'
                     OR (l.kind = 'credit' AND (l.credit_source <> f.gateway
                                                OR l.credit_reference <> f.gateway_reference)))",
    },
    Check {
        name: "gateway_reference_credited_once",
        rule: "no gateway payment reference is credited twice, to any account",
        sql: "SELECT credit_source, credit_reference, CAST(COUNT(*) AS TEXT) AS credits
              FROM ledger WHERE kind = 'credit'
                AND COALESCE(credit_source, 'operator') NOT IN ('operator', 'referral')
              GROUP BY credit_source, credit_reference HAVING COUNT(*) > 1",
    },
    Check {
        name: "upgrade_fee_moved_one_tier_change",
        rule: "each upgrade fee moved exactly one tier change: every upgrade has exactly one fee entry \
               on its account, by its fee, and every upgrade fee in the ledger has its upgrade",
        // The fee's entry is found by the unique (account, source, reference) index.
        sql: "SELECT u.account_id, u.reference, u.tier, CAST(u.fee AS TEXT) AS fee,
                     CAST(COUNT(l.id) AS TEXT) AS fee_entries,
                     CAST(COALESCE(SUM(l.amount), 0) AS TEXT) AS debited
              FROM tier_upgrades u
              LEFT JOIN ledger l ON l.account_id = u.account_id
                   AND COALESCE(l.credit_source, 'operator') = 'upgrade'
                   AND l.credit_reference = u.reference
              GROUP BY u.id, u.account_id, u.reference, u.tier, u.fee
              HAVING COUNT(l.id) <> 1 OR SUM(l.amount) <> -u.fee
                  OR SUM(CASE WHEN l.kind = 'debit' THEN 0 ELSE 1 END) > 0
              UNION ALL
              SELECT l.account_id, l.credit_reference, CAST(NULL AS TEXT), CAST(NULL AS TEXT),
                     CAST(1 AS TEXT), CAST(l.amount AS TEXT)
              FROM ledger l
              WHERE l.credit_source = 'upgrade'
                AND NOT EXISTS (SELECT 1 FROM tier_upgrades u
                                WHERE u.account_id = l.account_id AND u.reference = l.credit_reference)",
    },
    Check {
        name: "bonus_balance_equals_entries",
        rule: "every bonus balance equals the sum of its entries, and each entry's balance_after \
               is the running sum of its account's entries",
        sql: "SELECT b.account_id, CAST(NULL AS TEXT) AS entry_id, CAST(b.balance AS TEXT) AS balance,
                     CAST(COALESCE(SUM(e.amount), 0) AS TEXT) AS entries_sum
              FROM bonus_balances b LEFT JOIN bonus_entries e ON e.account_id = b.account_id
              GROUP BY b.account_id, b.balance
              HAVING b.balance <> COALESCE(SUM(e.amount), 0)
              UNION ALL
              SELECT e.account_id, CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(SUM(e.amount) AS TEXT)
              FROM bonus_entries e
              WHERE NOT EXISTS (SELECT 1 FROM bonus_balances b WHERE b.account_id = e.account_id)
              GROUP BY e.account_id
              UNION ALL
              SELECT account_id, CAST(id AS TEXT), CAST(balance_after AS TEXT), CAST(running AS TEXT)
              FROM (SELECT id, account_id, balance_after,
                           SUM(amount) OVER (PARTITION BY account_id ORDER BY id) AS running
                    FROM bonus_entries) entries
              WHERE balance_after <> running",
    },
    Check {
        name: "commission_only_for_a_successful_purchase",
        rule: "a commission stands only for a successful purchase by a referee of its referrer, \
               is one bonus entry of its amount, and one reversal takes back a reversed one; \
               every commission or reversal entry has its commission",
        sql: "SELECT c.transaction_code, c.referrer_id, t.status, CAST(c.amount AS TEXT) AS amount,
                     c.reversed_at,
                     CAST((SELECT COUNT(*) FROM bonus_entries e WHERE e.transaction_code = c.transaction_code
                           AND e.kind = 'commission' AND e.account_id = c.referrer_id
                           AND e.amount = c.amount) AS TEXT) AS earned_entries,
                     CAST((SELECT COUNT(*) FROM bonus_entries e WHERE e.transaction_code = c.transaction_code
                           AND e.kind = 'reversal' AND e.account_id = c.referrer_id
                           AND e.amount = -c.amount) AS TEXT) AS reversal_entries
              FROM referral_commissions c
              LEFT JOIN transactions t ON t.code = c.transaction_code
              LEFT JOIN referrals r ON r.referee_id = c.referee_id
              WHERE t.code IS NULL OR t.account_id <> c.referee_id
                 OR r.referrer_id IS NULL OR r.referrer_id <> c.referrer_id
                 OR (c.reversed_at IS NULL AND t.status <> 'successful')
                 OR (c.reversed_at IS NOT NULL AND t.status <> 'failed')
                 OR (SELECT COUNT(*) FROM bonus_entries e WHERE e.transaction_code = c.transaction_code
                     AND e.kind = 'commission' AND e.account_id = c.referrer_id
                     AND e.amount = c.amount) <> 1
                 OR (SELECT COUNT(*) FROM bonus_entries e WHERE e.transaction_code = c.transaction_code
                     AND e.kind = 'reversal' AND e.account_id = c.referrer_id
                     AND e.amount = -c.amount)
                    <> CASE WHEN c.reversed_at IS NULL THEN 0 ELSE 1 END
              UNION ALL
              SELECT e.transaction_code, e.account_id, e.kind, CAST(e.amount AS TEXT), CAST(NULL AS TEXT),
                     CAST(NULL AS TEXT), CAST(NULL AS TEXT)
              FROM bonus_entries e
              WHERE e.kind IN ('commission', 'reversal')
                AND NOT EXISTS (SELECT 1 FROM referral_commissions c
                                WHERE c.transaction_code = e.transaction_code)",
    },
    Check {
        name: "bonus_moved_once_to_the_wallet",
        rule: "every bonus moved to the wallet is one wallet credit (source referral) of its amount \
               and reference on its account, and every such credit has its bonus entry",
        sql: "SELECT e.account_id, e.reference, CAST(-e.amount AS TEXT) AS moved,
                     CAST(COUNT(l.id) AS TEXT) AS credits, CAST(COALESCE(SUM(l.amount), 0) AS TEXT) AS credited
              FROM bonus_entries e
              LEFT JOIN ledger l ON l.account_id = e.account_id AND l.credit_source = 'referral'
                   AND l.credit_reference = e.reference
              WHERE e.kind = 'withdrawal'
              GROUP BY e.id, e.account_id, e.reference, e.amount
              HAVING COUNT(l.id) <> 1 OR SUM(l.amount) <> -e.amount
                  OR SUM(CASE WHEN l.kind = 'credit' THEN 0 ELSE 1 END) > 0
              UNION ALL
              SELECT l.account_id, l.credit_reference, CAST(NULL AS TEXT), CAST(1 AS TEXT),
                     CAST(l.amount AS TEXT)
              FROM ledger l
              WHERE l.credit_source = 'referral'
                AND NOT EXISTS (SELECT 1 FROM bonus_entries e WHERE e.account_id = l.account_id
                                AND e.kind = 'withdrawal' AND e.reference = l.credit_reference)",
    },
];
