//! Operators (the people who run the business from the console or the CLI),
//! their sessions, and the append-only log of what they did. Operators are
//! not customers: their own table, sessions and cookies.

use crate::model::text_enum;
use serde::Serialize;

/// What an operator may do: `owner` everything; `support` reads everything
/// and may requery/resolve purchases and resend webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OperatorRole {
    Owner,
    Support,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OperatorStatus {
    Active,
    Disabled,
}

text_enum!(OperatorRole { Owner = "owner", Support = "support" });
text_enum!(OperatorStatus { Active = "active", Disabled = "disabled" });

#[derive(Debug, Clone)]
pub struct NewOperator {
    pub email: String,
    pub role: OperatorRole,
    /// argon2id (PHC string).
    pub password_hash: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Operator {
    pub id: i64,
    pub email: String,
    pub role: OperatorRole,
    pub status: OperatorStatus,
    #[serde(skip)]
    pub password_hash: String,
    /// The TOTP secret (base32), sealed under the master key; `None`: no second factor.
    #[serde(skip)]
    pub totp_secret_sealed: Option<String>,
    pub created_at: String,
}

impl Operator {
    pub fn totp_enabled(&self) -> bool {
        self.totp_secret_sealed.is_some()
    }
}

/// A change to an operator. Disabling or a new password ends its sessions.
#[derive(Debug, Clone)]
pub enum OperatorChange {
    Status(OperatorStatus),
    PasswordHash(String),
    TotpSecretSealed(Option<String>),
}

/// An operator's console session (the token's SHA-256 is the key).
#[derive(Debug, Clone)]
pub struct OperatorSession {
    pub operator_id: i64,
    pub expires_at_ms: i64,
    /// The last request seen with it (the idle timeout counts from here).
    pub last_seen_ms: i64,
}

/// One line of the operator log, as written: who (`actor`: `cli` or
/// `operator`, with the operator's id and email), what (`action`, its
/// `subject`), the state `before` and `after`, and the `reason` typed.
#[derive(Debug, Clone, Default)]
pub struct NewLogEntry {
    pub actor: String,
    pub operator_id: Option<i64>,
    pub operator_email: Option<String>,
    pub action: String,
    pub subject: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub reason: Option<String>,
}

/// A line of the operator log, as stored (append-only: never updated or deleted).
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub operator_id: Option<i64>,
    pub operator_email: Option<String>,
    pub action: String,
    pub subject: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub reason: Option<String>,
}

/// Which log lines: newest first.
#[derive(Debug, Clone, Default)]
pub struct LogFilter {
    /// Exact subject (an account id, a transaction code, an operator's email).
    pub subject: Option<String>,
    pub operator_id: Option<i64>,
    pub limit: u32,
    pub offset: u32,
}

/// Sales since a moment: what the console's overview counts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SalesSummary {
    pub successful_count: u64,
    pub successful_value: i64,
    pub failed_count: u64,
    pub refunded_value: i64,
    pub processing_count: u64,
}

/// One supplier's purchases of one outcome since a moment (the console's
/// suppliers page). The store keeps no supplier round-trip time: the mean is
/// of placed → final (`completed_at − created_at`), queueing and retries included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SupplierOutcome {
    /// `None`: not yet sent to any supplier.
    pub supplier: Option<String>,
    pub status: billpay_domain::TxStatus,
    pub count: u64,
    /// Mean milliseconds from placed to final; `None` while processing.
    pub mean_final_ms: Option<i64>,
}

/// The supplier cost of a plan's most recent successful purchase whose cost
/// is known ([`crate::OperatorStore::last_plan_costs`]): what the console
/// compares a price with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanCost {
    pub provider: String,
    pub plan_id: String,
    /// What the supplier charged for one purchase of it.
    pub cost: billpay_domain::Kobo,
    /// When that purchase completed (RFC 3339).
    pub at: String,
}

/// Both backends' [`crate::OperatorStore::last_plan_costs`]: per provider and
/// plan, the successful purchase with a cost that completed last (the index
/// `transactions_last_cost` holds exactly these rows); ties by code, the
/// caller keeps the first of each plan.
pub(crate) const LAST_PLAN_COSTS: &str = "SELECT t.provider, t.plan_id, t.cost, t.completed_at
    FROM transactions t
    JOIN (SELECT provider, plan_id, MAX(completed_at) AS at FROM transactions
          WHERE status = 'successful' AND cost IS NOT NULL AND plan_id IS NOT NULL
          GROUP BY provider, plan_id) last
      ON t.provider = last.provider AND t.plan_id = last.plan_id AND t.completed_at = last.at
    WHERE t.status = 'successful' AND t.cost IS NOT NULL AND t.plan_id IS NOT NULL
    ORDER BY t.provider, t.plan_id, t.code";

/// One [`PlanCost`] per plan, the first of rows ordered by plan.
pub(crate) fn first_per_plan(rows: Vec<PlanCost>) -> Vec<PlanCost> {
    let mut rows = rows;
    rows.dedup_by(|b, a| a.provider == b.provider && a.plan_id == b.plan_id);
    rows
}

pub const OPERATOR_COLUMNS: &str =
    "id, email, role, status, password_hash, totp_secret_sealed, created_at";
pub const LOG_COLUMNS: &str = "id, at, actor, operator_id, operator_email, action, subject, before_state, after_state, reason";

impl NewLogEntry {
    /// A money move's line: the wallet's balance before and after (what the
    /// caller put in `after`, e.g. the amount and reference, follows it).
    pub(crate) fn with_balances(
        mut self,
        before: billpay_domain::Kobo,
        after: billpay_domain::Kobo,
    ) -> Self {
        self.before
            .get_or_insert_with(|| format!("balance {before}"));
        self.after = Some(match self.after.take() {
            Some(detail) => format!("balance {after} ({detail})"),
            None => format!("balance {after}"),
        });
        self
    }

    /// A status change's line: the status before, unless the caller said it.
    pub(crate) fn with_before(mut self, before: &str) -> Self {
        self.before.get_or_insert_with(|| before.to_owned());
        self
    }
}

/// What a logged change answers when the change was not made (a credit
/// reference seen before): no line is written.
pub(crate) fn applied_balance_before(
    credit: &crate::Credit,
    amount: billpay_domain::Kobo,
) -> billpay_domain::Kobo {
    billpay_domain::Kobo(credit.balance.0 - amount.0)
}

/// Per supplier and status since `$1`; SQLite and PostgreSQL spell the
/// time difference differently (`{final_ms}`).
pub(crate) const SUPPLIER_OUTCOMES: &str = "SELECT supplier, status, CAST(COUNT(*) AS BIGINT),
    CAST(AVG(CASE WHEN completed_at IS NOT NULL THEN {final_ms} END) AS BIGINT)
    FROM transactions WHERE created_at >= $1
    GROUP BY supplier, status ORDER BY supplier, status";

/// The funding entries of the ledger in `[$1, $2)`.
pub(crate) const FUNDING_TOTALS: &str = "SELECT
    CAST(COALESCE(SUM(CASE WHEN kind = 'credit' THEN amount ELSE 0 END), 0) AS BIGINT),
    CAST(COALESCE(SUM(CASE WHEN kind = 'credit' THEN 1 ELSE 0 END), 0) AS BIGINT),
    CAST(COALESCE(SUM(CASE WHEN kind = 'fee' THEN -amount ELSE 0 END), 0) AS BIGINT),
    CAST(COALESCE(SUM(CASE WHEN kind = 'credit' AND EXISTS (
        SELECT 1 FROM funding_events f JOIN checkouts c
            ON c.reference = f.gateway_reference AND c.gateway = f.gateway
        WHERE f.id = ledger.funding_id) THEN amount ELSE 0 END), 0) AS BIGINT)
    FROM ledger WHERE funding_id IS NOT NULL AND created_at >= $1 AND created_at < $2";
