//! OpenAPI schemas of the request fields whose rules live in `domain` types
//! (used with `#[schema(schema_with = …)]`): the document states the same rules
//! the parsers apply, so a request valid by the document is never refused for
//! its shape. The patterns are ECMA-262 and Python `re` compatible.

use utoipa::openapi::schema::{Object, ObjectBuilder, SchemaType, Type};

/// Rust's `char::is_whitespace` spelled out (a validator's `\s` may be ASCII
/// only, or add U+FEFF): for `Reference` and for `Phone`'s trimming.
const WHITESPACE: &str = r"\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";

/// The Basic Multilingual Plane's format characters as a character-class body
/// (`\uXXXX-\uXXXX`); the few outside it cannot be written portably (ECMA needs
/// the `u` flag for them) and are refused by the parser only.
fn format_characters() -> String {
    billpay_domain::reference::FORMAT_CHARACTERS
        .iter()
        .filter(|(_, last)| u32::from(*last) <= 0xFFFF)
        .map(|&(first, last)| format!(r"\u{:04x}-\u{:04x}", u32::from(first), u32::from(last)))
        .collect()
}

/// `Reference::parse`: 8 to 100 characters, no whitespace, control or format characters.
pub fn reference() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(8))
        .max_length(Some(100))
        .pattern(Some(format!(
            r"^[^{WHITESPACE}\x00-\x1f\x7f-\x9f{}]{{8,100}}$",
            format_characters()
        )))
        .description(Some(
            "Your unique reference: 8 to 100 characters without spaces, control or invisible format characters",
        ))
        .examples(["order-0001"])
        .build()
}

/// `Phone::parse`: 0XXXXXXXXXX, 234XXXXXXXXXX or +234XXXXXXXXXX (7, 8 or 9 after
/// the prefix); single spaces or hyphens between digits are allowed.
pub fn phone() -> Object {
    phone_of(Type::String.into())
}

pub fn optional_phone() -> Object {
    phone_of(SchemaType::from_iter([Type::String, Type::Null]))
}

fn phone_of(schema_type: SchemaType) -> Object {
    ObjectBuilder::new()
        .schema_type(schema_type)
        .pattern(Some(format!(
            r"^[{WHITESPACE}]*(0[ -]?[789]|\+?2[ -]?3[ -]?4[ -]?[789])([ -]?[0-9]){{9}}[{WHITESPACE}]*$"
        )))
        .description(Some(
            "Nigerian phone number: 0XXXXXXXXXX, 234XXXXXXXXXX or +234XXXXXXXXXX",
        ))
        .examples(["08031234567"])
        .build()
}

/// A provider's UUID or slug; one that does not offer the service is refused
/// with 422 `invalid_provider`.
pub fn provider_id() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .description(Some("Provider UUID or slug, e.g. mtn"))
        .examples(["mtn"])
        .build()
}

/// `CustomerId::parse`: 1 to 40 characters (the lengths), no control
/// characters, at least one that is not whitespace or a format character (the
/// pattern); kept in its canonical form (docs/limits.md).
pub fn customer_id() -> Object {
    const NOT_CONTROL: &str = r"[^\x00-\x1f\x7f-\x9f]*";
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(40))
        .pattern(Some(format!(
            r"^{NOT_CONTROL}[^{WHITESPACE}\x00-\x1f\x7f-\x9f{}]{NOT_CONTROL}$",
            format_characters()
        )))
        .description(Some(
            "Betting account id: 1 to 40 characters, not only spaces. Spaces are dropped and letters upper-cased: the id is sent to the supplier, checked against the blocklist and counted by the limits in that form",
        ))
        .build()
}

/// `IdNumber::parse`: a BVN or NIN, 11 digits; whitespace and hyphens people
/// type between them are dropped.
pub fn id_number() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(r"^[{WHITESPACE}-]*([0-9][{WHITESPACE}-]*){{11}}$")))
        .description(Some(
            "The 11-digit BVN or NIN (spaces and hyphens allowed). Never stored, logged or sent back: only its last 4 digits are kept.",
        ))
        .examples(["22222222226"])
        .build()
}

/// The longest of a person's names an identity check takes (three of them
/// joined stay within the 100 characters the check takes).
pub const NAME_PART_MAX: usize = 32;

/// A first name or surname for an identity check: at least one character
/// that is not whitespace, at most [`NAME_PART_MAX`].
pub fn first_name() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(NAME_PART_MAX))
        .pattern(Some(format!("[^{WHITESPACE}]")))
        .build()
}

/// A middle name may be blank (it is left out then), so only its length is a rule.
pub fn middle_name() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .max_length(Some(NAME_PART_MAX))
        .build()
}

/// A date of birth: `YYYY-MM-DD`, from 1900 (it must also be before today:
/// a rule of the day, not of the shape).
pub fn birth_date() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Date,
        )))
        .pattern(Some(r"^(19|[2-9][0-9])[0-9]{2}-"))
        .description(Some("`YYYY-MM-DD`, from 1900 and before today (Lagos)"))
        .examples(["1993-04-27"])
        .build()
}

#[cfg(test)]
mod tests {
    use billpay_domain::{Phone, Reference};

    fn pattern(schema: super::Object) -> regex::Regex {
        regex::Regex::new(&schema.pattern.unwrap()).unwrap()
    }

    #[test]
    fn identity_patterns_are_the_parsers() {
        use billpay_funding::identity::IdNumber;
        let number = pattern(super::id_number());
        for sample in [
            "22222222226",
            "222 2222 2226",
            "222-2222-2226\t",
            "2222222222",
            "2222222222x",
            "222222222267",
        ] {
            assert_eq!(
                number.is_match(sample),
                IdNumber::parse(sample).is_ok(),
                "{sample}"
            );
        }
        let name = pattern(super::first_name());
        for sample in ["Ada", " Ada ", "", " ", "\u{3000}\u{85}", "\u{feff}"] {
            assert_eq!(
                name.is_match(sample),
                !sample.trim().is_empty(),
                "{sample:?}"
            );
        }
        let born = pattern(super::birth_date());
        assert!(born.is_match("1900-01-01") && born.is_match("2026-11-26"));
        assert!(!born.is_match("1899-12-31") && !born.is_match("0999-01-01"));
    }

    #[test]
    fn reference_pattern_is_the_parser() {
        let documented = pattern(super::reference());
        let long = "x".repeat(100);
        let too_long = "x".repeat(101);
        for sample in [
            "abcdefgh",
            "order-ñ-42",
            "abcdefg",
            &long,
            &too_long,
            "abcd efgh",
            "abcdefgh\n",
            "abcd\u{a0}efgh",
            "abcd\u{2003}efgh",
            "abcd\u{85}efgh",
            "abcd\u{7}efgh",
            "abcd\u{feff}efgh",
            "abcd\u{200b}efgh",
            "abcd\u{202e}efgh",
            "abcd\u{ad}efgh",
        ] {
            let parsed = Reference::parse(sample).is_ok();
            assert_eq!(documented.is_match(sample), parsed, "{sample:?}");
        }
    }

    #[test]
    fn customer_id_pattern_is_the_parser() {
        let schema = super::customer_id();
        let max = schema.max_length.unwrap();
        let documented = pattern(schema);
        let long = "7".repeat(41);
        for sample in [
            "BK556677",
            " BK556677",
            "bk556677\u{a0}",
            "ＢＫ556677",
            "é",
            "7",
            " ",
            "\u{a0}\u{3000}",
            "\u{200b}",
            " \u{feff} ",
            "",
            "a\nb",
            "BK\u{7f}",
            long.as_str(),
        ] {
            let parsed = billpay_domain::CustomerId::parse(sample).is_ok();
            let valid = documented.is_match(sample) && sample.chars().count() <= max;
            assert_eq!(valid, parsed, "{sample:?}");
        }
    }

    #[test]
    fn phone_pattern_is_the_parser() {
        let documented = pattern(super::phone());
        for sample in [
            "08031234567",
            "2348031234567",
            "+2348031234567",
            "0803 123 4567",
            "0803-123-4567",
            "+234 803 123 4567",
            " 08031234567\u{a0}",
            "\u{3000}08031234567",
            "0803--1234567",
            "+ 2348031234567",
            "06031234567",
            "+08031234567",
            "0803123456",
            "08031234567 ",
            "08031234567-",
            "080312345678",
        ] {
            let parsed = Phone::parse(sample).is_ok();
            assert_eq!(documented.is_match(sample), parsed, "{sample:?}");
        }
    }
}
