//! What a purchase delivered — electricity tokens, exam and e-pin pins and
//! serials — is money: read from a stolen database file it can be used. So,
//! like webhook secrets, it is stored sealed (ChaCha20-Poly1305 under the
//! master key). Each engine holds a [`Sealer`]; the store operations that
//! write a secret mark that argument `#[sealed]` and those that read one
//! back are `opened` (`db::for_both_engines!`): it is sealed before it goes
//! to the engine and opened as it leaves, never on SQLite's writer thread,
//! so every reader (API, dashboard, CLI, webhook delivery) sees it in clear
//! and nothing else does. What is sealed is said by [`Seal`] and [`Open`].
//!
//! Rows written before sealing existed are read as they are (clear JSON):
//! a sealed value is recognisable (`{"sealed": "sealed:…"}`, `sealed:…`).

use crate::*;
use billpay_domain::sealed::SecretBox;
use serde_json::{Value, json};

const SEALED: &str = "sealed:";

/// The master key an engine seals with, or why there is none (said when a
/// value needs it); a store opened bare ([`crate::open`], the store's own
/// tests) has no sealing at all and writes and reads values as they are.
pub(crate) struct Sealer {
    secrets: Option<Result<SecretBox, String>>,
}

impl Sealer {
    /// No sealing: values are written and read as they are.
    pub(crate) fn clear() -> Sealer {
        Sealer { secrets: None }
    }

    pub(crate) fn with(secrets: Result<SecretBox, String>) -> Sealer {
        Sealer {
            secrets: Some(secrets),
        }
    }

    fn secrets(&self) -> StoreResult<Option<&SecretBox>> {
        match &self.secrets {
            None => Ok(None),
            Some(Ok(secrets)) => Ok(Some(secrets)),
            Some(Err(why)) => Err(StoreError::Invalid(format!(
                "delivered pins are sealed under the master key: {why}"
            ))),
        }
    }

    fn seal_text(&self, clear: &str) -> StoreResult<String> {
        Ok(match self.secrets()? {
            Some(secrets) => format!("{SEALED}{}", secrets.seal(clear)),
            None => clear.to_owned(),
        })
    }

    fn open_text(&self, stored: String) -> StoreResult<String> {
        let Some(sealed) = stored.strip_prefix(SEALED) else {
            return Ok(stored); // written before sealing: clear
        };
        let Some(secrets) = self.secrets()? else {
            return Ok(stored); // a bare store reads what is stored
        };
        secrets
            .open(sealed)
            .map_err(|e| StoreError::Invalid(format!("cannot open a delivered pin: {e}")))
    }

    /// The result stays a JSON object, so the column remains valid JSON.
    fn seal_result(&self, result: Value) -> StoreResult<Value> {
        if result.as_object().is_some_and(|o| o.is_empty()) || self.secrets.is_none() {
            return Ok(result);
        }
        Ok(json!({ "sealed": self.seal_text(&result.to_string())? }))
    }

    fn open_result(&self, result: Value) -> StoreResult<Value> {
        let Some(sealed) = result.get("sealed").and_then(Value::as_str) else {
            return Ok(result);
        };
        let clear = self.open_text(sealed.to_owned())?;
        if clear.starts_with(SEALED) {
            return Ok(result); // a bare store reads what is stored
        }
        serde_json::from_str(&clear).map_err(StoreError::caused)
    }

    /// A notice's data with its secret fields ([`SECRET_NOTICE_FIELDS`])
    /// moved into one sealed field; data without them is unchanged.
    fn seal_notice_data(&self, mut data: Value) -> StoreResult<Value> {
        let Some(fields) = data.as_object_mut().filter(|_| self.secrets.is_some()) else {
            return Ok(data);
        };
        let secret: serde_json::Map<String, Value> = SECRET_NOTICE_FIELDS
            .iter()
            .filter_map(|name| fields.remove(*name).map(|v| ((*name).to_owned(), v)))
            .collect();
        if !secret.is_empty() {
            let sealed = self.seal_text(&Value::Object(secret).to_string())?;
            fields.insert("sealed".into(), Value::String(sealed));
        }
        Ok(data)
    }
}

/// What a notice's data may hold that must not be readable at rest: a
/// verification or reset code, a link carrying a token.
pub const SECRET_NOTICE_FIELDS: [&str; 2] = ["code", "link"];

/// A value a store operation writes with a secret in it: sealed (by the
/// engine's [`Sealer`]) before it reaches the engine.
pub(crate) trait Seal: Sized {
    fn sealed(self, sealer: &Sealer) -> StoreResult<Self>;
}

/// A value a store operation reads with a secret in it: opened as it
/// leaves the store.
pub(crate) trait Open: Sized {
    fn opened(self, sealer: &Sealer) -> StoreResult<Self>;
}

/// A finalization's result and webhook payload.
impl Seal for Finalization {
    fn sealed(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.result = sealer.seal_result(self.result)?;
        self.event_payload = sealer.seal_text(&self.event_payload)?;
        Ok(self)
    }
}

/// A notice's code or link.
impl Seal for NewNotice {
    fn sealed(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.data = sealer.seal_notice_data(self.data)?;
        Ok(self)
    }
}

/// A notice drafted by the caller, addressed by the store (a code or reset
/// link is in it): its data sealed whole, as a delivered pin is.
impl Seal for NoticeDraft {
    fn sealed(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.data = sealer.seal_result(self.data)?;
        Ok(self)
    }
}

impl Seal for EmailCode {
    fn sealed(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.notice = self.notice.sealed(sealer)?;
        Ok(self)
    }
}

impl Seal for NewSignUp {
    fn sealed(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.code = self.code.sealed(sealer)?;
        Ok(self)
    }
}

impl Seal for NewPasswordReset {
    fn sealed(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.notice = self.notice.sealed(sealer)?;
        Ok(self)
    }
}

/// What the purchase delivered.
impl Open for Transaction {
    fn opened(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.result = sealer.open_result(self.result)?;
        Ok(self)
    }
}

/// The webhook's body.
impl Open for Event {
    fn opened(mut self, sealer: &Sealer) -> StoreResult<Self> {
        self.payload = sealer.open_text(self.payload)?;
        Ok(self)
    }
}

/// The notice with its sealed fields back in its data.
impl Open for Notice {
    fn opened(mut self, sealer: &Sealer) -> StoreResult<Self> {
        let opened = sealer.open_result(self.data.clone())?;
        if let (Some(fields), Value::Object(secret)) = (self.data.as_object_mut(), opened)
            && secret.get("sealed").is_none()
            && fields.remove("sealed").is_some()
        {
            fields.extend(secret);
        }
        Ok(self)
    }
}

impl<T: Open> Open for Vec<T> {
    fn opened(self, sealer: &Sealer) -> StoreResult<Self> {
        self.into_iter().map(|t| t.opened(sealer)).collect()
    }
}

impl<T: Open> Open for Option<T> {
    fn opened(self, sealer: &Sealer) -> StoreResult<Self> {
        self.map(|t| t.opened(sealer)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_what_is_written_and_reads_old_clear_rows() {
        let key = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
        let sealer = Sealer::with(Ok(key));
        let result = json!({ "pin": "1234-5678", "units": 2.5 });
        let stored = sealer.seal_result(result.clone()).unwrap();
        assert!(!stored.to_string().contains("1234-5678"), "{stored}");
        assert_eq!(sealer.open_result(stored.clone()).unwrap(), result);
        // a clear row from before sealing reads as it is
        assert_eq!(sealer.open_result(result.clone()).unwrap(), result);
        assert_eq!(sealer.open_text("{\"a\":1}".into()).unwrap(), "{\"a\":1}");
        // a bare store neither seals nor opens
        let bare = Sealer::clear();
        assert_eq!(bare.seal_result(result.clone()).unwrap(), result);
        assert_eq!(bare.open_result(stored.clone()).unwrap(), stored);
        // without a master key a sealed value cannot be written or read, and says why
        let keyless = Sealer::with(Err("set BILLPAY_MASTER_KEY".into()));
        let sealed_text = sealer.seal_text("secret").unwrap();
        let err = keyless.open_text(sealed_text).unwrap_err().to_string();
        assert!(err.contains("set BILLPAY_MASTER_KEY"), "{err}");
        let err = keyless.seal_result(result).unwrap_err().to_string();
        assert!(err.contains("set BILLPAY_MASTER_KEY"), "{err}");
    }

    #[test]
    fn a_notice_keeps_its_plain_fields_and_opens_its_secret_ones() {
        let key = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
        let sealer = Sealer::with(Ok(key));
        let data = json!({ "code": "123456", "name": "Ada" });
        let stored = sealer.seal_notice_data(data.clone()).unwrap();
        assert_eq!(stored["name"], "Ada");
        assert!(!stored.to_string().contains("123456"), "{stored}");
        let notice = |data| Notice {
            id: "NT1".into(),
            cause: "verify:1".into(),
            kind: "email_code".into(),
            channel: "email".into(),
            recipient: "ada@example.com".into(),
            account_id: None,
            operator_id: None,
            data,
            status: NoticeStatus::Queued,
            attempts: 0,
            next_attempt_at_ms: 0,
            last_error: None,
            provider: None,
            provider_id: None,
            created_at: String::new(),
            sent_at: None,
        };
        let opened = notice(stored.clone()).opened(&sealer).unwrap();
        assert_eq!(opened.data, data);
        // a bare store reads the notice as it is stored
        let read = notice(stored.clone()).opened(&Sealer::clear()).unwrap();
        assert_eq!(read.data, stored);
    }
}
