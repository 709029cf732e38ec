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

/// What an engine seals with: the master key (or why there is none), or
/// nothing for a store opened bare ([`crate::open`], the store's own tests),
/// which writes and reads values as they are. Decided here once: [`Seal`]
/// and [`Open`] only ever see a [`Key`].
pub(crate) struct Sealer(Option<Key>);

/// The master key, or why there is none (said when a value needs it).
pub(crate) struct Key {
    secrets: Result<SecretBox, String>,
}

impl Sealer {
    /// No sealing: values are written and read as they are.
    pub(crate) fn clear() -> Sealer {
        Sealer(None)
    }

    pub(crate) fn with(secrets: Result<SecretBox, String>) -> Sealer {
        Sealer(Some(Key { secrets }))
    }

    /// `value` as it is written: sealed, unless the store is bare.
    pub(crate) fn seal<T: Seal>(&self, value: T) -> StoreResult<T> {
        match &self.0 {
            Some(key) => value.sealed(key),
            None => Ok(value),
        }
    }

    /// `value` as it is read: opened, unless the store is bare.
    pub(crate) fn open<T: Open>(&self, value: T) -> StoreResult<T> {
        match &self.0 {
            Some(key) => value.opened(key),
            None => Ok(value),
        }
    }
}

impl Key {
    fn secrets(&self) -> StoreResult<&SecretBox> {
        self.secrets.as_ref().map_err(|why| {
            StoreError::Invalid(format!(
                "delivered pins are sealed under the master key: {why}"
            ))
        })
    }

    fn seal_text(&self, clear: &str) -> StoreResult<String> {
        Ok(format!("{SEALED}{}", self.secrets()?.seal(clear)))
    }

    fn open_text(&self, stored: String) -> StoreResult<String> {
        let Some(sealed) = stored.strip_prefix(SEALED) else {
            return Ok(stored); // written before sealing: clear
        };
        self.secrets()?
            .open(sealed)
            .map_err(|e| StoreError::Invalid(format!("cannot open a delivered pin: {e}")))
    }

    /// The result stays a JSON object, so the column remains valid JSON.
    fn seal_result(&self, result: Value) -> StoreResult<Value> {
        if result.as_object().is_some_and(|o| o.is_empty()) {
            return Ok(result);
        }
        Ok(json!({ "sealed": self.seal_text(&result.to_string())? }))
    }

    fn open_result(&self, result: Value) -> StoreResult<Value> {
        let Some(sealed) = result.get("sealed").and_then(Value::as_str) else {
            return Ok(result);
        };
        let clear = self.open_text(sealed.to_owned())?;
        serde_json::from_str(&clear).map_err(StoreError::caused)
    }

    /// A notice's data with its secret fields ([`SECRET_NOTICE_FIELDS`])
    /// moved into one sealed field; data without them is unchanged.
    fn seal_notice_data(&self, mut data: Value) -> StoreResult<Value> {
        let Some(fields) = data.as_object_mut() else {
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

/// A value a store operation writes with a secret in it: sealed (through
/// the engine's [`Sealer`]) before it reaches the engine.
pub(crate) trait Seal: Sized {
    fn sealed(self, key: &Key) -> StoreResult<Self>;
}

/// A value a store operation reads with a secret in it: opened as it
/// leaves the store.
pub(crate) trait Open: Sized {
    fn opened(self, key: &Key) -> StoreResult<Self>;
}

/// A finalization's result and webhook payload.
impl Seal for Finalization {
    fn sealed(mut self, key: &Key) -> StoreResult<Self> {
        self.result = key.seal_result(self.result)?;
        self.event_payload = key.seal_text(&self.event_payload)?;
        Ok(self)
    }
}

/// A notice's code or link.
impl Seal for NewNotice {
    fn sealed(mut self, key: &Key) -> StoreResult<Self> {
        self.data = key.seal_notice_data(self.data)?;
        Ok(self)
    }
}

/// A notice drafted by the caller, addressed by the store (a code or reset
/// link is in it): its data sealed whole, as a delivered pin is.
impl Seal for NoticeDraft {
    fn sealed(mut self, key: &Key) -> StoreResult<Self> {
        self.data = key.seal_result(self.data)?;
        Ok(self)
    }
}

impl Seal for EmailCode {
    fn sealed(mut self, key: &Key) -> StoreResult<Self> {
        self.notice = self.notice.sealed(key)?;
        Ok(self)
    }
}

impl Seal for NewSignUp {
    fn sealed(mut self, key: &Key) -> StoreResult<Self> {
        self.code = self.code.sealed(key)?;
        Ok(self)
    }
}

impl Seal for NewPasswordReset {
    fn sealed(mut self, key: &Key) -> StoreResult<Self> {
        self.notice = self.notice.sealed(key)?;
        Ok(self)
    }
}

/// What the purchase delivered.
impl Open for Transaction {
    fn opened(mut self, key: &Key) -> StoreResult<Self> {
        self.result = key.open_result(self.result)?;
        Ok(self)
    }
}

/// Its purchases' deliveries.
impl Open for WalletView {
    fn opened(mut self, key: &Key) -> StoreResult<Self> {
        self.recent = self.recent.opened(key)?;
        Ok(self)
    }
}

impl Open for SessionHome {
    fn opened(mut self, key: &Key) -> StoreResult<Self> {
        self.wallet = self.wallet.opened(key)?;
        Ok(self)
    }
}

/// The webhook's body.
impl Open for Event {
    fn opened(mut self, key: &Key) -> StoreResult<Self> {
        self.payload = key.open_text(self.payload)?;
        Ok(self)
    }
}

/// The notice with its sealed fields back in its data.
impl Open for Notice {
    fn opened(mut self, key: &Key) -> StoreResult<Self> {
        let opened = key.open_result(self.data.clone())?;
        if let (Some(fields), Value::Object(secret)) = (self.data.as_object_mut(), opened)
            && fields.remove("sealed").is_some()
        {
            fields.extend(secret);
        }
        Ok(self)
    }
}

impl<T: Open> Open for Vec<T> {
    fn opened(self, key: &Key) -> StoreResult<Self> {
        self.into_iter().map(|t| t.opened(key)).collect()
    }
}

impl<T: Open> Open for Option<T> {
    fn opened(self, key: &Key) -> StoreResult<Self> {
        self.map(|t| t.opened(key)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        let master = SecretBox::generate_master_key();
        Key {
            secrets: Ok(SecretBox::from_hex(&master).unwrap()),
        }
    }

    fn notice(data: Value) -> Notice {
        Notice {
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
        }
    }

    #[test]
    fn seals_what_is_written_and_reads_old_clear_rows() {
        let key = key();
        let result = json!({ "pin": "1234-5678", "units": 2.5 });
        let stored = key.seal_result(result.clone()).unwrap();
        assert!(!stored.to_string().contains("1234-5678"), "{stored}");
        assert_eq!(key.open_result(stored).unwrap(), result);
        // a clear row from before sealing reads as it is
        assert_eq!(key.open_result(result.clone()).unwrap(), result);
        assert_eq!(key.open_text("{\"a\":1}".into()).unwrap(), "{\"a\":1}");
        // without a master key a sealed value cannot be written or read, and says why
        let keyless = Key {
            secrets: Err("set BILLPAY_MASTER_KEY".into()),
        };
        let sealed_text = key.seal_text("secret").unwrap();
        let err = keyless.open_text(sealed_text).unwrap_err().to_string();
        assert!(err.contains("set BILLPAY_MASTER_KEY"), "{err}");
        let err = keyless.seal_result(result).unwrap_err().to_string();
        assert!(err.contains("set BILLPAY_MASTER_KEY"), "{err}");
    }

    #[test]
    fn a_bare_store_neither_seals_nor_opens() {
        let bare = Sealer::clear();
        let fin = Finalization {
            status: billpay_domain::TxStatus::Successful,
            message: "done".into(),
            result: json!({ "pin": "1234-5678" }),
            completed_at_ms: 0,
            event_payload: "{}".into(),
            reversal: false,
            cost: None,
            watch_at_ms: None,
        };
        let written = bare.seal(fin.clone()).unwrap();
        assert_eq!(written.result, fin.result);
        assert_eq!(written.event_payload, fin.event_payload);
        let stored = key().seal_notice_data(json!({ "code": "123456" })).unwrap();
        assert_eq!(bare.open(notice(stored.clone())).unwrap().data, stored);
    }

    #[test]
    fn a_notice_keeps_its_plain_fields_and_opens_its_secret_ones() {
        let key = key();
        let data = json!({ "code": "123456", "name": "Ada" });
        let stored = key.seal_notice_data(data.clone()).unwrap();
        assert_eq!(stored["name"], "Ada");
        assert!(!stored.to_string().contains("123456"), "{stored}");
        assert_eq!(notice(stored).opened(&key).unwrap().data, data);
    }
}
