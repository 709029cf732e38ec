//! `billpay report sales`: what was sold, charged, what the suppliers
//! charged and the profit, by day (Lagos), product, provider, supplier,
//! account or tier.

use super::Output;
use super::output::action_error;
use billpay_domain::naira;
use billpay_operations::reports::{self, GroupBy, SalesLine, SalesReport};
use billpay_store::SharedStore;
use clap::Subcommand;
use serde_json::{Value, json};

#[derive(Subcommand, Debug)]
pub enum ReportCommand {
    /// Successful purchases: count, face value, charged, cost, profit (over
    /// the purchases whose cost is known), and the failed-and-refunded count.
    Sales {
        /// First Lagos day included, YYYY-MM-DD.
        #[arg(long)]
        from: Option<String>,
        /// Last Lagos day included, YYYY-MM-DD.
        #[arg(long)]
        to: Option<String>,
        /// day, product, provider, supplier, account or tier.
        #[arg(long, default_value = "day")]
        by: String,
    },
}

pub async fn run(cmd: ReportCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    let ReportCommand::Sales { from, to, by } = cmd;
    let by = GroupBy::parse(&by).map_err(action_error)?;
    let report = reports::sales(store.as_ref(), from.as_deref(), to.as_deref(), by)
        .await
        .map_err(action_error)?;
    out.emit(report_json(&report), report_text(&report));
    Ok(())
}

/// Money as Naira numbers (at most 2 decimals, as `Kobo` serializes).
fn line_json(line: &SalesLine) -> Value {
    json!({
        "key": line.key,
        "purchases": line.purchases,
        "face_value": line.face_value,
        "charged": line.charged,
        "cost": line.cost,
        "profit": line.profit,
        "cost_unknown": line.cost_unknown,
        "failed_refunded": line.failed_refunded,
    })
}

fn report_json(report: &SalesReport) -> Value {
    let rows: Vec<Value> = report.rows.iter().map(line_json).collect();
    let mut value = json!({ "rows": rows, "totals": line_json(&report.totals) });
    if let Some(fees) = report.funding_fees {
        value["funding_fees"] = json!(fees);
    }
    value["funding_received"] = json!(report.funding_received);
    value["funding_by_card"] = json!(report.funding_by_card);
    value["upgrades"] = json!({
        "bought": report.upgrades.upgrades,
        "fees": report.upgrades.fees,
        "refunded": report.upgrades.refunded,
        "income": report.upgrade_income(),
    });
    value["top_referrers"] = json!(
        report
            .referrers
            .iter()
            .map(
                |r| json!({ "referrer_id": r.referrer_id.to_string(), "email": r.email,
                         "referees": r.referees, "cost": r.cost })
            )
            .collect::<Vec<_>>()
    );
    value
}

fn report_text(report: &SalesReport) -> String {
    let header = format!(
        "{:<38} {:>8} {:>16} {:>16} {:>16} {:>14} {:>8} {:>8}",
        "", "sold", "face value", "charged", "cost", "profit", "no cost", "failed"
    );
    let line = |l: &SalesLine| {
        format!(
            "{:<38} {:>8} {:>16} {:>16} {:>16} {:>14} {:>8} {:>8}",
            l.key,
            l.purchases,
            naira(l.face_value),
            naira(l.charged),
            naira(l.cost),
            naira(l.profit),
            l.cost_unknown,
            l.failed_refunded
        )
    };
    let mut lines = vec![header];
    lines.extend(report.rows.iter().map(line));
    lines.push(line(&report.totals));
    lines.push(format!(
        "funding received {} (by bank transfer {}, by card {})",
        naira(report.funding_received),
        naira(report.funding_by_transfer()),
        naira(report.funding_by_card)
    ));
    lines.push(match report.funding_fees {
        Some(fees) => format!("funding fees (income) {}", naira(fees)),
        None => "funding fees (income): not recorded by this version".into(),
    });
    lines.push(format!(
        "upgrade fees (income) {} ({} upgrades bought, fees {}, given back {})",
        naira(report.upgrade_income()),
        report.upgrades.upgrades,
        naira(report.upgrades.fees),
        naira(report.upgrades.refunded)
    ));
    for r in &report.referrers {
        lines.push(format!(
            "referrer {} ({} referees): cost {}",
            r.email, r.referees, r.cost
        ));
    }
    lines.push(
        "profit = charged − cost over purchases whose cost is known; days are Lagos days".into(),
    );
    lines.join("\n")
}
