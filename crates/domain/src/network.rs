//! Which mobile network a Nigerian number was allocated to, from its prefix,
//! and the check that an airtime or data purchase goes to the number's own
//! network (money sent to another network's number is lost).
//!
//! The table is the Nigerian Communications Commission's allocation of
//! four-digit mobile prefixes (NCC National Numbering Plan, as published by
//! the operators and in the NCC's numbering register):
//!
//! | network | prefixes |
//! |---|---|
//! | MTN | 0703 0706 0803 0806 0810 0813 0814 0816 0903 0906 0913 0916 |
//! | Airtel | 0701 0708 0802 0808 0812 0901 0902 0904 0907 0911 0912 |
//! | Glo | 0705 0805 0807 0811 0815 0905 0915 |
//! | 9mobile | 0809 0817 0818 0908 0909 |
//!
//! Only a number whose prefix is **known** to belong to a **different**
//! network than the one bought for is refused. A prefix not in the table
//! (0704, 0707, 0800, 0801, 0804, a new allocation) passes: a new allocation
//! must never stop sales. A number moved to another network (mobile number
//! portability) keeps its prefix: the client says so with `"ported": true`,
//! and the check is skipped.

use crate::Phone;
use std::fmt;

/// A mobile network billpay sells airtime and data for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    Mtn,
    Airtel,
    Glo,
    NineMobile,
}

/// The allocation table (module docs): four-digit prefix, network.
pub const PREFIXES: &[(&str, Network)] = &[
    ("0703", Network::Mtn),
    ("0706", Network::Mtn),
    ("0803", Network::Mtn),
    ("0806", Network::Mtn),
    ("0810", Network::Mtn),
    ("0813", Network::Mtn),
    ("0814", Network::Mtn),
    ("0816", Network::Mtn),
    ("0903", Network::Mtn),
    ("0906", Network::Mtn),
    ("0913", Network::Mtn),
    ("0916", Network::Mtn),
    ("0701", Network::Airtel),
    ("0708", Network::Airtel),
    ("0802", Network::Airtel),
    ("0808", Network::Airtel),
    ("0812", Network::Airtel),
    ("0901", Network::Airtel),
    ("0902", Network::Airtel),
    ("0904", Network::Airtel),
    ("0907", Network::Airtel),
    ("0911", Network::Airtel),
    ("0912", Network::Airtel),
    ("0705", Network::Glo),
    ("0805", Network::Glo),
    ("0807", Network::Glo),
    ("0811", Network::Glo),
    ("0815", Network::Glo),
    ("0905", Network::Glo),
    ("0915", Network::Glo),
    ("0809", Network::NineMobile),
    ("0817", Network::NineMobile),
    ("0818", Network::NineMobile),
    ("0908", Network::NineMobile),
    ("0909", Network::NineMobile),
];

impl Network {
    /// The network of a telco provider's catalogue slug (`mtn`, `airtel`,
    /// `glo`, `9mobile`); `None` for any other provider.
    pub fn of_provider(slug: &str) -> Option<Network> {
        match slug {
            "mtn" => Some(Network::Mtn),
            "airtel" => Some(Network::Airtel),
            "glo" => Some(Network::Glo),
            "9mobile" => Some(Network::NineMobile),
            _ => None,
        }
    }

    /// The telco provider's catalogue slug (`of_provider`'s inverse).
    pub fn provider_slug(self) -> &'static str {
        match self {
            Network::Mtn => "mtn",
            Network::Airtel => "airtel",
            Network::Glo => "glo",
            Network::NineMobile => "9mobile",
        }
    }

    /// The network the number's prefix was allocated to, if the table knows it.
    pub fn of_number(phone: &Phone) -> Option<Network> {
        let prefix = phone.as_str().get(..4)?;
        PREFIXES
            .iter()
            .find(|(known, _)| *known == prefix)
            .map(|(_, network)| *network)
    }

    pub fn name(self) -> &'static str {
        match self {
            Network::Mtn => "MTN",
            Network::Airtel => "Airtel",
            Network::Glo => "Glo",
            Network::NineMobile => "9mobile",
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A number known to be another network's than the provider bought for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "phone: another network's number: {phone} belongs to {number}, not {provider}; \
     if it was ported to {provider}, send \"ported\": true"
)]
pub struct NetworkMismatch {
    pub phone: String,
    pub number: Network,
    pub provider: Network,
}

/// Refuses `phone` for the provider `provider_slug` only when its prefix is
/// known to be another network's and the client did not say it is ported.
/// Providers that are not telcos, and prefixes not in the table, pass.
pub fn check(phone: &Phone, provider_slug: &str, ported: bool) -> Result<(), NetworkMismatch> {
    if ported {
        return Ok(());
    }
    let (Some(provider), Some(number)) = (
        Network::of_provider(provider_slug),
        Network::of_number(phone),
    ) else {
        return Ok(());
    };
    if provider == number {
        return Ok(());
    }
    Err(NetworkMismatch {
        phone: phone.to_string(),
        number,
        provider,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phone(s: &str) -> Phone {
        Phone::parse(s).unwrap()
    }

    #[test]
    fn each_prefix_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for (prefix, _) in PREFIXES {
            assert_eq!(prefix.len(), 4, "{prefix}");
            assert!(prefix.starts_with('0'), "{prefix}");
            assert!(seen.insert(prefix), "{prefix} listed twice");
        }
    }

    #[test]
    fn a_glo_number_is_refused_for_mtn() {
        let err = check(&phone("08051234567"), "mtn", false).unwrap_err();
        assert_eq!((err.number, err.provider), (Network::Glo, Network::Mtn));
        assert_eq!(
            err.to_string(),
            "phone: another network's number: 08051234567 belongs to Glo, not MTN; \
             if it was ported to MTN, send \"ported\": true"
        );
    }

    #[test]
    fn the_own_network_passes_in_every_form() {
        assert_eq!(check(&phone("+2348031234567"), "mtn", false), Ok(()));
        assert_eq!(check(&phone("0802 123 4567"), "airtel", false), Ok(()));
        assert_eq!(check(&phone("09151234567"), "glo", false), Ok(()));
        assert_eq!(check(&phone("08091234567"), "9mobile", false), Ok(()));
    }

    #[test]
    fn a_ported_number_passes() {
        assert_eq!(check(&phone("08051234567"), "mtn", true), Ok(()));
    }

    #[test]
    fn an_unknown_prefix_or_a_provider_not_a_telco_passes() {
        for unknown in ["08001234567", "08011234567", "07041234567", "09991234567"] {
            assert_eq!(Network::of_number(&phone(unknown)), None, "{unknown}");
            assert_eq!(check(&phone(unknown), "mtn", false), Ok(()), "{unknown}");
        }
        assert_eq!(check(&phone("08051234567"), "dstv", false), Ok(()));
    }
}
