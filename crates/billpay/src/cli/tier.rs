//! `billpay tier …`: price tiers and their rules (docs/pricing.md).

use super::Output;
use super::account::OnOff;
use super::output::action_error;
use billpay_domain::pricing::{Rule, Scope, Tier};
use billpay_domain::{AccountId, naira};
use billpay_operations::Actor;
use billpay_operations::pricing::{self, RuleInput, ScopeInput};
use billpay_operations::upgrades::{self, OfferInput};
use billpay_store::{SharedStore, TierOffer, offer_described};
use clap::{ArgGroup, Subcommand};
use serde_json::{Value, json};

#[derive(Subcommand, Debug)]
pub enum TierCommand {
    /// Create a price tier (it starts with no rules: list prices).
    Create { name: String },
    /// Every tier, with how many rules it has and accounts are on it.
    List,
    /// One tier's rules.
    Show { name: String },
    /// Make a tier an API tier (`on`: every account on it sees the
    /// dashboard's API keys and webhooks pages, while it is on it) or not.
    DeveloperAccess {
        name: String,
        #[arg(value_enum)]
        state: OnOff,
    },
    /// Set (or with --remove delete) the tier's rule for a product, narrowed
    /// to a provider and further to a plan; the most specific rule wins.
    #[command(group(ArgGroup::new("rule").required(true).args(["discount_percent", "price", "fee", "remove"])))]
    Rule {
        name: String,
        /// airtime, data, cable, electricity, education, epin or betting.
        #[arg(long)]
        product: String,
        /// A provider slug (mtn, dstv, ikeja-electric…).
        #[arg(long)]
        provider: Option<String>,
        /// A data or cable plan id, or an e-pin denomination in Naira.
        #[arg(long, requires = "provider")]
        plan: Option<String>,
        /// Charged = face value × (1 − P/100), half-up to the kobo; negative is a markup.
        #[arg(long, allow_hyphen_values = true)]
        discount_percent: Option<String>,
        /// A fixed price in Naira per plan, exam pin or e-pin.
        #[arg(long)]
        price: Option<String>,
        /// A flat fee in Naira added to the face value.
        #[arg(long)]
        fee: Option<String>,
        /// Delete the rule at this level.
        #[arg(long)]
        remove: bool,
        /// Set it even where it prices a plan below its last known supplier
        /// cost (refused without, naming the plans).
        #[arg(long)]
        allow_below_cost: bool,
    },
    /// Offer the tier to customers for a one-time fee from their wallet
    /// (they upgrade themselves on /dashboard/upgrade or the API); with
    /// --remove, withdraw the offer (upgrades bought stay).
    #[command(group(ArgGroup::new("offer").required(true).args(["fee", "remove"])))]
    Offer {
        name: String,
        /// The fee in Naira (5000, ₦5,000).
        #[arg(long)]
        fee: Option<String>,
        /// Only for customers at this KYC level or above (0, 1 or 2).
        #[arg(long, requires = "fee")]
        kyc_level: Option<String>,
        /// Only for customers who spent this much (Naira) over the last 30 days.
        #[arg(long, requires = "fee")]
        min_monthly_spend: Option<String>,
        #[arg(long)]
        remove: bool,
    },
    /// The tiers on offer.
    Offers,
    /// Return an account to list prices; --refund gives back the fee of
    /// the upgrade that put it on its tier (once).
    Downgrade {
        account_id: AccountId,
        #[arg(long)]
        refund: bool,
        /// Why (kept in the operator log).
        #[arg(long)]
        reason: String,
    },
}

pub async fn run(cmd: TierCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    let store = store.as_ref();
    match cmd {
        TierCommand::Create { name } => {
            pricing::create_tier(store, Actor::Cli, &name)
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "tier": name, "created": true }),
                format!("Created tier {name}"),
            );
        }
        TierCommand::List => {
            let tiers = pricing::tiers(store).await.map_err(action_error)?;
            let rows: Vec<Value> = tiers
                .iter()
                .map(|t| {
                    json!({ "name": t.name, "rules": t.rules, "accounts": t.accounts,
                                 "developer_access": t.developer_access })
                })
                .collect();
            let text = tiers
                .iter()
                .map(|t| {
                    let accounts = t
                        .accounts
                        .map_or_else(|| "every other".into(), |n| n.to_string());
                    let api = if t.developer_access { "  API tier" } else { "" };
                    format!(
                        "{:<24} {:>4} rules  {accounts} accounts{api}",
                        t.name, t.rules
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            out.emit(json!({ "tiers": rows }), text);
        }
        TierCommand::Show { name } => {
            let (tier, accounts) = pricing::tier(store, &name).await.map_err(action_error)?;
            out.emit(tier_json(&tier, accounts), tier_text(&tier, accounts));
        }
        TierCommand::DeveloperAccess { name, state } => {
            let on = state == OnOff::On;
            pricing::set_tier_developer_access(store, Actor::Cli, &name, on)
                .await
                .map_err(action_error)?;
            let words = if on {
                "now an API tier: its accounts see the API keys and webhooks pages"
            } else {
                "no longer an API tier"
            };
            out.emit(
                json!({ "tier": name, "developer_access": on }),
                format!("Tier {name} is {words}"),
            );
        }
        TierCommand::Rule {
            name,
            product,
            provider,
            plan,
            discount_percent,
            price,
            fee,
            remove,
            allow_below_cost,
        } => {
            let rule = match (discount_percent, price, fee) {
                _ if remove => None,
                (Some(p), _, _) => Some(RuleInput::DiscountPercent(p)),
                (_, Some(p), _) => Some(RuleInput::Price(p)),
                (_, _, Some(f)) => Some(RuleInput::Fee(f)),
                _ => None,
            };
            let scope = ScopeInput {
                product: &product,
                provider: provider.as_deref(),
                plan: plan.as_deref(),
            };
            let changed =
                pricing::set_rule(store, Actor::Cli, &name, scope, rule, allow_below_cost)
                    .await
                    .map_err(action_error)?;
            let (tier, accounts) = pricing::tier(store, &name).await.map_err(action_error)?;
            let what = match (remove, changed) {
                (true, true) => "Removed the rule",
                (true, false) => "There was no rule to remove",
                _ => "Set the rule",
            };
            let mut value = tier_json(&tier, accounts);
            value["changed"] = json!(changed);
            out.emit(value, format!("{what}\n{}", tier_text(&tier, accounts)));
        }
        TierCommand::Offer {
            name, remove: true, ..
        } => {
            let removed = upgrades::withdraw(store, Actor::Cli, &name)
                .await
                .map_err(action_error)?;
            let text = match removed {
                true => format!("Withdrew the offer of {name}"),
                false => format!("{name} was not on offer"),
            };
            out.emit(json!({ "tier": name, "withdrawn": removed }), text);
        }
        TierCommand::Offer {
            name,
            fee,
            kyc_level,
            min_monthly_spend,
            ..
        } => {
            let input = OfferInput {
                fee: fee.as_deref().unwrap_or_default(),
                kyc_level: kyc_level.as_deref(),
                min_monthly_spend: min_monthly_spend.as_deref(),
            };
            let offer = upgrades::offer(store, Actor::Cli, &name, input)
                .await
                .map_err(action_error)?;
            let text = format!("Offered {name}: {}", offer_described(&offer));
            out.emit(offer_json(&offer), text);
        }
        TierCommand::Offers => {
            let offers = store.tier_offers().await?;
            let rows: Vec<Value> = offers.iter().map(offer_json).collect();
            let text = match offers.is_empty() {
                true => "No tier is on offer".to_owned(),
                false => offers
                    .iter()
                    .map(|o| format!("{:<24} {}", o.tier, offer_described(o)))
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            out.emit(json!({ "offers": rows }), text);
        }
        TierCommand::Downgrade {
            account_id,
            refund,
            reason,
        } => {
            let credit = upgrades::downgrade(store, Actor::Cli, account_id, refund, Some(&reason))
                .await
                .map_err(action_error)?;
            let text = match &credit {
                Some(c) => format!(
                    "Returned {account_id} to list prices; refunded the upgrade fee (balance {})",
                    naira(c.balance)
                ),
                None if refund => {
                    format!("Returned {account_id} to list prices; no upgrade fee to refund")
                }
                None => format!("Returned {account_id} to list prices; nothing refunded"),
            };
            let value = json!({ "account_id": account_id, "tier": "default",
                                "refunded": credit.is_some(), "balance": credit.map(|c| c.balance) });
            out.emit(value, text);
        }
    }
    Ok(())
}

fn offer_json(offer: &TierOffer) -> Value {
    json!({ "tier": offer.tier, "fee": offer.fee, "min_kyc_level": offer.min_kyc_level,
            "min_monthly_spend": offer.min_monthly_spend })
}

fn rule_json(scope: &Scope, rule: &Rule) -> Value {
    let value = match rule {
        Rule::DiscountPercent(p) => json!(p.0 as f64 / 100.0),
        Rule::Price(k) | Rule::Fee(k) => json!(k),
    };
    json!({ "product": scope.product, "provider": scope.provider, "plan": scope.plan,
            "kind": rule.kind(), "value": value })
}

fn tier_json(tier: &Tier, accounts: usize) -> Value {
    let rules: Vec<Value> = tier
        .sorted_rules()
        .into_iter()
        .map(|(scope, rule)| rule_json(scope, rule))
        .collect();
    json!({ "tier": tier.name, "accounts": accounts, "rules": rules })
}

fn tier_text(tier: &Tier, accounts: usize) -> String {
    let mut lines = vec![format!("{} ({accounts} accounts)", tier.name)];
    if tier.rules.is_empty() {
        lines.push("  no rules: list prices".into());
    }
    for (scope, rule) in tier.sorted_rules() {
        let at = [
            Some(scope.product.service()),
            scope.provider.as_deref(),
            scope.plan.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" / ");
        lines.push(format!("  {at:<40} {rule}"));
    }
    lines.join("\n")
}
