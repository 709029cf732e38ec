//! A refused form drawn again on its own page: the message beside the field
//! it concerns (or at the top of the form when it concerns no one field),
//! with everything typed kept. A page holds one [`Refill`] (empty when no
//! form was refused) and its template asks it, per form and field:
//!
//! ```html
//! <input name="amount" value="{{ refill.value("credit", "amount") }}"
//!   {% if refill.error("credit", "amount").is_some() %}aria-invalid="true"{% endif %}>
//! {% if let Some(m) = refill.error("credit", "amount") %}<p class="field-error">{{ m }}</p>{% endif %}
//! ```
//!
//! A handler turns an operation's refusal into one with [`Refill::refused`]:
//! a refusal of the role (403) and a store failure stay error pages.

use crate::pages::{PageError, refused};
use axum::http::StatusCode;
use billpay_operations::OpsError;

#[derive(Debug, Default, Clone)]
pub struct Refill {
    /// The form's id on the page; empty: no form was refused.
    form: &'static str,
    /// The field the message is about, when it names one of the form's.
    field: Option<String>,
    message: String,
    values: Vec<(&'static str, String)>,
}

impl Refill {
    /// Nothing refused: every field empty, no message.
    pub fn none() -> Refill {
        Refill::default()
    }

    /// `form` refused `field` (or the whole form: `None`) with `message`;
    /// `values` are the fields as typed.
    pub fn new(
        form: &'static str,
        field: Option<&str>,
        message: impl Into<String>,
        values: Vec<(&'static str, String)>,
    ) -> Refill {
        Refill {
            form,
            field: field.map(str::to_owned),
            message: message.into(),
            values,
        }
    }

    /// An operation's refusal of `form`, with its status: an input's
    /// (`Invalid`, beside its first field when the form has it), a missing
    /// thing's or a state's (at the top of the form). A refusal of the role
    /// or a store failure is the error page as before.
    pub fn refused(
        form: &'static str,
        error: OpsError,
        values: Vec<(&'static str, String)>,
    ) -> Result<(StatusCode, Refill), PageError> {
        let status = match &error {
            OpsError::Invalid(_) => StatusCode::BAD_REQUEST,
            OpsError::NotFound(_) => StatusCode::NOT_FOUND,
            OpsError::Refused(_) => StatusCode::CONFLICT,
            _ => return Err(refused(error)),
        };
        let (field, message) = match &error {
            OpsError::Invalid(invalid) => {
                let field = invalid
                    .fields
                    .first()
                    .copied()
                    .filter(|f| values.iter().any(|(name, _)| name == f));
                match field {
                    // Beside the field: the rule alone ("must be more than 0").
                    Some(field) => (Some(field), invalid.rule.clone()),
                    None => (None, error.to_string()),
                }
            }
            _ => (None, error.to_string()),
        };
        Ok((status, Refill::new(form, field, message, values)))
    }

    /// What was typed in `form`'s `field`, or nothing.
    pub fn value(&self, form: &str, field: &str) -> &str {
        if self.form != form {
            return "";
        }
        self.values
            .iter()
            .find(|(name, _)| *name == field)
            .map_or("", |(_, value)| value.as_str())
    }

    /// What was typed in `form`'s `field` when `form` was the one refused,
    /// else `current` (a form drawn with the values in force: the limits).
    pub fn value_or<'a>(&'a self, form: &str, field: &str, current: &'a str) -> &'a str {
        if self.form.is_empty() || self.form != form {
            return current;
        }
        self.value(form, field)
    }

    /// The message beside `form`'s `field`, if it is the one refused.
    pub fn error(&self, form: &str, field: &str) -> Option<&str> {
        (self.form == form && self.field.as_deref() == Some(field)).then_some(&self.message)
    }

    /// The message about `form` as a whole, if it was refused for no one field.
    pub fn form_error(&self, form: &str) -> Option<&str> {
        (!self.form.is_empty() && self.form == form && self.field.is_none())
            .then_some(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_only_for_the_form_refused() {
        let values = vec![
            ("amount", "5,0".to_owned()),
            ("reason", "top up".to_owned()),
        ];
        let refill = Refill::new("credit", Some("amount"), "must be a number", values);
        assert_eq!(refill.value("credit", "amount"), "5,0");
        assert_eq!(refill.value("credit", "reason"), "top up");
        assert_eq!(refill.value("debit", "amount"), "");
        assert_eq!(refill.error("credit", "amount"), Some("must be a number"));
        assert_eq!(refill.error("credit", "reason"), None);
        assert_eq!(refill.error("debit", "amount"), None);
        assert_eq!(refill.form_error("credit"), None);
        assert_eq!(refill.value_or("credit", "amount", "7"), "5,0");
        assert_eq!(refill.value_or("debit", "amount", "7"), "7");
        assert_eq!(Refill::none().value_or("", "amount", "7"), "7");
        assert_eq!(Refill::none().form_error(""), None);
    }
}
