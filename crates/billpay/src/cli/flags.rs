//! The outside systems' flags, from their registries: each real supplier's
//! (`billpay_supplier::registry::SUPPLIERS`) and each payment gateway's with
//! the `[funding]` section's (`billpay_funding::registry::GATEWAYS`). Each
//! registration adds its own flags to the command; what was given is kept as
//! given, by flag (`vtpass_api_key`), for the settings layers, which put it
//! in its section and read it like its `BILLPAY_*` variable. A value is never
//! printed (clap's parsed commands are `Debug`).

use clap::{ArgMatches, Args, Command, FromArgMatches};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::marker::PhantomData;

/// A registry whose entries add flags to a command.
pub trait Registry {
    fn augment(command: Command) -> Command;
}

/// The real suppliers' flags.
pub struct Suppliers;

impl Registry for Suppliers {
    fn augment(command: Command) -> Command {
        let registry = billpay_supplier::registry::SUPPLIERS.iter();
        registry.fold(command, |command, r| (r.flags)(command))
    }
}

/// The payment gateways' flags and the funding fee's.
pub struct Gateways;

impl Registry for Gateways {
    fn augment(command: Command) -> Command {
        let registry = billpay_funding::registry::GATEWAYS.iter();
        let command = registry.fold(command, |command, g| (g.flags)(command));
        billpay_funding::FundingFlags::augment_args(command)
    }
}

/// The notification channels' flags (`--mail-dir`, `--email-from`, each
/// provider's).
pub struct Notifications;

impl Registry for Notifications {
    fn augment(command: Command) -> Command {
        billpay_notify::registry::flags(command)
    }
}

/// The flags of registry `R` given on the command line, as given.
pub struct Flags<R> {
    given: Vec<(String, String)>,
    registry: PhantomData<R>,
}

pub type SupplierFlags = Flags<Suppliers>;
pub type GatewayFlags = Flags<Gateways>;
pub type ChannelFlags = Flags<Notifications>;

impl<R> Default for Flags<R> {
    fn default() -> Self {
        Flags {
            given: Vec::new(),
            registry: PhantomData,
        }
    }
}

impl<R: Registry> Flags<R> {
    /// The ids of the registry's flags (`vtpass_api_key`).
    fn ids() -> Vec<String> {
        let command = R::augment(Command::new("flags"));
        let arguments = command.get_arguments();
        arguments.map(|a| a.get_id().to_string()).collect()
    }
}

impl<R: Registry> FromArgMatches for Flags<R> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Self::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for id in Self::ids() {
            // Checked by its parser already (a number where one is wanted).
            let given = matches
                .try_get_raw(&id)
                .ok()
                .flatten()
                .and_then(|mut v| v.next_back());
            if let Some(value) = given {
                self.given.retain(|(given, _)| *given != id);
                self.given.push((id, value.to_string_lossy().into_owned()));
            }
        }
        Ok(())
    }
}

impl<R: Registry> Args for Flags<R> {
    fn augment_args(command: Command) -> Command {
        R::augment(command)
    }

    fn augment_args_for_update(command: Command) -> Command {
        R::augment(command)
    }
}

/// The flags given, as a map by flag (flattened into the command's).
impl<R> Serialize for Flags<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.given.len()))?;
        for (id, value) in &self.given {
            map.serialize_entry(id, value)?;
        }
        map.end()
    }
}

/// Which flags were given, never their values (keys among them).
impl<R> std::fmt::Debug for Flags<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let given = self.given.iter().map(|(id, _)| id);
        f.debug_set().entries(given).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser, Debug)]
    struct Test {
        #[command(flatten)]
        suppliers: SupplierFlags,
        #[command(flatten)]
        gateways: GatewayFlags,
        #[command(flatten)]
        channels: ChannelFlags,
    }

    #[test]
    fn given_flags_are_kept_by_name_and_never_shown_in_debug_output() {
        use clap::Parser;
        let parsed = Test::try_parse_from([
            "billpay",
            "--vtpass-base-url",
            "https://sandbox.vtpass.com",
            "--vtpass-api-key",
            "api-secret-1",
            "--clubkonnect-api-key",
            "ck-secret-1",
            "--paystack-secret-key",
            "sk_test_secret-2",
            "--funding-fee-percent",
            "1.5",
            "--smtp-url",
            "smtps://u:smtp-secret-3@mail.example.com",
            "--termii-api-key",
            "termii-secret-4",
            "--mail-dir",
            "/tmp/mail",
        ])
        .unwrap();
        let printed = format!("{parsed:?}");
        for key in [
            "api-secret-1",
            "ck-secret-1",
            "sk_test_secret-2",
            "smtp-secret-3",
            "termii-secret-4",
        ] {
            assert!(!printed.contains(key), "{printed}");
        }
        assert!(printed.contains("vtpass_api_key"), "{printed}");
        let flat = serde_json::to_value(&parsed.suppliers).unwrap();
        assert_eq!(flat["vtpass_api_key"], "api-secret-1");
        assert_eq!(flat["clubkonnect_api_key"], "ck-secret-1");
        assert!(flat.get("vtpass_secret_key").is_none(), "{flat}");
        let flat = serde_json::to_value(&parsed.gateways).unwrap();
        assert_eq!(flat["funding_fee_percent"], "1.5");
        let flat = serde_json::to_value(&parsed.channels).unwrap();
        assert_eq!(flat["termii_api_key"], "termii-secret-4");
        assert_eq!(flat["mail_dir"], "/tmp/mail");
    }

    #[test]
    fn a_number_flag_is_checked_by_its_parser() {
        use clap::Parser;
        let refused = Test::try_parse_from(["billpay", "--vtpass-timeout-ms", "soon"]);
        assert!(refused.is_err());
    }
}
