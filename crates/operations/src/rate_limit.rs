//! Per-key token buckets, spent by every API request and every shop purchase
//! (`purchases::Purchasing::admit`) and by every batch item as it is placed
//! (`Purchasing::spend_token`, which waits for the bucket): one budget per
//! key, the shop's key included. Limits come from the key row as read by its admission (the API's
//! key cache: at most `KEY_CACHE_TTL`, 0.5 s, ago; the shop reads its key at
//! each purchase), so a change made with the CLI applies within half a second.
//!
//! Without Redis the buckets live in this process: with several nodes behind
//! a load balancer each node enforces the limit on its own share of traffic.
//! With Redis (`--redis-url`) every node takes its tokens from one bucket per
//! key, updated atomically by a Lua script with Redis's own clock. Should
//! Redis fail or answer slowly, the request is checked against the local
//! bucket instead (see docs/decisions.md: a Redis outage never stops
//! payments, and each node still holds its own limit).

use billpay_domain::KeyId;
use billpay_store::RateLimit;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<KeyId, Bucket>>,
    shared: Option<SharedBuckets>,
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

impl Decision {
    fn new(limit: RateLimit, allowed: bool, tokens: f64) -> Decision {
        let rate = f64::from(limit.per_second.max(1));
        let burst = f64::from(limit.burst.max(1));
        Decision {
            allowed,
            limit: limit.burst,
            remaining: tokens.max(0.0).floor() as u32,
            reset_secs: ((burst - tokens).max(0.0) / rate).ceil() as u64,
            retry_after_secs: if allowed {
                0
            } else {
                ((1.0 - tokens) / rate).ceil().max(1.0) as u64
            },
        }
    }
}

/// Takes one token, refilling at `ARGV[1]` per second up to `ARGV[2]`; the
/// clock is the Redis server's, so nodes' clocks never matter. Returns
/// `{allowed, tokens_left}` (tokens as text: Lua numbers are doubles).
const TOKEN_BUCKET: &str = r"
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
";

/// How long a node waits for Redis before deciding with its local bucket.
const REDIS_TIMEOUT: Duration = Duration::from_millis(250);

struct SharedBuckets {
    connection: redis::aio::ConnectionManager,
    script: redis::Script,
    /// Unix seconds of the last "Redis unavailable" warning (one a minute).
    warned_at: AtomicU64,
}

impl RateLimiter {
    /// Limits shared by every node through the Redis at `url`
    /// (`redis://host:6379/0`); fails if Redis cannot be reached now.
    pub async fn with_redis(url: &str) -> Result<RateLimiter, RedisError> {
        let client = redis::Client::open(url).map_err(RedisError::Url)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(REDIS_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let mut connection = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(RedisError::Connect)?;
        let script = redis::Script::new(TOKEN_BUCKET);
        script
            .prepare_invoke()
            .load_async(&mut connection)
            .await
            .map_err(RedisError::Script)?;
        Ok(RateLimiter {
            buckets: Mutex::default(),
            shared: Some(SharedBuckets {
                connection,
                script,
                warned_at: AtomicU64::new(0),
            }),
        })
    }

    /// Whether the limits are shared through Redis.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Takes a token for `key`: from the shared bucket when there is one (and
    /// Redis answers in time), else from this process's bucket.
    pub async fn check(&self, key: KeyId, limit: RateLimit) -> Decision {
        if let Some(shared) = &self.shared {
            match shared.take(key, limit).await {
                Ok(decision) => return decision,
                Err(e) => shared.warn(&e),
            }
        }
        self.check_local(key, limit)
    }

    /// This process's bucket only.
    pub fn check_local(&self, key: KeyId, limit: RateLimit) -> Decision {
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
        Decision::new(limit, allowed, bucket.tokens)
    }
}

/// Why the shared rate limits did not answer (each keeps Redis's own error).
#[derive(Debug, thiserror::Error)]
pub enum RedisError {
    #[error("invalid Redis URL: {0}")]
    Url(redis::RedisError),
    #[error("cannot connect to Redis: {0}")]
    Connect(redis::RedisError),
    #[error("cannot load the rate-limit script into Redis: {0}")]
    Script(redis::RedisError),
    #[error("Redis timed out")]
    TimedOut,
    #[error("{0}")]
    Call(redis::RedisError),
    #[error("unexpected answer from Redis: {0}")]
    Answer(std::num::ParseFloatError),
}

impl SharedBuckets {
    async fn take(&self, key: KeyId, limit: RateLimit) -> Result<Decision, RedisError> {
        let mut connection = self.connection.clone();
        let mut invocation = self.script.key(format!("billpay:ratelimit:{key}"));
        invocation
            .arg(limit.per_second.max(1))
            .arg(limit.burst.max(1));
        let call = invocation.invoke_async::<(i64, String)>(&mut connection);
        let (allowed, tokens) = tokio::time::timeout(REDIS_TIMEOUT, call)
            .await
            .map_err(|_| RedisError::TimedOut)?
            .map_err(RedisError::Call)?;
        let tokens: f64 = tokens.parse().map_err(RedisError::Answer)?;
        Ok(Decision::new(limit, allowed == 1, tokens))
    }

    fn warn(&self, error: &RedisError) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let last = self.warned_at.load(Ordering::Relaxed);
        if now >= last + 60
            && self
                .warned_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                %error,
                "shared rate limits unavailable; limiting per node until Redis answers"
            );
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
            let d = limiter.check_local(key, limit);
            assert!(d.allowed);
            assert_eq!(d.remaining, remaining);
        }
        let refused = limiter.check_local(key, limit);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_secs, 1);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(limiter.check_local(key, limit).allowed);
        // another key has its own bucket
        assert!(
            limiter
                .check_local(
                    KeyId::new(),
                    RateLimit {
                        per_second: 1,
                        burst: 1
                    }
                )
                .allowed
        );
    }

    /// Two limiters on one Redis (two nodes) share one bucket per key.
    #[tokio::test]
    async fn redis_buckets_are_shared_between_nodes() {
        let Some(url) = std::env::var("BILLPAY_TEST_REDIS_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            eprintln!("SKIPPED redis_buckets_are_shared_between_nodes: set BILLPAY_TEST_REDIS_URL");
            return;
        };
        let nodes = [
            RateLimiter::with_redis(&url).await.unwrap(),
            RateLimiter::with_redis(&url).await.unwrap(),
        ];
        assert!(nodes[0].is_shared());
        let key = KeyId::new();
        let limit = RateLimit {
            per_second: 1,
            burst: 10,
        };
        let mut allowed = 0;
        for i in 0..30 {
            let d = nodes[i % 2].check(key, limit).await;
            if d.allowed {
                allowed += 1;
            } else {
                assert!(d.retry_after_secs >= 1);
            }
        }
        // 10 from the burst, at most one refilled meanwhile.
        assert!((10..=11).contains(&allowed), "{allowed} allowed");
        let other = nodes[1].check(KeyId::new(), limit).await;
        assert!(other.allowed && other.remaining == 9);
    }
}
