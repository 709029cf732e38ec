//! What each notice says: askama templates compiled into the binary
//! (`templates/`, one file per kind), rendered into a [`Message`] for the
//! channel it goes by: an email's subject, plain text and HTML (the same
//! text, escaped, in `email.html`), or an SMS's one short text. Every
//! message carries the operator's business name and support contact.

use crate::{ChannelKind, Message};
use askama::Template;

/// Who the messages come from (`business_name`, `support_contact` and the
/// `[brand]` settings, with the owner's console edits: [`Brand::with`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brand {
    pub business_name: String,
    /// An email address or phone number customers can reach.
    pub support: String,
    /// `#rrggbb`: the email's header band.
    pub colour: String,
    /// The logo's absolute URL (`{public_url}/brand/logo.png`), in the
    /// email's header.
    pub logo_url: Option<String>,
    /// `https://wa.me/<digits>`: a click-to-chat link under every email.
    pub whatsapp_link: Option<String>,
}

impl Brand {
    /// The settings' brand (`billpay_domain::brand::Brand`) as emails show
    /// it; `public_url` starts the logo's address; `support` when the brand
    /// has no contact.
    pub fn of(brand: &billpay_domain::brand::Brand, public_url: &str, support: &str) -> Brand {
        let base = public_url.trim_end_matches('/');
        Brand {
            business_name: brand.name.clone(),
            support: brand.support.clone().unwrap_or_else(|| support.to_owned()),
            colour: brand.colour.as_str().to_owned(),
            logo_url: brand.logo_path().map(|path| format!("{base}{path}")),
            whatsapp_link: brand.whatsapp_link(),
        }
    }

    /// The owner's console edits laid over this brand.
    pub fn with(
        &self,
        settings: &billpay_domain::brand::Brand,
        edits: &billpay_domain::brand::BrandEdits,
    ) -> Brand {
        if *edits == billpay_domain::brand::BrandEdits::default() {
            return self.clone();
        }
        let edited = settings.with(edits);
        Brand {
            business_name: edited.name,
            support: edited.support.unwrap_or_else(|| self.support.clone()),
            colour: edited.colour.as_str().to_owned(),
            logo_url: self.logo_url.clone(),
            whatsapp_link: edited.whatsapp.map(|d| format!("https://wa.me/{d}")),
        }
    }
}

/// What a notice's template reads; each kind reads its own few fields
/// (amounts already written as people read them: `₦5,000.00`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields {
    /// The customer's name (the greeting).
    pub name: String,
    /// A verification code.
    pub code: String,
    /// A password- or PIN-reset link.
    pub link: String,
    pub amount: String,
    pub fee: String,
    pub credited: String,
    pub balance: String,
    /// The low-balance mark.
    pub threshold: String,
    /// A purchase's reference code, what it was, and for whom.
    pub transaction: String,
    pub product: String,
    pub recipient: String,
    /// An electricity token and its units.
    pub token: Option<String>,
    pub units: Option<String>,
    /// Delivered e-pins or exam pins, one line each.
    pub pins: Vec<String>,
    /// When a held purchase is cancelled and refunded if no one has
    /// reviewed it (Lagos time).
    pub until: String,
    /// A schedule's reference, why its run was not made (or why it
    /// stopped), whether it is tried again today, and when it next runs
    /// (Lagos time).
    pub schedule: String,
    pub reason: String,
    pub retry: bool,
    pub next: String,
    /// "daily", "weekly", "monthly" (an SMS's few words).
    pub every: String,
    /// An API key's prefix (generated: never a name the customer typed).
    pub prefix: String,
    /// The price tier an upgrade bought.
    pub tier: String,
    /// The webhook URL was removed (else set or changed). The URL itself is
    /// not quoted: no text a customer typed goes into a notice.
    pub webhook_removed: bool,
}

/// Every kind with a template.
pub const KINDS: [&str; 18] = [
    "email_verification",
    "password_reset",
    "pin_reset",
    "funding_credited",
    "purchase_refunded",
    "purchase_receipt",
    "low_balance",
    "api_key_created",
    "webhook_url_changed",
    "account_exists",
    "phone_verification",
    "purchase_held",
    "purchase_released",
    "upgrade_bought",
    "schedule_skipped",
    "schedule_stopped",
    "referral_commission",
    "referral_bonus_moved",
];

#[derive(Template)]
#[template(path = "notice.txt")]
struct Text<'a> {
    kind: &'a str,
    sms: bool,
    f: &'a Fields,
    brand: &'a Brand,
}

#[derive(Template)]
#[template(path = "email.html")]
struct Html<'a> {
    subject: &'a str,
    paragraphs: Vec<&'a str>,
    brand: &'a Brand,
    /// Black or white on the brand's colour.
    on_colour: &'static str,
}

/// Why a notice could not be rendered (a kind with no template).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("no template for notices of kind {0:?}")]
    UnknownKind(String),
    #[error("the template of {kind:?} failed: {error}")]
    Template { kind: String, error: String },
}

/// An email's subject line.
fn subject(kind: &str, f: &Fields, brand: &Brand) -> String {
    let name = &brand.business_name;
    match kind {
        "email_verification" => format!("Your {name} verification code"),
        "password_reset" => format!("Reset your {name} password"),
        "pin_reset" => format!("Reset your {name} transaction PIN"),
        "funding_credited" => format!("{} added to your {name} wallet", f.credited),
        "purchase_refunded" => format!("Purchase failed: {} returned to your wallet", f.amount),
        "purchase_receipt" => format!("Your receipt for {} ({})", f.product, f.transaction),
        "low_balance" => format!("Your {name} balance is low: {}", f.balance),
        "api_key_created" => format!("Security: a new {name} API key was created"),
        "account_exists" => format!("Someone tried to sign up to {name} with your email"),
        "phone_verification" => format!("Your {name} phone code"),
        "purchase_held" => format!("Your purchase {} is held for review", f.transaction),
        "purchase_released" => format!("Your purchase {} was approved", f.transaction),
        "upgrade_bought" => format!("You upgraded to {} on {name}", f.tier),
        "schedule_skipped" => format!("Your scheduled {} was not bought", f.product),
        "schedule_stopped" => format!("Your scheduled {} is stopped", f.product),
        "referral_commission" => format!("You earned a {} referral bonus on {name}", f.amount),
        "referral_bonus_moved" => {
            format!("{} referral bonus moved to your {name} wallet", f.amount)
        }
        _ => format!("Security: your {name} webhook URL changed"),
    }
}

/// The message for notice `id` of `kind` to `to`, by `channel`.
pub fn render(
    kind: &str,
    channel: ChannelKind,
    (id, to): (&str, &str),
    f: &Fields,
    brand: &Brand,
) -> Result<Message, RenderError> {
    if !KINDS.contains(&kind) {
        return Err(RenderError::UnknownKind(kind.to_owned()));
    }
    let failed = |e: askama::Error| RenderError::Template {
        kind: kind.to_owned(),
        error: e.to_string(),
    };
    let sms = channel == ChannelKind::Sms;
    let text = Text {
        kind,
        sms,
        f,
        brand,
    }
    .render()
    .map_err(failed)?;
    let subject = if sms {
        String::new()
    } else {
        subject(kind, f, brand)
    };
    let html = if sms {
        None
    } else {
        let paragraphs = text.split("\n\n").map(str::trim).collect();
        let on_colour =
            billpay_domain::brand::Colour::parse(&brand.colour).map_or("#ffffff", |c| c.text_on());
        let page = Html {
            subject: &subject,
            paragraphs,
            brand,
            on_colour,
        };
        Some(page.render().map_err(failed)?)
    };
    Ok(Message {
        id: id.to_owned(),
        to: to.to_owned(),
        subject,
        text,
        html,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brand() -> Brand {
        Brand {
            business_name: "Ada Data".into(),
            support: "help@ada.example".into(),
            colour: "#aa3300".into(),
            logo_url: Some("https://ada.example/brand/logo.png".into()),
            whatsapp_link: Some("https://wa.me/2348030000000".into()),
        }
    }

    #[test]
    fn the_html_email_wears_the_logo_and_colour() {
        let fields = Fields {
            name: "Ada".into(),
            code: "123456".into(),
            ..Fields::default()
        };
        let message = render(
            "email_verification",
            ChannelKind::Email,
            ("NT1", "to"),
            &fields,
            &brand(),
        )
        .unwrap();
        let html = message.html.unwrap();
        assert!(html.contains("background:#aa3300"), "{html}");
        assert!(
            html.contains("<img src=\"https://ada.example/brand/logo.png\""),
            "{html}"
        );
        assert!(html.contains("https://wa.me/2348030000000"), "{html}");
        assert!(!html.to_lowercase().contains("billpay"), "{html}");
        assert!(message.text.contains("123456"));
    }

    #[test]
    fn every_kind_renders_by_email_and_sms_with_the_business_name_and_support_contact() {
        let fields = Fields {
            name: "Ada".into(),
            ..Fields::default()
        };
        for kind in KINDS {
            for channel in [ChannelKind::Email, ChannelKind::Sms] {
                let message = render(kind, channel, ("NT1", "to"), &fields, &brand()).unwrap();
                assert!(
                    message.text.contains("Ada Data"),
                    "{kind}: {}",
                    message.text
                );
                assert!(
                    message.text.contains("help@ada.example"),
                    "{kind}: {}",
                    message.text
                );
                assert!(!message.text.contains("{{"), "{kind}: {}", message.text);
                assert_eq!(message.html.is_some(), channel == ChannelKind::Email);
            }
        }
        assert!(render("nope", ChannelKind::Email, ("1", "t"), &fields, &brand()).is_err());
    }

    #[test]
    fn a_receipt_holds_the_token_and_pins_and_the_html_escapes_what_it_shows() {
        let fields = Fields {
            name: "<b>Ada</b>".into(),
            transaction: "TX1".into(),
            product: "Electricity".into(),
            recipient: "45012345678".into(),
            amount: "₦5,000.00".into(),
            token: Some("1234-5678-9012".into()),
            units: Some("42.1".into()),
            pins: vec!["PIN 1111".into()],
            ..Fields::default()
        };
        let message = render(
            "purchase_receipt",
            ChannelKind::Email,
            ("NT1", "ada@example.com"),
            &fields,
            &brand(),
        )
        .unwrap();
        assert!(
            message.text.contains("Token: 1234-5678-9012 (42.1 kWh)"),
            "{}",
            message.text
        );
        assert!(message.text.contains("PIN 1111"), "{}", message.text);
        assert_eq!(message.subject, "Your receipt for Electricity (TX1)");
        let html = message.html.unwrap();
        assert!(html.contains("&#60;b&#62;Ada&#60;/b&#62;"), "{html}");
        assert!(!html.contains("<b>Ada"), "{html}");
        let sms = render(
            "purchase_receipt",
            ChannelKind::Sms,
            ("NT1", "234"),
            &fields,
            &brand(),
        );
        assert!(sms.unwrap().text.contains("Token 1234-5678-9012"));
    }
}
