//! The operator's funding fee and the `[funding]` settings section
//! (`BILLPAY_FUNDING_*`): a wallet receives what was paid less the fee,
//! never below zero; the fee is its own ledger entry.

use billpay_domain::Kobo;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct FundingSettings {
    /// Percent of each payment (e.g. 1.5); at most 2 decimal places.
    pub fee_percent: f64,
    /// Naira added to each payment's fee.
    pub fee_flat: f64,
    /// Naira: the fee never exceeds it.
    pub fee_cap: Option<f64>,
    /// Seconds between two reconciliation runs (one node at a time).
    pub reconcile_secs: u64,
    /// Pay now (checkout): the fee is added to what the customer pays, so
    /// the wallet receives the amount they asked for (else it is taken from it).
    pub fee_as_surcharge: bool,
    /// The shop's address as customers reach it (`https://shop.example.com`):
    /// the gateway's checkout sends them back there. Unset: the address the
    /// customer's browser used (the `Host` your proxy passes on).
    pub public_url: Option<String>,
}

/// The `[funding]` section's flags (only their definitions: the settings
/// layers read what was given into [`FundingSettings`]). Global: `billpay
/// funding`'s subcommands take them too.
#[derive(clap::Args)]
#[allow(dead_code)]
pub struct FundingFlags {
    /// The operator's fee on each funding, percent (default 0).
    #[arg(long, global = true)]
    funding_fee_percent: Option<f64>,
    /// The operator's flat fee on each funding, Naira (default 0).
    #[arg(long, global = true)]
    funding_fee_flat: Option<f64>,
    /// The most a funding's fee may be, Naira (default none).
    #[arg(long, global = true)]
    funding_fee_cap: Option<f64>,
    /// Seconds between two funding reconciliations (default 600).
    #[arg(long, global = true)]
    funding_reconcile_secs: Option<u64>,
    /// Add the fee to what a customer pays by card (default false: taken from it).
    #[arg(long, global = true)]
    funding_fee_as_surcharge: Option<bool>,
    /// The shop's public address, where a card payment returns (default: the request's).
    #[arg(long, global = true)]
    funding_public_url: Option<String>,
}

impl Default for FundingSettings {
    fn default() -> Self {
        Self {
            fee_percent: 0.0,
            fee_flat: 0.0,
            fee_cap: None,
            reconcile_secs: 600,
            fee_as_surcharge: false,
            public_url: None,
        }
    }
}

impl FundingSettings {
    /// The fee rule, or every problem with the settings (named by variable).
    pub fn fee_rule(&self) -> Result<FeeRule, Vec<String>> {
        let mut problems = Vec::new();
        let percent = (self.fee_percent * 100.0).round();
        let percent_ok = (0.0..=10_000.0).contains(&percent)
            && (self.fee_percent * 100.0 - percent).abs() < 1e-6;
        if !percent_ok {
            problems.push(
                "BILLPAY_FUNDING_FEE_PERCENT must be 0 to 100 with at most 2 decimal places".into(),
            );
        }
        let mut naira = |name: &str, value: f64| match Kobo::from_naira_f64(value) {
            Ok(kobo) => kobo,
            Err(e) => {
                problems.push(format!("{name} (Naira) {e}"));
                Kobo::ZERO
            }
        };
        let flat = naira("BILLPAY_FUNDING_FEE_FLAT", self.fee_flat);
        let cap = self
            .fee_cap
            .map(|cap| naira("BILLPAY_FUNDING_FEE_CAP", cap));
        if self.reconcile_secs == 0 {
            problems.push("BILLPAY_FUNDING_RECONCILE_SECS must be at least 1".into());
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(FeeRule {
            basis_points: percent as i64,
            flat,
            cap,
        })
    }
}

/// What the operator keeps of each payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeeRule {
    /// Hundredths of a percent: 150 is 1.5 %.
    pub basis_points: i64,
    pub flat: Kobo,
    pub cap: Option<Kobo>,
}

impl FeeRule {
    /// The fee on `paid`: percent (rounded half up to the kobo) plus flat,
    /// at most the cap, never more than what was paid.
    pub fn fee(&self, paid: Kobo) -> Kobo {
        let percent = (i128::from(paid.0) * i128::from(self.basis_points) + 5_000) / 10_000;
        let fee = i64::try_from(percent)
            .unwrap_or(i64::MAX)
            .saturating_add(self.flat.0);
        let fee = self.cap.map_or(fee, |cap| fee.min(cap.0));
        Kobo(fee.clamp(0, paid.0.max(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fee_is_percent_plus_flat_capped_and_never_above_the_payment() {
        let rule = FeeRule {
            basis_points: 150,
            flat: Kobo(5_000),
            cap: Some(Kobo(20_000)),
        };
        assert_eq!(rule.fee(Kobo(100_000)), Kobo(6_500)); // 1.5% of ₦1,000 + ₦50
        assert_eq!(rule.fee(Kobo(10_000_000)), Kobo(20_000)); // capped at ₦200
        assert_eq!(rule.fee(Kobo(3_000)), Kobo(3_000)); // never below zero
        assert_eq!(FeeRule::default().fee(Kobo(100)), Kobo::ZERO);
        let half = FeeRule {
            basis_points: 50,
            ..FeeRule::default()
        };
        assert_eq!(half.fee(Kobo(100)), Kobo(1)); // 0.5 kobo rounds up
    }

    #[test]
    fn settings_are_checked() {
        let good = FundingSettings {
            fee_percent: 1.5,
            fee_flat: 50.0,
            fee_cap: Some(200.0),
            ..FundingSettings::default()
        };
        assert_eq!(good.fee_rule().unwrap().basis_points, 150);
        let bad = FundingSettings {
            fee_percent: 101.0,
            fee_flat: 0.001,
            reconcile_secs: 0,
            ..FundingSettings::default()
        };
        assert_eq!(bad.fee_rule().unwrap_err().len(), 3);
    }
}
