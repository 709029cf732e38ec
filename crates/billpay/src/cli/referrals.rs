//! `billpay referrals …`: the commission per product, the programme's
//! settings, voiding a referral, the top referrers (docs/referrals.md).

use super::Output;
use super::output::action_error;
use billpay_domain::{AccountId, Product};
use billpay_operations::Actor;
use billpay_operations::referrals;
use billpay_store::{ReferralRate, ReferralSettings, SharedStore, referral_rate_described};
use clap::{ArgGroup, Subcommand};
use serde_json::{Value, json};

#[derive(Subcommand, Debug)]
pub enum ReferralsCommand {
    /// Set (or with --remove stop) the commission on a product: a percent
    /// of what the referee is charged, earned when their purchase succeeds.
    #[command(group(ArgGroup::new("rate").required(true).args(["percent", "remove"])))]
    Set {
        /// airtime, data, cable, electricity, education, epin or betting.
        #[arg(long)]
        product: String,
        /// 1.5 is 1.5 % (at most 2 decimals, at most 100).
        #[arg(long)]
        percent: Option<String>,
        /// Only for purchases within this many days of the referee's sign-up.
        #[arg(long, requires = "percent")]
        days: Option<i64>,
        #[arg(long)]
        remove: bool,
    },
    /// The one-time bonus on a referee's first funding (Naira, or `none`)
    /// and the least a referrer may move to the wallet (Naira).
    Settings {
        #[arg(long)]
        first_funding_bonus: Option<String>,
        #[arg(long)]
        min_withdrawal: Option<String>,
    },
    /// The commissions, the settings and the top referrers of all time.
    Show,
    /// Void a referee's referral: it earns nothing from now on.
    Void {
        /// The referee's account id.
        referee: AccountId,
        /// Why (kept in the operator log).
        #[arg(long)]
        reason: String,
    },
}

fn rate_json(rate: &ReferralRate) -> Value {
    json!({ "product": rate.product.service(), "percent": rate.basis_points as f64 / 100.0,
            "days": rate.days })
}

fn settings_json(settings: &ReferralSettings) -> Value {
    json!({ "first_funding_bonus": settings.first_funding_bonus,
            "min_withdrawal": settings.min_withdrawal })
}

pub async fn run(cmd: ReferralsCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    let store = store.as_ref();
    match cmd {
        ReferralsCommand::Set {
            product,
            percent,
            days,
            remove,
        } => {
            let product: Product = product.parse().map_err(|_| {
                anyhow::anyhow!(
                    "product must be airtime, data, cable, electricity, education, epin or betting (not {product})"
                )
            })?;
            let percent = percent.filter(|_| !remove);
            let rate = referrals::set_rate(store, Actor::Cli, product, percent.as_deref(), days)
                .await
                .map_err(action_error)?;
            let text = match &rate {
                Some(rate) => format!(
                    "Referrers earn {} on {} purchases",
                    referral_rate_described(Some(rate)),
                    product.service()
                ),
                None => format!("No commission on {} purchases", product.service()),
            };
            out.emit(
                json!({ "product": product.service(), "rate": rate.as_ref().map(rate_json) }),
                text,
            );
        }
        ReferralsCommand::Settings {
            first_funding_bonus,
            min_withdrawal,
        } => {
            let settings = referrals::set_settings(
                store,
                Actor::Cli,
                first_funding_bonus.as_deref(),
                min_withdrawal.as_deref(),
            )
            .await
            .map_err(action_error)?;
            out.emit(
                settings_json(&settings),
                billpay_store::referral_settings_described(&settings),
            );
        }
        ReferralsCommand::Show => {
            let rates = store.referral_rates().await?;
            let settings = store.referral_settings().await?;
            let top = store.top_referrers("", "~", 10).await?;
            let mut text = if rates.is_empty() {
                vec!["No commission on any product: referrals are off".to_owned()]
            } else {
                rates
                    .iter()
                    .map(|r| {
                        format!(
                            "{:<12} {}",
                            r.product.service(),
                            referral_rate_described(Some(r))
                        )
                    })
                    .collect()
            };
            text.push(billpay_store::referral_settings_described(&settings));
            for t in &top {
                text.push(format!(
                    "{}  {}  {} referees  cost {}",
                    t.referrer_id, t.email, t.referees, t.cost
                ));
            }
            let top_json: Vec<Value> = top
                .iter()
                .map(|t| {
                    json!({ "referrer_id": t.referrer_id.to_string(), "email": t.email,
                                 "referees": t.referees, "cost": t.cost })
                })
                .collect();
            out.emit(
                json!({ "rates": rates.iter().map(rate_json).collect::<Vec<_>>(),
                        "settings": settings_json(&settings), "top_referrers": top_json }),
                text.join("\n"),
            );
        }
        ReferralsCommand::Void { referee, reason } => {
            let voided = referrals::void(store, Actor::Cli, referee, Some(&reason))
                .await
                .map_err(action_error)?;
            let text = match voided {
                true => format!("Voided the referral of {referee}: it earns nothing from now on"),
                false => format!("The referral of {referee} was void already"),
            };
            out.emit(
                json!({ "referee": referee.to_string(), "voided": voided }),
                text,
            );
        }
    }
    Ok(())
}
