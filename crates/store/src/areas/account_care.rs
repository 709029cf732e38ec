//! Sign-up and account care (issue 31): a customer's own sign-up, the codes
//! that prove an email address (on sign-up, and before a new address takes
//! effect), single-use password-reset links, the customer's profile, and
//! the pruning of sign-ups never verified.
//!
//! Codes and tokens are stored only as SHA-256 (made by `issue`); each is
//! used once by a conditional statement (`… WHERE used_at IS NULL`,
//! `DELETE … WHERE code_hash = …`), never read-then-written, so two requests
//! racing with the same secret cannot both use it. The notice that carries a
//! code or link is written in the same transaction as the code or link.

use super::{accounts, notices, pricing};
use crate::clock::{new_code, now_ms, now_rfc3339};
use crate::columns::ACCOUNT_COLUMNS;
use crate::db::{Column, Param, ReadTx, Tx, col, for_both_engines};
use crate::rows::account;
use crate::*;
use billpay_domain::AccountId;
use std::sync::LazyLock;

for_both_engines! {
    /// Sign-up and account care: codes that prove an email address, password
    /// resets, the profile (`areas/account_care.rs`). Each code or link is used
    /// once, atomically; its notice is written with it.
    pub trait AccountCareStore {
        /// A customer's own account, unverified, with its first code and the
        /// code's notice; [`StoreError::EmailTaken`] (nothing written) when the
        /// address is anyone's.
        fn sign_up(#[sealed] new: NewSignUp) -> Account = write |tx| sign_up(tx, &new);
        /// A fresh code (replacing any) proving `email` for `account` — its own
        /// address, or a new one that becomes its address once proven.
        fn issue_email_code(account: AccountId, email: &str, #[sealed] code: EmailCode) -> ()
            = write |tx| issue_code(tx, account, &email, &code);
        /// One try of a code: counted atomically, at most `max_attempts` per code.
        fn check_email_code(account: AccountId, code_hash: String, max_attempts: u32)
            -> CodeCheck = write |tx| check_code(tx, account, &code_hash, max_attempts);
        /// The new address an account asked to move to, while its code is live.
        fn pending_email(account: AccountId) -> Option<String>
            = read |tx| pending_email(tx, account);
        fn start_password_reset(#[sealed] new: NewPasswordReset) -> () = write |tx| start_reset(tx, &new);
        /// Whether a reset link is unused and unexpired (to show its form).
        fn password_reset_valid(token_hash: &str) -> bool
            = read |tx| reset_valid(tx, &token_hash);
        /// Uses a reset link once: the new password, every session ended.
        fn reset_password(token_hash: &str, password_hash: String) -> Option<AccountId>
            = write |tx| reset_password(tx, &token_hash, &password_hash);
        /// The active account a live PIN-reset link is for.
        fn pin_reset_account(token_hash: &str) -> Option<Account>
            = read |tx| pin_reset_account(tx, &token_hash);
        /// Uses a PIN-reset link once and sets the new PIN (an argon2id hash),
        /// ending any lock; `shop_key` as for a first PIN. `None`: no live link.
        fn reset_pin(token_hash: &str, pin_hash: String, shop_key: NewApiKey) -> Option<AccountId>
            = write |tx| reset_pin(tx, &token_hash, &pin_hash, &shop_key);
        /// A signed-in customer's new password: their other sessions end.
        fn change_password(account: AccountId, password_hash: String, keep_session: &str) -> ()
            = write |tx| change_password(tx, account, &password_hash, &keep_session);
        fn update_profile(account: AccountId, name: String, phone: Option<String>) -> Account
            = write |tx| update_profile(tx, account, &name, phone.as_deref());
        /// Removes self sign-ups created before `created_before` (RFC 3339),
        /// never verified, that hold no money, purchase, key or funding.
        fn prune_unverified(created_before: &str) -> u64
            = write |tx| prune_unverified(tx, &created_before);
        /// Self sign-ups since each bound (RFC 3339).
        fn sign_up_counts(today_from: &str, month_from: &str) -> SignUpCounts
            = read |tx| counts(tx, &today_from, &month_from);
    }
}

/// The account (signed up by its owner, unverified, on `new.tier` if any)
/// and its first code with the code's notice; the address taken is
/// [`StoreError::EmailTaken`] and nothing is written.
async fn sign_up<T: Tx>(tx: &T, new: &NewSignUp) -> Result<Account, T::Error> {
    let created = accounts::create(tx, &new.account).await?;
    let sql = "UPDATE accounts SET signed_up = 'self', phone = ?1, developer_access = NULL
               WHERE id = ?2";
    tx.execute(sql, &[&new.phone, &created.id.to_string()])
        .await?;
    if let Some(tier) = &new.tier {
        pricing::set_account_tier(tx, created.id, Some(tier)).await?;
    }
    if let Some(code) = &new.referral {
        super::referrals::refer(tx, created.id, code).await?;
    }
    issue_code(tx, created.id, &created.email, &new.code).await?;
    by_id(tx, created.id).await
}

/// Replaces the account's code (a fresh one: its attempts start at zero)
/// and queues its notice to the address it proves.
async fn issue_code<T: Tx>(
    tx: &T,
    account: AccountId,
    email: &str,
    code: &EmailCode,
) -> Result<(), T::Error> {
    EMAIL_CODES.save(tx, account, email, code).await?;
    let notice = code.notice.addressed(email, account, new_code("verify:"));
    notices::enqueue(tx, &notice).await?;
    Ok(())
}

/// A table of one-time codes, each proving an address for one account (an
/// email's, `email_codes`; a phone's, `phone_codes`): one live code per
/// account, stored as its hash, a bounded number of tries, an expiry.
pub(crate) struct CodeTable {
    table: &'static str,
    /// The column of the address the code proves.
    address: &'static str,
}

pub(crate) const EMAIL_CODES: CodeTable = CodeTable {
    table: "email_codes",
    address: "email",
};

pub(crate) const PHONE_CODES: CodeTable = CodeTable {
    table: "phone_codes",
    address: "phone",
};

/// One try of a code, taken.
pub(crate) enum CodeTry {
    /// No live code (none, expired, or its tries used up).
    NoCode,
    Wrong {
        left: u32,
    },
    /// Right, and used up: the address it proved.
    Right {
        address: String,
    },
}

impl CodeTable {
    /// Replaces the account's live code with `code` for `address`.
    pub(crate) async fn save<T: Tx>(
        &self,
        tx: &T,
        account: AccountId,
        address: &str,
        code: &EmailCode,
    ) -> Result<(), T::Error> {
        let CodeTable {
            table,
            address: column,
        } = self;
        let sql = format!(
            "INSERT INTO {table} (account_id, {column}, code_hash, attempts, expires_at, created_at)
                  VALUES (?1, ?2, ?3, 0, ?4, ?5)
                  ON CONFLICT (account_id) DO UPDATE SET {column} = excluded.{column},
                      code_hash = excluded.code_hash, attempts = 0,
                      expires_at = excluded.expires_at, created_at = excluded.created_at"
        );
        let id = account.to_string();
        let params: [&dyn Param; 5] = [
            &id,
            &address,
            &code.code_hash,
            &code.expires_at_ms,
            &now_rfc3339(),
        ];
        tx.execute(&sql, &params).await?;
        Ok(())
    }

    /// One try: counted first (a try past `max_attempts`, or of an expired
    /// code, finds nothing), then, if right, the code is used up (once, even
    /// when two right tries race).
    pub(crate) async fn try_code<T: Tx>(
        &self,
        tx: &T,
        account: AccountId,
        code_hash: &str,
        max_attempts: u32,
    ) -> Result<CodeTry, T::Error> {
        let CodeTable { table, address } = self;
        let sql = format!(
            "UPDATE {table} SET attempts = attempts + 1
              WHERE account_id = ?1 AND attempts < ?2 AND expires_at > ?3
          RETURNING code_hash = ?4, {address}, attempts"
        );
        let id = account.to_string();
        // `attempts` is an INTEGER: PostgreSQL binds it as `i32`.
        let max = i32::try_from(max_attempts).unwrap_or(i32::MAX);
        let tried = tx
            .query_opt(&sql, &[&id, &max, &now_ms(), &code_hash], |row| {
                Ok((
                    row.get::<bool>(Column::nth(0))?,
                    row.get::<String>(Column::nth(1))?,
                    row.get::<i64>(Column::nth(2))?,
                ))
            })
            .await?;
        let Some((matched, address, attempts)) = tried else {
            return Ok(CodeTry::NoCode);
        };
        if !matched {
            let left = u32::try_from((i64::from(max) - attempts).max(0)).unwrap_or(0);
            return Ok(CodeTry::Wrong { left });
        }
        let used = format!("DELETE FROM {table} WHERE account_id = ?1 AND code_hash = ?2");
        if tx.execute(&used, &[&id, &code_hash]).await? == 0 {
            return Ok(CodeTry::NoCode);
        }
        Ok(CodeTry::Right { address })
    }
}

/// One try of an email code ([`CodeTable::try_code`]); a right one makes
/// the address it proves the account's, verified.
async fn check_code<T: Tx>(
    tx: &T,
    account: AccountId,
    code_hash: &str,
    max_attempts: u32,
) -> Result<CodeCheck, T::Error> {
    let email = match EMAIL_CODES
        .try_code(tx, account, code_hash, max_attempts)
        .await?
    {
        CodeTry::NoCode => return Ok(CodeCheck::NoCode),
        CodeTry::Wrong { left } => return Ok(CodeCheck::Wrong { left }),
        CodeTry::Right { address } => address,
    };
    let id = account.to_string();
    const TAKEN: &str = "taken";
    let taken = "SELECT EXISTS (SELECT 1 FROM accounts
                     WHERE lower(email) = lower(?1) AND id <> ?2) AS taken";
    let taken: bool = tx
        .query_one(taken, &[&email, &id], |row| row.get(col!(TAKEN, "taken")))
        .await?;
    if taken {
        return Ok(CodeCheck::EmailTaken);
    }
    let verify = "UPDATE accounts SET email = ?1, email_verified_at = ?2 WHERE id = ?3";
    tx.execute(verify, &[&email, &now_rfc3339(), &id]).await?;
    Ok(CodeCheck::Verified { email })
}

async fn pending_email<T: ReadTx>(tx: &T, account: AccountId) -> Result<Option<String>, T::Error> {
    const COLUMNS: &str = "email";
    let sql = "SELECT c.email FROM email_codes c JOIN accounts a ON a.id = c.account_id
               WHERE c.account_id = ?1 AND c.expires_at > ?2 AND lower(c.email) <> lower(a.email)";
    tx.query_opt(sql, &[&account.to_string(), &now_ms()], |row| {
        row.get(col!("email"))
    })
    .await
}

/// A reset link's token (its hash) and its notice; `new.log` (support sent
/// it from the console) in the same transaction.
async fn start_reset<T: Tx>(tx: &T, new: &NewPasswordReset) -> Result<(), T::Error> {
    let found = by_id(tx, new.account_id).await?;
    let sql = "INSERT INTO password_resets
                   (token_hash, account_id, expires_at, purpose, created_at)
               VALUES (?1, ?2, ?3, ?4, ?5)";
    let account = new.account_id.to_string();
    let purpose = new.purpose.as_str();
    let params: [&dyn Param; 5] = [
        &new.token_hash,
        &account,
        &new.expires_at_ms,
        &purpose,
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    let prefix = match new.purpose {
        ResetPurpose::Password => "reset",
        ResetPurpose::Pin => "pin-reset",
    };
    let cause = format!(
        "{prefix}:{}",
        &new.token_hash[..new.token_hash.len().min(24)]
    );
    let notice = new.notice.addressed(&found.email, found.id, cause);
    notices::enqueue(tx, &notice).await?;
    if let Some(log) = &new.log {
        super::operators::append(tx, log).await?;
    }
    Ok(())
}

async fn reset_valid<T: ReadTx>(tx: &T, token_hash: &str) -> Result<bool, T::Error> {
    const COLUMNS: &str = "found";
    let sql = "SELECT EXISTS (SELECT 1 FROM password_resets
                   WHERE token_hash = ?1 AND purpose = 'password'
                     AND used_at IS NULL AND expires_at > ?2) AS found";
    tx.query_one(sql, &[&token_hash, &now_ms()], |row| row.get(col!("found")))
        .await
}

/// Uses the token once and sets the password: every session of the account
/// ends and its other links die. The link came by email, so the address is
/// proven too. `None`: no such token, used, or expired.
async fn reset_password<T: Tx>(
    tx: &T,
    token_hash: &str,
    password_hash: &str,
) -> Result<Option<AccountId>, T::Error> {
    let Some(account) = use_link(tx, token_hash, ResetPurpose::Password).await? else {
        return Ok(None);
    };
    let (now, id) = (now_rfc3339(), account.to_string());
    // a new password kills every other link, a PIN's too
    let others =
        "UPDATE password_resets SET used_at = ?1 WHERE account_id = ?2 AND used_at IS NULL";
    tx.execute(others, &[&now, &id]).await?;
    let proven = "UPDATE accounts SET email_verified_at = COALESCE(email_verified_at, ?1)
                  WHERE id = ?2";
    tx.execute(proven, &[&now, &id]).await?;
    accounts::set_password(tx, account, password_hash).await?;
    Ok(Some(account))
}

/// Uses a live link of `purpose` once (a conditional UPDATE: two requests
/// with one link cannot both use it); the account it was for.
async fn use_link<T: Tx>(
    tx: &T,
    token_hash: &str,
    purpose: ResetPurpose,
) -> Result<Option<AccountId>, T::Error> {
    const COLUMNS: &str = "account_id";
    let sql = "UPDATE password_resets SET used_at = ?1
               WHERE token_hash = ?2 AND purpose = ?3 AND used_at IS NULL AND expires_at > ?4
               RETURNING account_id";
    let params: [&dyn Param; 4] = [&now_rfc3339(), &token_hash, &purpose.as_str(), &now_ms()];
    tx.query_opt(sql, &params, |row| row.parsed(col!("account_id")))
        .await
}

/// The active account a live PIN-reset link is for (its page checks the
/// account's password before the link is used).
async fn pin_reset_account<T: ReadTx>(
    tx: &T,
    token_hash: &str,
) -> Result<Option<Account>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE status = 'active' AND id IN
                 (SELECT account_id FROM password_resets WHERE token_hash = ?1
                    AND purpose = 'pin' AND used_at IS NULL AND expires_at > ?2)"
        )
    });
    tx.query_opt(&SQL, &[&token_hash, &now_ms()], account).await
}

/// Uses a PIN-reset link once and sets the new PIN, which ends the run of
/// wrong tries and any lock (`pins::set`); the account's other PIN links
/// die. `None`: no such link, used, or expired.
async fn reset_pin<T: Tx>(
    tx: &T,
    token_hash: &str,
    pin_hash: &str,
    shop_key: &NewApiKey,
) -> Result<Option<AccountId>, T::Error> {
    let Some(account) = use_link(tx, token_hash, ResetPurpose::Pin).await? else {
        return Ok(None);
    };
    let others = "UPDATE password_resets SET used_at = ?1
                  WHERE account_id = ?2 AND purpose = 'pin' AND used_at IS NULL";
    tx.execute(others, &[&now_rfc3339(), &account.to_string()])
        .await?;
    super::pins::set(tx, account, pin_hash, shop_key).await?;
    Ok(Some(account))
}

/// A new password from a signed-in customer: their other sessions end.
async fn change_password<T: Tx>(
    tx: &T,
    account: AccountId,
    password_hash: &str,
    keep_session: &str,
) -> Result<(), T::Error> {
    let id = account.to_string();
    let sql = "UPDATE accounts SET password_hash = ?1 WHERE id = ?2";
    if tx.execute(sql, &[&password_hash, &id]).await? == 0 {
        return Err(StoreError::NotFound("account").into());
    }
    let others = "DELETE FROM sessions WHERE account_id = ?1 AND token_hash <> ?2";
    tx.execute(others, &[&id, &keep_session]).await?;
    Ok(())
}

async fn update_profile<T: Tx>(
    tx: &T,
    account: AccountId,
    name: &str,
    phone: Option<&str>,
) -> Result<Account, T::Error> {
    let sql = "UPDATE accounts SET name = ?1, phone = ?2 WHERE id = ?3";
    if tx
        .execute(sql, &[&name, &phone, &account.to_string()])
        .await?
        == 0
    {
        return Err(StoreError::NotFound("account").into());
    }
    by_id(tx, account).await
}

/// Self sign-ups never verified that hold nothing: no money, no ledger
/// entry, no purchase, no API key, nothing reserved or received at a
/// gateway, nothing an operator set (a level, limits, a closure: an account
/// an owner looked at is not a stray, and those rows would stop the
/// delete), no referral money, upgrade, batch or schedule. Every foreign
/// key to `accounts` is here or in [`OWN_ROWS`] (a contract test reads the
/// schema: `personal_data.rs`). Checked again by the DELETE itself, so a credit landing
/// meanwhile keeps the account.
pub const PRUNABLE: &str = "a.signed_up = 'self' AND a.email_verified_at IS NULL
    AND a.created_at < ?1 AND a.balance = 0
    AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM funding_customers f WHERE f.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM funding_accounts f WHERE f.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM funding_events f WHERE f.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM checkouts c WHERE c.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM reservation_identities r WHERE r.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM account_kyc y WHERE y.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM account_limits m WHERE m.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM account_closures c WHERE c.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM referrals r WHERE r.referrer_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM bonus_balances b WHERE b.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM bonus_entries e WHERE e.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM tier_upgrades u WHERE u.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM batches b WHERE b.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM schedules s WHERE s.account_id = a.id)
    AND NOT EXISTS (SELECT 1 FROM schedule_runs r WHERE r.account_id = a.id)";

/// The rows that only belong to an account, removed with it.
pub const OWN_ROWS: [&str; 9] = [
    "DELETE FROM sessions WHERE account_id = ?1",
    "DELETE FROM transaction_pins WHERE account_id = ?1",
    "DELETE FROM beneficiaries WHERE account_id = ?1",
    "DELETE FROM notice_preferences WHERE account_id = ?1",
    "DELETE FROM email_codes WHERE account_id = ?1",
    "DELETE FROM password_resets WHERE account_id = ?1",
    "DELETE FROM account_tiers WHERE account_id = ?1",
    "DELETE FROM referral_codes WHERE account_id = ?1",
    "DELETE FROM referrals WHERE referee_id = ?1",
];

/// Removes the [`PRUNABLE`] accounts created before `created_before`
/// (RFC 3339), at most 500 a run; answers how many.
async fn prune_unverified<T: Tx>(tx: &T, created_before: &str) -> Result<u64, T::Error> {
    const COLUMNS: &str = "id";
    static FIND: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT a.id FROM accounts a WHERE {PRUNABLE} ORDER BY a.created_at LIMIT 500")
    });
    static DELETE: LazyLock<String> = LazyLock::new(|| {
        format!(
            "DELETE FROM accounts WHERE id = ?2 AND id IN (SELECT a.id FROM accounts a WHERE {PRUNABLE})"
        )
    });
    let ids: Vec<String> = tx
        .query_all(&FIND, &[&created_before], |row| row.get(col!("id")))
        .await?;
    let mut pruned = 0;
    for id in ids {
        for sql in OWN_ROWS {
            tx.execute(sql, &[&id]).await?;
        }
        pruned += tx.execute(&DELETE, &[&created_before, &id]).await?;
    }
    Ok(pruned)
}

async fn counts<T: ReadTx>(
    tx: &T,
    today_from: &str,
    month_from: &str,
) -> Result<SignUpCounts, T::Error> {
    const COLUMNS: &str = "today, month";
    let sql = "SELECT CAST(COUNT(CASE WHEN created_at >= ?1 THEN 1 END) AS BIGINT) AS today,
                      CAST(COUNT(*) AS BIGINT) AS month
               FROM accounts WHERE signed_up = 'self' AND created_at >= ?2";
    tx.query_one(sql, &[&today_from, &month_from], |row| {
        Ok(SignUpCounts {
            today: row.get(col!("today"))?,
            month: row.get(col!("month"))?,
        })
    })
    .await
}

async fn by_id<T: Tx>(tx: &T, id: AccountId) -> Result<Account, T::Error> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1"));
    let found = tx.query_opt(&SQL, &[&id.to_string()], account).await?;
    found.ok_or_else(|| StoreError::NotFound("account").into())
}
