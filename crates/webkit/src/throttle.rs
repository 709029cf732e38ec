//! Sign-in throttling per email, in this process, atomic and bounded.
//!
//! - At most five attempts per email within 15 minutes ever reach the
//!   password check: a slot is reserved before the check (under one lock),
//!   so attempts arriving together cannot all pass a lock read before any
//!   failure is recorded (issue 18, finding 6). A reservation that never
//!   reached the check (no permit, an error) is given back; a success clears
//!   the email.
//! - The table is keyed by SHA-256 of the email (a long email costs nothing),
//!   forgets emails whose attempts are all older than the window, and holds
//!   at most [`MAX_EMAILS`], the least recently tried evicted first (issue 18,
//!   finding 4).

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

pub struct LoginThrottle {
    emails: Mutex<LruCache<EmailKey, Attempts>>,
    /// Attempt times are whole seconds since this instant (4 bytes each).
    epoch: Instant,
    window: Duration,
}

impl Default for LoginThrottle {
    fn default() -> Self {
        Self::new(MAX_EMAILS, WINDOW)
    }
}

impl LoginThrottle {
    pub fn new(max_emails: usize, window: Duration) -> Self {
        let capacity = NonZeroUsize::new(max_emails).expect("room for one email");
        LoginThrottle {
            emails: Mutex::new(LruCache::new(capacity)),
            epoch: Instant::now(),
            window,
        }
    }

    /// A slot for one password check of `email`, or how long it stays locked.
    pub fn reserve(&self, email: &str) -> Result<Attempt<'_>, Duration> {
        let key = key_of(email);
        let mut emails = self.table();
        let now = self.now();
        self.forget_expired(&mut emails, now);
        let attempts = emails.get_or_insert_mut(key, Attempts::default);
        attempts.prune(now, self.window_secs());
        if let Some(oldest) = attempts.oldest().filter(|_| attempts.is_full()) {
            let elapsed = Duration::from_secs(now.saturating_sub(oldest).into());
            return Err(self.window.saturating_sub(elapsed));
        }
        attempts.push(now);
        Ok(Attempt {
            throttle: self,
            key,
            at: now,
            spent: false,
        })
    }

    /// How many emails are tracked.
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

fn key_of(email: &str) -> EmailKey {
    Sha256::digest(email.trim().to_lowercase().as_bytes()).into()
}

/// One reserved slot. Dropped before [`spend`](Self::spend), it is given back;
/// once spent it counts as a failure unless it [`succeeded`](Self::succeeded).
pub struct Attempt<'a> {
    throttle: &'a LoginThrottle,
    key: EmailKey,
    at: u32,
    spent: bool,
}

impl Attempt<'_> {
    /// The password check is about to run: from now on the attempt counts.
    pub fn spend(&mut self) {
        self.spent = true;
    }

    /// The password was right: the email starts afresh.
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

    fn fail(throttle: &LoginThrottle, email: &str) {
        throttle.reserve(email).expect("not locked").spend();
    }

    #[test]
    fn five_failures_lock_the_email_whatever_its_case() {
        let t = LoginThrottle::default();
        for _ in 0..4 {
            fail(&t, "A@x.com");
        }
        fail(&t, "a@x.com");
        let left = t.reserve("a@X.com").err().expect("locked");
        assert!(left > Duration::from_secs(14 * 60) && left <= WINDOW);
        assert!(t.reserve("b@x.com").is_ok());
    }

    #[test]
    fn reserved_slots_count_before_any_failure_is_known() {
        let t = LoginThrottle::default();
        let held: Vec<_> = (0..5).map(|_| t.reserve("a@x.com").unwrap()).collect();
        assert!(t.reserve("a@x.com").is_err(), "a sixth waits for the five");
        drop(held);
        assert!(t.reserve("a@x.com").is_ok(), "unspent slots are given back");
    }

    #[test]
    fn a_success_clears_the_email() {
        let t = LoginThrottle::default();
        for _ in 0..4 {
            fail(&t, "a@x.com");
        }
        t.reserve("a@x.com").unwrap().succeeded();
        for _ in 0..5 {
            fail(&t, "a@x.com");
        }
        assert!(t.reserve("a@x.com").is_err());
    }

    #[test]
    fn the_table_is_capped_and_forgets_expired_emails() {
        let t = LoginThrottle::new(3, Duration::from_secs(15 * 60));
        for email in ["a@x.com", "b@x.com", "c@x.com", "d@x.com"] {
            fail(&t, email);
        }
        assert_eq!(t.len(), 3, "the least recently tried is evicted");

        let t = LoginThrottle::new(100, Duration::ZERO);
        for i in 0..50 {
            fail(&t, &format!("{i}@x.com"));
        }
        assert!(t.len() <= 1, "expired emails are forgotten: {}", t.len());
    }

    #[test]
    fn a_long_email_costs_a_fixed_size_key() {
        let t = LoginThrottle::default();
        fail(&t, &"x".repeat(2_000_000));
        assert_eq!(key_of(&"x".repeat(2_000_000)).len(), 32);
        assert_eq!(t.len(), 1);
    }
}
