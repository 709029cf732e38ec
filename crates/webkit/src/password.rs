//! Password checks, bounded. One argon2id check takes 19 MiB and a core for
//! a moment; unbounded, a flood of sign-ins took the server from 34 to
//! 948 MiB (issue 18, finding 3). So a check needs a permit (twice the
//! cores, at least 2, at once); a sign-in that waits longer than a short
//! bound for one is refused ([`Busy`]) and never hashed. So checks hold at
//! most permits × 19 MiB at once, kept for the next check while checks keep
//! coming and given back to the system 2 s after the last
//! (`billpay_domain::password`: a freed block kept in an allocator arena grew
//! the server by 229 MiB over 48 sign-ins once; a block kept per permit for
//! good held up to 76 MiB after the sign-ins were done; a fresh block each
//! check cost the kernel 12–15 ms of a 30–42 ms check).

use billpay_domain::password::{PasswordError, verify};
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a sign-in waits for a permit before it is refused.
const WAIT: Duration = Duration::from_secs(2);

/// No permit came in time: too many sign-ins at once.
#[derive(Debug, PartialEq, Eq)]
pub struct Busy;

/// Cloned, it shares its permits: every UI of a process uses
/// [`PasswordCheck::shared`], so the bound holds for the process.
#[derive(Clone)]
pub struct PasswordCheck {
    permits: Arc<Semaphore>,
    wait: Duration,
}

impl PasswordCheck {
    pub fn new(permits: usize, wait: Duration) -> Self {
        PasswordCheck {
            permits: Arc::new(Semaphore::new(permits)),
            wait,
        }
    }

    /// The process's one bound: twice the cores (at least 2) checks at
    /// once, a sign-in waiting 2 s at most.
    pub fn shared() -> Self {
        static SHARED: LazyLock<PasswordCheck> = LazyLock::new(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            PasswordCheck::new((2 * cores).max(2), WAIT)
        });
        SHARED.clone()
    }

    /// A permit to run one check, or [`Busy`] after the wait.
    pub async fn permit(&self) -> Result<HashPermit, Busy> {
        let permit = tokio::time::timeout(self.wait, self.permits.clone().acquire_owned());
        match permit.await {
            Ok(Ok(permit)) => Ok(HashPermit { _held: permit }),
            _ => Err(Busy),
        }
    }
}

/// The right to run one password check.
pub struct HashPermit {
    _held: OwnedSemaphorePermit,
}

impl HashPermit {
    /// Checks `password` against `stored` (none: an unknown user, checked
    /// against a dummy hash all the same) on a blocking thread. The permit
    /// is held until the hash is done, even if the request is gone.
    pub async fn verify(self, stored: Option<String>, password: String) -> bool {
        tokio::task::spawn_blocking(move || {
            let _held = &self;
            verify(stored.as_deref(), &password)
        })
        .await
        .unwrap_or(false)
    }

    /// Hashes a new password (argon2id, the domain's rules: at least
    /// [`MIN_LENGTH`](billpay_domain::password::MIN_LENGTH) characters) on a
    /// blocking thread, under the same bound as checks.
    pub async fn hash(self, password: String) -> Result<String, PasswordError> {
        let hashed = tokio::task::spawn_blocking(move || {
            let _held = &self;
            billpay_domain::password::hash(&password)
        });
        hashed.await.unwrap_or(Err(PasswordError::Hashing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_check_waits_for_a_permit_and_is_refused_past_the_wait() {
        let check = PasswordCheck::new(1, Duration::from_millis(50));
        let held = check.permit().await.unwrap();
        assert_eq!(check.permit().await.err(), Some(Busy));
        let hash = billpay_domain::password::hash("correct horse").unwrap();
        let verified = held.verify(Some(hash.clone()), "correct horse".into());
        assert!(verified.await, "the permit's check runs");
        let again = check.permit().await.expect("the permit came back");
        assert!(!again.verify(Some(hash), "wrong horse".into()).await);
    }
}
