//! The channel providers, each registered once: its module's
//! [`Registration`] (its name, its kind, its flags, what it misses, its
//! constructor) is one line of [`CHANNELS`], and its settings section one
//! field of [`ChannelSections`]. The binary derives from these two the
//! settings sections the layers know, the flags of `serve` and `billpay
//! notify`, `validate`'s problems and the [`Channels`] it sends through
//! ([`channels`]). A second SMS provider is a new module and one line here.
//!
//! Email without SMTP goes to the development mail folder
//! ([`crate::mail_dir::MailDir`], `mail_dir`), so nothing here is required.

use crate::mail_dir::MailDir;
use crate::smtp::SmtpSettings;
use crate::termii::TermiiSettings;
use crate::{Channel, ChannelKind, Channels};
use lettre::message::Mailbox;
use serde::Deserialize;
use std::path::PathBuf;
use std::sync::Arc;

/// The providers, by name.
pub const CHANNELS: &[Registration] = &[crate::smtp::REGISTRATION, crate::termii::REGISTRATION];

/// Where development email goes without SMTP (`--mail-dir`).
pub const DEFAULT_MAIL_DIR: &str = "./billpay-mail/";

/// The sender of development email when `BILLPAY_EMAIL_FROM` is not set.
const DEV_FROM: &str = "billpay <billpay@localhost>";

/// The notification settings: `mail_dir` (top level), the `[email]` section
/// every email channel shares (`BILLPAY_EMAIL_FROM`), and each provider's
/// section, a field named like it, its struct owned by its module.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ChannelSections {
    pub mail_dir: PathBuf,
    pub email: EmailSettings,
    pub smtp: SmtpSettings,
    pub termii: TermiiSettings,
}

impl Default for ChannelSections {
    fn default() -> Self {
        ChannelSections {
            mail_dir: PathBuf::from(DEFAULT_MAIL_DIR),
            email: EmailSettings::default(),
            smtp: SmtpSettings::default(),
            termii: TermiiSettings::default(),
        }
    }
}

/// `[email]`: what every email says it is from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct EmailSettings {
    /// `Shop <no-reply@shop.ng>` or `no-reply@shop.ng` (`BILLPAY_EMAIL_FROM`).
    pub from: Option<String>,
}

impl EmailSettings {
    /// The sender, if set and an address.
    pub fn mailbox(&self) -> Option<Result<Mailbox, String>> {
        let from = self
            .from
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())?;
        Some(from.parse::<Mailbox>().map_err(|_| {
            format!(
                "BILLPAY_EMAIL_FROM must be an address like `Shop <no-reply@shop.ng>` (got {from:?})"
            )
        }))
    }
}

/// A notification provider billpay can send through.
pub struct Registration {
    /// Its `Channel::name`: its section `[<name>]` (so its flags are
    /// `--<name>-…` and its variables `BILLPAY_<NAME>_…`).
    pub name: &'static str,
    /// As people write it, in messages: `Termii`.
    pub title: &'static str,
    pub kind: ChannelKind,
    /// Adds its flags to a command (its `clap::Args`' `augment_args`).
    pub flags: fn(clap::Command) -> clap::Command,
    /// Whether the operator set any of its settings (then it must be whole).
    pub enabled: fn(&ChannelSections) -> bool,
    /// Its settings still missing (environment variable names).
    pub missing: fn(&ChannelSections) -> Vec<String>,
    /// What is wrong with the settings it has, naming them, never a secret.
    pub invalid: fn(&ChannelSections) -> Vec<String>,
    /// Builds it (once nothing is missing or invalid).
    pub build: fn(&ChannelSections) -> Result<Arc<dyn Channel>, String>,
}

/// The sections the settings layers put `<section>_<key>` in.
pub fn section_names() -> impl Iterator<Item = &'static str> {
    std::iter::once("email").chain(CHANNELS.iter().map(|c| c.name))
}

/// The notification flags every command that sends takes: `--mail-dir`,
/// `--email-from` and each provider's.
pub fn flags(command: clap::Command) -> clap::Command {
    let command = <SharedFlags as clap::Args>::augment_args(command);
    CHANNELS
        .iter()
        .fold(command, |command, c| (c.flags)(command))
}

/// The flags of no one provider (only their definitions: the settings
/// layers read what was given).
#[derive(clap::Args)]
#[allow(dead_code)]
struct SharedFlags {
    /// Without SMTP, emails are written to this folder as .eml files
    /// (default ./billpay-mail/).
    #[arg(long)]
    mail_dir: Option<PathBuf>,
    /// Who emails are from: `Shop <no-reply@shop.ng>` (required with SMTP).
    #[arg(long)]
    email_from: Option<String>,
}

/// What keeps `serve` from starting: a half-configured provider (naming
/// what is missing), a setting that is malformed, two providers of a kind.
pub fn problems(sections: &ChannelSections) -> Vec<String> {
    let enabled: Vec<&Registration> = CHANNELS.iter().filter(|c| (c.enabled)(sections)).collect();
    let from = sections.email.mailbox().and_then(Result::err);
    let half = enabled.iter().filter_map(|channel| {
        let missing = (channel.missing)(sections);
        (!missing.is_empty()).then(|| {
            format!(
                "{} is half-configured: set {} (or leave all its settings unset)",
                channel.title,
                missing.join(", ")
            )
        })
    });
    let invalid = enabled
        .iter()
        .flat_map(|channel| (channel.invalid)(sections));
    let doubled = [ChannelKind::Email, ChannelKind::Sms]
        .into_iter()
        .filter_map(|kind| {
            let titles: Vec<_> = enabled
                .iter()
                .filter(|c| c.kind == kind)
                .map(|c| c.title)
                .collect();
            (titles.len() > 1).then(|| {
                format!(
                    "only one {} provider at a time: {} are configured",
                    kind.as_str(),
                    titles.join(" and ")
                )
            })
        });
    from.into_iter()
        .chain(half)
        .chain(invalid)
        .chain(doubled)
        .collect()
}

/// The channels the settings configure, built: each enabled provider for
/// its kind, and email into the mail folder when no email provider is
/// configured. Call after [`problems`] came back empty.
pub fn channels(sections: &ChannelSections) -> Result<Channels, String> {
    let mut channels = Channels::default();
    for channel in CHANNELS.iter().filter(|c| (c.enabled)(sections)) {
        let built = Some((channel.build)(sections)?);
        match channel.kind {
            ChannelKind::Email => channels.email = built,
            ChannelKind::Sms => channels.sms = built,
        }
    }
    if channels.email.is_none() {
        let from = match sections.email.mailbox() {
            Some(from) => from?.to_string(),
            None => DEV_FROM.to_owned(),
        };
        let dir = &sections.mail_dir;
        tracing::info!(dir = %dir.display(), "no SMTP server configured: emails are written to the mail folder");
        channels.email = Some(Arc::new(MailDir::new(dir.clone(), from)));
    }
    Ok(channels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_configured_is_no_problem_and_email_goes_to_the_folder() {
        let sections = ChannelSections::default();
        assert!(problems(&sections).is_empty());
        let channels = channels(&sections).unwrap();
        assert_eq!(
            channels.for_kind(ChannelKind::Email).unwrap().name(),
            "mail_dir"
        );
        assert!(channels.for_kind(ChannelKind::Sms).is_none());
    }

    #[test]
    fn half_configured_providers_are_named_without_their_secrets() {
        let mut sections = ChannelSections::default();
        sections.smtp.url = Some("smtps://user:smtp-pass-1@mail.example.com".into());
        sections.termii.api_key = Some("termii-key-1".into());
        let problems = problems(&sections).join("\n");
        assert!(problems.contains("BILLPAY_EMAIL_FROM"), "{problems}");
        assert!(problems.contains("BILLPAY_TERMII_SENDER_ID"), "{problems}");
        assert!(!problems.contains("smtp-pass-1"), "{problems}");
        assert!(!problems.contains("termii-key-1"), "{problems}");
    }

    #[test]
    fn a_malformed_sender_is_a_problem_even_without_smtp() {
        let mut sections = ChannelSections::default();
        sections.email.from = Some("not an address".into());
        let problems = problems(&sections).join("\n");
        assert!(
            problems.contains("BILLPAY_EMAIL_FROM must be an address"),
            "{problems}"
        );
    }
}
