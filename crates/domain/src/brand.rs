//! The business's brand, what buyers see instead of "billpay": its name, a
//! logo (PNG or SVG), a colour, how to reach it (a contact and a WhatsApp
//! number for a `https://wa.me/…` click-to-chat link) and whether the small
//! "powered by billpay" credit shows. The settings (`[brand]`) give the
//! first value; an owner's edits in the console ([`BrandEdits`], stored)
//! are laid over it ([`Brand::with`]).

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The largest logo accepted (bytes): it is served on every page.
pub const MAX_LOGO_BYTES: usize = 512 * 1024;

/// The longest business name (characters): it fits a phone's header.
pub const MAX_NAME_CHARS: usize = 60;

/// The colour when none is set (the web kit's own).
pub const DEFAULT_COLOUR: &str = "#0f766e";

/// A colour as `#rrggbb` (lower case).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Colour(String);

impl Colour {
    /// `#rrggbb` or `rrggbb`, any case; anything else is refused with a sentence.
    pub fn parse(text: &str) -> Result<Colour, String> {
        let text = text.trim();
        let hex = text.strip_prefix('#').unwrap_or(text);
        if hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            Ok(Colour(format!("#{}", hex.to_ascii_lowercase())))
        } else {
            Err(format!(
                "a colour is written #rrggbb (six hexadecimal digits, like #0f766e), not {text:?}"
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Black or white, whichever reads better on this colour.
    pub fn text_on(&self) -> &'static str {
        let channel = |i: usize| u32::from_str_radix(&self.0[i..i + 2], 16).unwrap_or(0);
        let luma = 299 * channel(1) + 587 * channel(3) + 114 * channel(5);
        if luma > 150_000 { "#111827" } else { "#ffffff" }
    }
}

impl Default for Colour {
    fn default() -> Self {
        Colour(DEFAULT_COLOUR.to_owned())
    }
}

/// A logo's format, told by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogoKind {
    Png,
    Svg,
}

/// A logo: its bytes (at most [`MAX_LOGO_BYTES`]) and format.
#[derive(Clone, PartialEq, Eq)]
pub struct Logo {
    pub kind: LogoKind,
    pub bytes: Arc<[u8]>,
}

impl std::fmt::Debug for Logo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Logo({:?}, {} bytes)", self.kind, self.bytes.len())
    }
}

impl Logo {
    /// A PNG (by its signature) or an SVG (an `<svg` element in its first
    /// kilobyte) of at most [`MAX_LOGO_BYTES`].
    pub fn read(bytes: Vec<u8>) -> Result<Logo, String> {
        if bytes.len() > MAX_LOGO_BYTES {
            return Err(format!(
                "the logo is {} KiB; at most {} KiB",
                bytes.len() / 1024,
                MAX_LOGO_BYTES / 1024
            ));
        }
        const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
        let kind = if bytes.starts_with(PNG) {
            LogoKind::Png
        } else {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_lowercase();
            if head.contains("<svg") {
                LogoKind::Svg
            } else {
                return Err("the logo must be a PNG or an SVG file".into());
            }
        };
        Ok(Logo {
            kind,
            bytes: bytes.into(),
        })
    }

    pub fn content_type(&self) -> &'static str {
        match self.kind {
            LogoKind::Png => "image/png",
            LogoKind::Svg => "image/svg+xml",
        }
    }

    /// The path the logo is served at (its extension says its format).
    pub fn path(&self) -> &'static str {
        match self.kind {
            LogoKind::Png => "/brand/logo.png",
            LogoKind::Svg => "/brand/logo.svg",
        }
    }
}

/// A Nigerian or international WhatsApp number as `wa.me` wants it: digits
/// only, with the country code (`0803 456 7890`, `+234 803…` and `234803…`
/// are all `2348034567890`).
pub fn whatsapp_number(text: &str) -> Result<String, String> {
    let digits: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '(' | ')' | '+' | '.'))
        .collect();
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "a WhatsApp number is digits (0803 456 7890 or +234 803 456 7890), not {text:?}"
        ));
    }
    let full = match digits.strip_prefix('0') {
        Some(rest) if digits.len() == 11 => format!("234{rest}"),
        _ => digits,
    };
    if !(10..=15).contains(&full.len()) {
        return Err(format!(
            "a WhatsApp number has 11 digits (0803 456 7890) or its country code (+234 803 456 7890), not {text:?}"
        ));
    }
    Ok(full)
}

/// A business name: trimmed, not empty, at most [`MAX_NAME_CHARS`].
pub fn business_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err("the business name is empty".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "the business name has at most {MAX_NAME_CHARS} characters"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("the business name is one line of text".into());
    }
    Ok(name.to_owned())
}

/// The brand in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brand {
    pub name: String,
    pub colour: Colour,
    pub logo: Option<Logo>,
    /// An email address or phone number (free text), shown as is.
    pub support: Option<String>,
    /// Digits with the country code (see [`whatsapp_number`]).
    pub whatsapp: Option<String>,
    /// The small "powered by billpay" credit.
    pub credit: bool,
}

impl Default for Brand {
    fn default() -> Self {
        Brand {
            name: "billpay".into(),
            colour: Colour::default(),
            logo: None,
            support: None,
            whatsapp: None,
            credit: true,
        }
    }
}

impl Brand {
    /// `https://wa.me/<digits>`, when a WhatsApp number is set.
    pub fn whatsapp_link(&self) -> Option<String> {
        self.whatsapp.as_ref().map(|d| format!("https://wa.me/{d}"))
    }

    /// The name's first letter or digit, upper case (the default icon).
    pub fn initial(&self) -> String {
        self.name
            .chars()
            .find(|c| c.is_alphanumeric())
            .map_or("B".to_owned(), |c| c.to_uppercase().collect())
    }

    /// The logo's path, if there is a logo.
    pub fn logo_path(&self) -> Option<&'static str> {
        self.logo.as_ref().map(Logo::path)
    }

    /// The default icon: the initial in white on the colour, as SVG.
    pub fn initial_icon_svg(&self) -> String {
        let initial = self
            .initial()
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 512 512\">\
             <rect width=\"512\" height=\"512\" rx=\"96\" fill=\"{}\"/>\
             <text x=\"256\" y=\"256\" dy=\".35em\" text-anchor=\"middle\" \
             font-family=\"Arial,Helvetica,sans-serif\" font-weight=\"700\" font-size=\"300\" \
             fill=\"{}\">{initial}</text></svg>",
            self.colour.as_str(),
            self.colour.text_on()
        )
    }

    /// This brand with an owner's edits laid over it (an edit left out
    /// keeps the setting; an empty contact removes it). Edits that no
    /// longer read (stored by an older rule) are skipped.
    pub fn with(&self, edits: &BrandEdits) -> Brand {
        let mut brand = self.clone();
        if let Some(name) = edits.name.as_deref().and_then(|n| business_name(n).ok()) {
            brand.name = name;
        }
        if let Some(colour) = edits.colour.as_deref().and_then(|c| Colour::parse(c).ok()) {
            brand.colour = colour;
        }
        if let Some(support) = &edits.support {
            brand.support = Some(support.trim().to_owned()).filter(|s| !s.is_empty());
        }
        if let Some(whatsapp) = &edits.whatsapp {
            brand.whatsapp = whatsapp_number(whatsapp).ok();
        }
        if let Some(credit) = edits.credit {
            brand.credit = credit;
        }
        brand
    }
}

/// An owner's edits of the brand (the console's Brand page), stored as one
/// document; `None`: the setting's value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrandEdits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colour: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whatsapp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit: Option<bool>,
}

impl BrandEdits {
    /// Every edit checked: the first refusal, naming its field.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(name) = &self.name {
            business_name(name).map_err(|e| ("name", e))?;
        }
        if let Some(colour) = &self.colour {
            Colour::parse(colour).map_err(|e| ("colour", e))?;
        }
        if let Some(whatsapp) = self.whatsapp.as_deref().filter(|w| !w.trim().is_empty()) {
            whatsapp_number(whatsapp).map_err(|e| ("whatsapp", e))?;
        }
        if let Some(support) = &self.support
            && support.chars().count() > 120
        {
            return Err((
                "support",
                "the support contact has at most 120 characters".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_six_hex_digits() {
        assert_eq!(Colour::parse("#AABBCC").unwrap().as_str(), "#aabbcc");
        assert_eq!(Colour::parse("0f766e").unwrap().as_str(), "#0f766e");
        for bad in ["#abc", "red", "#gggggg", "", "#0f766e0"] {
            assert!(Colour::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Colour::parse("#ffffff").unwrap().text_on(), "#111827");
        assert_eq!(Colour::parse("#0f766e").unwrap().text_on(), "#ffffff");
    }

    #[test]
    fn whatsapp_numbers_in_every_spelling_are_one() {
        for spelling in [
            "08034567890",
            "0803 456 7890",
            "+234 803 456 7890",
            "2348034567890",
        ] {
            assert_eq!(whatsapp_number(spelling).unwrap(), "2348034567890");
        }
        for bad in ["", "0803-CALL-ME", "123"] {
            assert!(whatsapp_number(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn logos_are_png_or_svg_and_bounded() {
        let png = Logo::read(b"\x89PNG\r\n\x1a\nrest".to_vec()).unwrap();
        assert_eq!(png.content_type(), "image/png");
        let svg = Logo::read(b"<?xml version=\"1.0\"?><svg></svg>".to_vec()).unwrap();
        assert_eq!(svg.kind, LogoKind::Svg);
        assert!(Logo::read(b"GIF89a".to_vec()).is_err());
        assert!(Logo::read(vec![b' '; MAX_LOGO_BYTES + 1]).is_err());
    }

    #[test]
    fn edits_lay_over_the_settings() {
        let settings = Brand {
            name: "Ada Data".into(),
            whatsapp: Some("2348030000000".into()),
            ..Brand::default()
        };
        let edits = BrandEdits {
            colour: Some("#112233".into()),
            whatsapp: Some(String::new()),
            credit: Some(false),
            ..BrandEdits::default()
        };
        let brand = settings.with(&edits);
        assert_eq!(brand.name, "Ada Data");
        assert_eq!(brand.colour.as_str(), "#112233");
        assert_eq!(brand.whatsapp_link(), None);
        assert!(!brand.credit);
        assert_eq!(brand.initial(), "A");
        assert!(brand.initial_icon_svg().contains("#112233"));
        assert!(
            BrandEdits {
                colour: Some("blue".into()),
                ..BrandEdits::default()
            }
            .check()
            .is_err()
        );
    }
}
