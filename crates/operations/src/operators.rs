//! Operators: the people who run the business from the console. Only an
//! owner (or the CLI) manages them; every change is logged in the same
//! transaction. A TOTP second factor's secret is sealed under the master key
//! like a webhook secret and shown once, when it is enabled.

use crate::{Actor, OpsError, OpsResult, Permission, email_of, invalid};
use billpay_domain::email::canonical_or_typed;
use billpay_domain::sealed::SecretBox;
use billpay_domain::throttle::Who;
use billpay_store::work;
use billpay_store::{
    LogEntry, LogFilter, NewOperator, Operator, OperatorChange, OperatorRole, OperatorStatus, Store,
};
use billpay_store::{secret_right, secret_try};
use totp_rs::{Builder, Secret, Totp};

/// The name authenticator apps show beside the operator's email.
const TOTP_ISSUER: &str = "billpay";

/// A new active operator; `password` hashed with argon2id.
pub async fn create(
    store: &dyn Store,
    actor: Actor,
    email: &str,
    role: OperatorRole,
    password: &str,
) -> OpsResult<Operator> {
    actor.require(Permission::ManageOperators)?;
    let email = email_of(email)?.into_string();
    let email = email.as_str();
    let password_hash = billpay_domain::password::hash(password)?;
    let mut log = actor.log("operator.create", email);
    log.after = Some(format!("{role}, active"));
    let new = NewOperator {
        email: email.to_owned(),
        role,
        password_hash,
    };
    let operator = store
        .write((new, log), |tx, (new, log)| {
            Box::pin(work::create_operator(tx, new, log))
        })
        .await
        .map_err(|e| match e {
            billpay_store::StoreError::EmailTaken(email) => {
                OpsError::Refused(format!("an operator with email {email} exists"))
            }
            other => other.into(),
        })?;
    tracing::info!(%actor, operator = operator.id, role = %role, "operator created");
    Ok(operator)
}

/// An operator by email, in its canonical form ([`canonical_or_typed`]).
pub async fn find(store: &dyn Store, email: &str) -> OpsResult<Operator> {
    store
        .operator_by_email(&canonical_or_typed(email))
        .await?
        .ok_or_else(|| OpsError::NotFound(format!("no operator with email {email}")))
}

pub async fn list(store: &dyn Store, actor: &Actor) -> OpsResult<Vec<Operator>> {
    actor.require(Permission::ManageOperators)?;
    Ok(store.operators().await?)
}

/// Disables (its sessions end at once) or re-enables an operator. An
/// operator cannot disable themself (the last owner could lock everyone out).
pub async fn set_status(
    store: &dyn Store,
    actor: Actor,
    email: &str,
    status: OperatorStatus,
) -> OpsResult<Operator> {
    actor.require(Permission::ManageOperators)?;
    let operator = find(store, email).await?;
    if matches!(&actor, Actor::Operator { id, .. } if *id == operator.id) {
        return Err(OpsError::Refused(
            "you cannot change your own status".into(),
        ));
    }
    let mut log = actor.log("operator.status", operator.email.clone());
    log.before = Some(operator.status.to_string());
    log.after = Some(status.to_string());
    let change = OperatorChange::Status(status);
    let updated = store
        .write((operator.id, change, log), |tx, (id, change, log)| {
            Box::pin(work::update_operator(tx, *id, change, log))
        })
        .await?;
    tracing::info!(%actor, operator = operator.id, status = %status, "operator status set");
    Ok(updated)
}

/// A new password (argon2id); the operator's sessions end.
pub async fn set_password(
    store: &dyn Store,
    actor: Actor,
    email: &str,
    password: &str,
) -> OpsResult<Operator> {
    actor.require(Permission::ManageOperators)?;
    let operator = find(store, email).await?;
    let hash = billpay_domain::password::hash(password)?;
    let log = actor.log("operator.password", operator.email.clone());
    let change = OperatorChange::PasswordHash(hash);
    let updated = store
        .write((operator.id, change, log), |tx, (id, change, log)| {
            Box::pin(work::update_operator(tx, *id, change, log))
        })
        .await?;
    tracing::info!(%actor, operator = operator.id, "operator password set");
    Ok(updated)
}

/// A second factor that was just enabled: shown once.
pub struct TotpEnabled {
    pub operator: Operator,
    /// Base32, for typing into an authenticator app.
    pub secret: String,
    /// `otpauth://totp/…`, for a QR code.
    pub uri: String,
}

/// Enables TOTP for an operator with a new secret (replacing any), sealed
/// under the master key; the secret and its otpauth URI are answered once.
pub async fn enable_totp(
    store: &dyn Store,
    actor: Actor,
    email: &str,
    secrets: &SecretBox,
) -> OpsResult<TotpEnabled> {
    actor.require(Permission::ManageOperators)?;
    let operator = find(store, email).await?;
    let secret = Secret::generate().to_base32();
    let uri = totp(&secret, &operator.email)?
        .to_url()
        .map_err(|e| OpsError::Refused(format!("cannot make the otpauth URI: {e}")))?;
    let mut log = actor.log("operator.totp", operator.email.clone());
    log.before = Some(on_off(&operator).to_owned());
    log.after = Some("on (new secret)".to_owned());
    let change = OperatorChange::TotpSecretSealed(Some(secrets.seal(&secret)));
    let operator = store
        .write((operator.id, change, log), |tx, (id, change, log)| {
            Box::pin(work::update_operator(tx, *id, change, log))
        })
        .await?;
    tracing::info!(%actor, operator = operator.id, "operator TOTP enabled");
    Ok(TotpEnabled {
        operator,
        secret,
        uri,
    })
}

/// The signed-in operator themself (the CLI has no account of its own).
async fn own(store: &dyn Store, actor: &Actor) -> OpsResult<Operator> {
    let Actor::Operator { id, .. } = actor else {
        return Err(OpsError::Refused(
            "the CLI has no operator account: use `operator set-password` or `operator totp`"
                .into(),
        ));
    };
    store
        .operator(*id)
        .await?
        .ok_or_else(|| OpsError::NotFound("your operator account is gone".into()))
}

/// An operator's own new password, any role: the current one must be right
/// (else nothing changes), checked within the operator's budget in the
/// store's throttle (the one sign-in uses); every session of theirs ends,
/// as with [`set_password`].
pub async fn change_own_password(
    store: &dyn Store,
    actor: &Actor,
    current: &str,
    new: &str,
) -> OpsResult<Operator> {
    let operator = own(store, actor).await?;
    let who = Who::operator(&operator.email);
    secret_try(store, who).await??;
    if !billpay_domain::password::verify(Some(&operator.password_hash), current) {
        return Err(invalid(&["current_password"], "is not your password"));
    }
    secret_right(store, who).await?;
    let hash = billpay_domain::password::hash(new)?;
    let log = actor.log("operator.password", operator.email.clone());
    let change = OperatorChange::PasswordHash(hash);
    let updated = store
        .write((operator.id, change, log), |tx, (id, change, log)| {
            Box::pin(work::update_operator(tx, *id, change, log))
        })
        .await?;
    tracing::info!(%actor, operator = operator.id, "operator changed own password");
    Ok(updated)
}

/// A second factor offered to an operator, not yet on: the secret is shown
/// once and comes back sealed with a code from it ([`confirm_totp`]).
pub struct TotpOffer {
    pub secret: String,
    pub uri: String,
    /// The secret sealed under the master key, for the confirming form.
    pub sealed: String,
}

/// A new TOTP secret for the signed-in operator; nothing is stored yet.
pub async fn offer_totp(
    store: &dyn Store,
    actor: &Actor,
    secrets: &SecretBox,
) -> OpsResult<TotpOffer> {
    let operator = own(store, actor).await?;
    let secret = Secret::generate().to_base32();
    let uri = totp(&secret, &operator.email)?
        .to_url()
        .map_err(|e| OpsError::Refused(format!("cannot make the otpauth URI: {e}")))?;
    Ok(TotpOffer {
        sealed: secrets.seal(&secret),
        secret,
        uri,
    })
}

/// The codes that confirm a new TOTP secret: one from the new secret, and
/// when TOTP is already on, a current one of the secret it replaces.
pub struct TotpCodes<'a> {
    pub new: &'a str,
    /// Needed when TOTP is on (a session alone cannot replace the second factor).
    pub current: Option<&'a str>,
}

/// Turns on the offered secret once `codes.new` shows the operator's app has
/// it; that code's step is taken, so it cannot sign in afterwards. When TOTP
/// is on already, the secret is replaced only with a current, unused code of
/// the old one, checked within the operator's budget in the store's throttle.
pub async fn confirm_totp(
    store: &dyn Store,
    actor: &Actor,
    sealed: &str,
    codes: TotpCodes<'_>,
    secrets: &SecretBox,
) -> OpsResult<Operator> {
    let operator = own(store, actor).await?;
    let secret = secrets
        .open(sealed)
        .map_err(|_| invalid(&["secret"], "is not a secret this server offered"))?;
    let step = totp(&secret, &operator.email)?
        .check_current(codes.new.trim())
        .ok_or_else(|| invalid(&["code"], "is not the current code of the new secret"))?;
    if operator.totp_enabled() {
        let current = codes.current.unwrap_or_default();
        current_code(store, &operator, ("current_code", current), secrets).await?;
    }
    let mut log = actor.log("operator.totp", operator.email.clone());
    log.before = Some(on_off(&operator).to_owned());
    log.after = Some("on (new secret)".to_owned());
    let change = OperatorChange::TotpSecretSealed(Some(sealed.to_owned()));
    let updated = store
        .write((operator.id, change, log), |tx, (id, change, log)| {
            Box::pin(work::update_operator(tx, *id, change, log))
        })
        .await?;
    store.claim_totp_step(operator.id, step).await?;
    tracing::info!(%actor, operator = operator.id, "operator turned TOTP on");
    Ok(updated)
}

/// Turns the signed-in operator's TOTP off, with a current (unused) code,
/// checked within the operator's budget in the store's throttle.
pub async fn disable_own_totp(
    store: &dyn Store,
    actor: &Actor,
    code: &str,
    secrets: &SecretBox,
) -> OpsResult<Operator> {
    let operator = own(store, actor).await?;
    if !operator.totp_enabled() {
        return Err(OpsError::Refused("TOTP is already off".into()));
    }
    current_code(store, &operator, ("code", code), secrets).await?;
    let mut log = actor.log("operator.totp", operator.email.clone());
    log.before = Some("on".to_owned());
    log.after = Some("off".to_owned());
    let change = OperatorChange::TotpSecretSealed(None);
    let updated = store
        .write((operator.id, change, log), |tx, (id, change, log)| {
            Box::pin(work::update_operator(tx, *id, change, log))
        })
        .await?;
    tracing::info!(%actor, operator = operator.id, "operator turned TOTP off");
    Ok(updated)
}

/// Checks `code` against the operator's TOTP secret (on) within their budget
/// in the store's throttle, and takes its time step: a wrong code and a
/// used one both count as a failed attempt.
async fn current_code(
    store: &dyn Store,
    operator: &Operator,
    (field, code): (&'static str, &str),
    secrets: &SecretBox,
) -> OpsResult<()> {
    let fields: &'static [&'static str] = if field == "code" {
        &["code"]
    } else {
        &["current_code"]
    };
    let who = Who::operator(&operator.email);
    secret_try(store, who).await??;
    let step = check_totp(operator, code, secrets)?
        .ok_or_else(|| invalid(fields, "is not your current code"))?;
    if !store.claim_totp_step(operator.id, step).await? {
        return Err(invalid(fields, "was already used: wait for the next one"));
    }
    secret_right(store, who).await?;
    Ok(())
}

fn on_off(operator: &Operator) -> &'static str {
    if operator.totp_enabled() { "on" } else { "off" }
}

/// Whether `code` is the operator's current TOTP code (or the one before or
/// after, for clock drift); answers the time step it matched, so a caller
/// can refuse the same step twice. `None` also when TOTP is off.
pub fn check_totp(operator: &Operator, code: &str, secrets: &SecretBox) -> OpsResult<Option<u64>> {
    let Some(sealed) = operator.totp_secret_sealed.as_deref() else {
        return Ok(None);
    };
    let secret = secrets
        .open(sealed)
        .map_err(|e| OpsError::Refused(format!("cannot open the TOTP secret: {e}")))?;
    Ok(totp(&secret, &operator.email)?.check_current(code.trim()))
}

fn totp(secret_base32: &str, email: &str) -> OpsResult<Totp> {
    let secret = Secret::try_from_base32(secret_base32)
        .map_err(|e| OpsError::Refused(format!("bad TOTP secret: {e}")))?;
    Builder::new()
        .with_secret(secret)
        .with_issuer(Some(TOTP_ISSUER))
        .with_account_name(email)
        .build()
        .map_err(|e| OpsError::Refused(format!("bad TOTP settings: {e}")))
}

/// The operator log, newest first (owners only: it names everyone's actions).
pub async fn log(store: &dyn Store, actor: &Actor, filter: LogFilter) -> OpsResult<Vec<LogEntry>> {
    actor.require(Permission::ManageOperators)?;
    Ok(store.operator_log(filter).await?)
}
