//! The one throttle on every check of a secret — a sign-in's password, an
//! operator's current password on My account, a TOTP code (turning it off,
//! replacing it), and any secret a later form checks (a PIN, a reset code) —
//! keyed by *who* is checked ([`Who`]: an operator or an account, by email),
//! so every way of guessing one person's secrets shares one budget.
//! In this process, atomic and bounded.
//!
//! - At most five checks per person within 15 minutes ever run: a slot is
//!   reserved before the check (under one lock), so attempts arriving
//!   together cannot all pass a lock read before any failure is recorded
//!   (issue 18, finding 6). A reservation that never reached the check (no
//!   permit, an error) is given back; a success clears the person.
//! - The table is keyed by SHA-256 of the kind and the email (a long email
//!   costs nothing), forgets people whose attempts are all older than the
//!   window, and holds at most [`MAX_EMAILS`], the least recently tried
//!   evicted first (issue 18, finding 4).
//! - Its state is the process's: with several nodes (PostgreSQL), each node
//!   counts its own attempts, so N nodes allow N times the budget.

use lru::LruCache;
use sha2::{Digest, Sha256};
use std::num::NonZeroUsize;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const MAX_ATTEMPTS: usize = 5;
const WINDOW: Duration = Duration::from_secs(15 * 60);
/// About 100 bytes each: a full table is a few MiB. Filling it takes as
/// many password checks (each reserved slot that is not given back was
/// one), about the window's worth on a small machine.
pub const MAX_EMAILS: usize = 50_000;

type EmailKey = [u8; 32];

/// Who a secret belongs to: an operator (the console's sign-in, My account)
/// or a customer's account (the dashboard's sign-in), named by email as
/// typed at sign-in (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Who<'a> {
    kind: Kind,
    email: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Operator,
    Account,
}

impl<'a> Who<'a> {
    pub fn new(kind: Kind, email: &'a str) -> Self {
        Who { kind, email }
    }

    pub fn operator(email: &'a str) -> Self {
        Who::new(Kind::Operator, email)
    }

    pub fn account(email: &'a str) -> Self {
        Who::new(Kind::Account, email)
    }
}

/// Too many failed checks of this person's secrets: how long until one more
/// is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockedOut(pub Duration);

impl LockedOut {
    /// The wait in whole minutes, at least one.
    pub fn minutes(&self) -> u64 {
        self.0.as_secs().div_ceil(60).max(1)
    }
}

impl std::fmt::Display for LockedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let minutes = self.minutes();
        let unit = if minutes == 1 { "minute" } else { "minutes" };
        write!(f, "too many failed attempts: try again in {minutes} {unit}")
    }
}

impl std::error::Error for LockedOut {}

pub struct SecretThrottle {
    emails: Mutex<LruCache<EmailKey, Attempts>>,
    /// Attempt times are whole seconds since this instant (4 bytes each).
    epoch: Instant,
    window: Duration,
}

impl Default for SecretThrottle {
    fn default() -> Self {
        Self::new(MAX_EMAILS, WINDOW)
    }
}

impl SecretThrottle {
    pub fn new(max_emails: usize, window: Duration) -> Self {
        let capacity = NonZeroUsize::new(max_emails).expect("room for one email");
        SecretThrottle {
            emails: Mutex::new(LruCache::new(capacity)),
            epoch: Instant::now(),
            window,
        }
    }

    /// A slot for one check of a secret of `who`, or how long they stay locked.
    pub fn reserve(&self, who: Who<'_>) -> Result<Attempt<'_>, LockedOut> {
        let key = key_of(who);
        let mut emails = self.table();
        let now = self.now();
        self.forget_expired(&mut emails, now);
        let attempts = emails.get_or_insert_mut(key, Attempts::default);
        attempts.prune(now, self.window_secs());
        if let Some(oldest) = attempts.oldest().filter(|_| attempts.is_full()) {
            let elapsed = Duration::from_secs(now.saturating_sub(oldest).into());
            return Err(LockedOut(self.window.saturating_sub(elapsed)));
        }
        attempts.push(now);
        Ok(Attempt {
            throttle: self,
            key,
            at: now,
            spent: false,
        })
    }

    /// Runs `check` of a secret of `who` within their budget: a `Some` is a
    /// success (the person starts afresh), a `None` counts as a failure.
    pub fn check<T>(
        &self,
        who: Who<'_>,
        check: impl FnOnce() -> Option<T>,
    ) -> Result<Option<T>, LockedOut> {
        let mut attempt = self.reserve(who)?;
        attempt.spend();
        let checked = check();
        if checked.is_some() {
            attempt.succeeded();
        }
        Ok(checked)
    }

    /// How many people are tracked.
    pub fn len(&self) -> usize {
        self.table().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn table(&self) -> MutexGuard<'_, LruCache<EmailKey, Attempts>> {
        self.emails.lock().expect("throttle poisoned")
    }

    fn now(&self) -> u32 {
        u32::try_from(self.epoch.elapsed().as_secs()).unwrap_or(u32::MAX)
    }

    fn window_secs(&self) -> u32 {
        u32::try_from(self.window.as_secs()).unwrap_or(u32::MAX)
    }

    /// Drops the least recently tried emails while all their attempts are past the window.
    fn forget_expired(&self, emails: &mut LruCache<EmailKey, Attempts>, now: u32) {
        while let Some((_, attempts)) = emails.peek_lru() {
            if !attempts.expired(now, self.window_secs()) {
                break;
            }
            emails.pop_lru();
        }
    }
}

fn key_of(who: Who<'_>) -> EmailKey {
    let kind: &[u8] = match who.kind {
        Kind::Operator => b"operator\0",
        Kind::Account => b"account\0",
    };
    let mut hash = Sha256::new();
    hash.update(kind);
    hash.update(who.email.trim().to_lowercase().as_bytes());
    hash.finalize().into()
}

/// One reserved slot. Dropped before [`spend`](Self::spend), it is given back;
/// once spent it counts as a failure unless it [`succeeded`](Self::succeeded).
pub struct Attempt<'a> {
    throttle: &'a SecretThrottle,
    key: EmailKey,
    at: u32,
    spent: bool,
}

impl Attempt<'_> {
    /// The check is about to run: from now on the attempt counts.
    pub fn spend(&mut self) {
        self.spent = true;
    }

    /// The secret was right: the person starts afresh.
    pub fn succeeded(self) {
        self.throttle.table().pop(&self.key);
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if self.spent {
            return;
        }
        let mut emails = self.throttle.table();
        if let Some(attempts) = emails.peek_mut(&self.key) {
            attempts.remove(self.at);
            if attempts.len == 0 {
                emails.pop(&self.key);
            }
        }
    }
}

/// The attempt times of one email within the window, oldest first.
#[derive(Default)]
struct Attempts {
    at: [u32; MAX_ATTEMPTS],
    len: usize,
}

impl Attempts {
    fn is_full(&self) -> bool {
        self.len == MAX_ATTEMPTS
    }

    fn oldest(&self) -> Option<u32> {
        self.at[..self.len].first().copied()
    }

    fn expired(&self, now: u32, window: u32) -> bool {
        self.at[..self.len]
            .iter()
            .all(|&t| now.saturating_sub(t) >= window)
    }

    fn push(&mut self, now: u32) {
        self.at[self.len] = now;
        self.len += 1;
    }

    fn prune(&mut self, now: u32, window: u32) {
        while self
            .oldest()
            .is_some_and(|t| now.saturating_sub(t) >= window)
        {
            self.remove_at(0);
        }
    }

    fn remove(&mut self, at: u32) {
        if let Some(i) = self.at[..self.len].iter().position(|&t| t == at) {
            self.remove_at(i);
        }
    }

    fn remove_at(&mut self, i: usize) {
        self.at.copy_within(i + 1..self.len, i);
        self.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(throttle: &SecretThrottle, email: &str) {
        throttle
            .reserve(Who::operator(email))
            .expect("not locked")
            .spend();
    }

    fn op(email: &str) -> Who<'_> {
        Who::operator(email)
    }

    #[test]
    fn five_failures_lock_the_email_whatever_its_case() {
        let t = SecretThrottle::default();
        for _ in 0..4 {
            fail(&t, "A@x.com");
        }
        fail(&t, "a@x.com");
        let LockedOut(left) = t.reserve(op("a@X.com")).err().expect("locked");
        assert!(left > Duration::from_secs(14 * 60) && left <= WINDOW);
        assert!(t.reserve(op("b@x.com")).is_ok());
    }

    #[test]
    fn reserved_slots_count_before_any_failure_is_known() {
        let t = SecretThrottle::default();
        let held: Vec<_> = (0..5).map(|_| t.reserve(op("a@x.com")).unwrap()).collect();
        assert!(
            t.reserve(op("a@x.com")).is_err(),
            "a sixth waits for the five"
        );
        drop(held);
        assert!(
            t.reserve(op("a@x.com")).is_ok(),
            "unspent slots are given back"
        );
    }

    #[test]
    fn a_success_clears_the_email() {
        let t = SecretThrottle::default();
        for _ in 0..4 {
            fail(&t, "a@x.com");
        }
        t.reserve(op("a@x.com")).unwrap().succeeded();
        for _ in 0..5 {
            fail(&t, "a@x.com");
        }
        assert!(t.reserve(op("a@x.com")).is_err());
    }

    #[test]
    fn the_table_is_capped_and_forgets_expired_emails() {
        let t = SecretThrottle::new(3, Duration::from_secs(15 * 60));
        for email in ["a@x.com", "b@x.com", "c@x.com", "d@x.com"] {
            fail(&t, email);
        }
        assert_eq!(t.len(), 3, "the least recently tried is evicted");

        let t = SecretThrottle::new(100, Duration::ZERO);
        for i in 0..50 {
            fail(&t, &format!("{i}@x.com"));
        }
        assert!(t.len() <= 1, "expired emails are forgotten: {}", t.len());
    }

    #[test]
    fn an_operator_and_an_account_of_one_email_are_counted_apart() {
        let t = SecretThrottle::default();
        for _ in 0..5 {
            fail(&t, "a@x.com");
        }
        assert!(t.reserve(op("a@x.com")).is_err());
        assert!(t.reserve(Who::account("a@x.com")).is_ok());
    }

    #[test]
    fn check_counts_failures_and_clears_on_success() {
        let t = SecretThrottle::default();
        for _ in 0..4 {
            assert_eq!(t.check(op("a@x.com"), || None::<()>), Ok(None));
        }
        assert_eq!(t.check(op("a@x.com"), || Some(7)), Ok(Some(7)));
        assert!(t.is_empty(), "a success clears the person");
        for _ in 0..5 {
            assert_eq!(t.check(op("a@x.com"), || None::<()>), Ok(None));
        }
        let locked = t.check(op("a@x.com"), || Some(()));
        assert!(locked.is_err(), "the right secret is not even checked");
    }

    #[test]
    fn a_lockout_says_how_many_minutes_are_left() {
        let message = LockedOut(Duration::from_secs(61)).to_string();
        assert_eq!(message, "too many failed attempts: try again in 2 minutes");
        assert_eq!(LockedOut(Duration::ZERO).minutes(), 1);
    }

    #[test]
    fn a_long_email_costs_a_fixed_size_key() {
        let t = SecretThrottle::default();
        fail(&t, &"x".repeat(2_000_000));
        assert_eq!(key_of(op(&"x".repeat(2_000_000))).len(), 32);
        assert_eq!(t.len(), 1);
    }
}
