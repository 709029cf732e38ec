//! Per-key token buckets (in this process). Limits come from the key row on
//! every request, so a change made with the CLI applies at once.

use billpay_domain::KeyId;
use billpay_store::RateLimit;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<KeyId, Bucket>>,
}

struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// What the `RateLimit-*` headers report, and whether the request may pass.
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the bucket is full again.
    pub reset_secs: u64,
    /// Seconds until one token is available (for `Retry-After`).
    pub retry_after_secs: u64,
}

impl RateLimiter {
    pub fn check(&self, key: KeyId, limit: RateLimit) -> Decision {
        let rate = f64::from(limit.per_second.max(1));
        let burst = f64::from(limit.burst.max(1));
        let now = Instant::now();
        let mut buckets = self.buckets.lock().expect("rate limiter poisoned");
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: burst,
            updated: now,
        });
        let elapsed = now.duration_since(bucket.updated).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * rate).min(burst);
        bucket.updated = now;
        let allowed = bucket.tokens >= 1.0;
        if allowed {
            bucket.tokens -= 1.0;
        }
        Decision {
            allowed,
            limit: limit.burst,
            remaining: bucket.tokens.floor() as u32,
            reset_secs: ((burst - bucket.tokens) / rate).ceil() as u64,
            retry_after_secs: if allowed {
                0
            } else {
                ((1.0 - bucket.tokens) / rate).ceil().max(1.0) as u64
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refuse_then_refill() {
        let limiter = RateLimiter::default();
        let key = KeyId::new();
        let limit = RateLimit {
            per_second: 1000,
            burst: 3,
        };
        for remaining in [2, 1, 0] {
            let d = limiter.check(key, limit);
            assert!(d.allowed);
            assert_eq!(d.remaining, remaining);
        }
        let refused = limiter.check(key, limit);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_secs, 1);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(limiter.check(key, limit).allowed);
        // another key has its own bucket
        assert!(
            limiter
                .check(
                    KeyId::new(),
                    RateLimit {
                        per_second: 1,
                        burst: 1
                    }
                )
                .allowed
        );
    }
}
