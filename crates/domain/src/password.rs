//! Dashboard passwords: argon2id with the crate's default (OWASP-recommended)
//! parameters, stored as PHC strings. CPU-heavy: call from a blocking thread.
//! A hash or a check needs 19 MiB of working memory ([`working_memory`]),
//! kept for the next one while they keep coming and given back to the
//! system once they stop ([`Spares`]).

use argon2::password_hash::{
    Output, ParamsString, PasswordHash, Salt, SaltString, rand_core::OsRng,
};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

pub const MIN_LENGTH: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("password must be at least {MIN_LENGTH} characters")]
    TooShort,
    #[error("password could not be hashed")]
    Hashing,
}

pub fn hash(password: &str) -> Result<String, PasswordError> {
    if password.chars().count() < MIN_LENGTH {
        return Err(PasswordError::TooShort);
    }
    hash_secret(password)
}

/// argon2id of any secret whose own rules were checked by its caller (a
/// password above, a transaction PIN in `transaction_pin`): argon2's own
/// `hash_password`, in a [`working_memory`].
pub(crate) fn hash_secret(password: &str) -> Result<String, PasswordError> {
    hash_with_salt(password, &SaltString::generate(&mut OsRng))
}

fn hash_with_salt(password: &str, salt: &SaltString) -> Result<String, PasswordError> {
    let (algorithm, version) = (Algorithm::default(), Version::default());
    let argon2 = Argon2::new(algorithm, version, Params::default());
    let params = argon2.params();
    let output_len = params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN);
    let output = output_of(&argon2, password.as_bytes(), salt.as_salt(), output_len)
        .ok_or(PasswordError::Hashing)?;
    let hashed = PasswordHash {
        algorithm: algorithm.ident(),
        version: Some(version.into()),
        params: ParamsString::try_from(params).map_err(|_| PasswordError::Hashing)?,
        salt: Some(salt.as_salt()),
        hash: Some(output),
    };
    Ok(hashed.to_string())
}

/// At least this much is asked of the allocator for a working memory: glibc
/// maps a request this large on its own and unmaps it when freed, whatever
/// it has seen before (its largest dynamic mmap threshold, mallopt(3)). A
/// 19 MiB block, once freed, raises that threshold above its size, so the
/// next one would come from an arena, which keeps it resident for good
/// (issue 18; the bench's peak RSS, docs/benchmarks.md 2026-12-01).
const ALWAYS_MAPPED: usize = 32 * 1024 * 1024;

/// `blocks` of argon2 working memory for one hash or check. Only those are
/// written (so resident); the rest of the capacity is never touched.
fn working_memory(blocks: usize) -> Vec<Block> {
    let mut memory = Vec::with_capacity(blocks.max(ALWAYS_MAPPED / Block::SIZE));
    memory.resize(blocks, Block::default());
    memory
}

/// How long spare working memories outlive the last hash or check.
const SPARE_IDLE: Duration = Duration::from_secs(2);

/// Working memories kept between hashes and checks. A fresh one costs the
/// kernel about 4,900 page faults, as much CPU as half a check's own work
/// (docs/benchmarks.md, 2026-12-01 second session), so each is kept for the
/// next; once none has been taken for [`SPARE_IDLE`] they are all unmapped
/// (a thread of their own looks each second). There are never more of them
/// than hashes and checks that ran at once (the callers' permits bound those).
struct Spares {
    kept: Mutex<Kept>,
}

struct Kept {
    memories: Vec<Vec<Block>>,
    last_taken: Instant,
}

static SPARES: LazyLock<Spares> = LazyLock::new(Spares::new);

impl Spares {
    fn new() -> Spares {
        let kept = Kept {
            memories: Vec::new(),
            last_taken: Instant::now(),
        };
        Spares {
            kept: Mutex::new(kept),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A kept memory of `blocks` blocks, or a new one.
    fn take(&self, blocks: usize) -> Vec<Block> {
        let kept = {
            let mut kept = self.kept();
            kept.last_taken = Instant::now();
            kept.memories.pop()
        };
        match kept {
            Some(mut memory) => {
                memory.resize(blocks, Block::default());
                memory
            }
            None => working_memory(blocks),
        }
    }

    fn give_back(&self, memory: Vec<Block>) {
        self.kept().memories.push(memory);
    }

    /// Unmaps every kept memory if none was taken in the [`SPARE_IDLE`]
    /// before `now`.
    fn release_if_idle(&self, now: Instant) {
        let released = {
            let mut kept = self.kept();
            if now.duration_since(kept.last_taken) < SPARE_IDLE {
                return;
            }
            std::mem::take(&mut kept.memories)
        };
        // Unmapped outside the lock: a check taking a memory need not wait.
        drop(released);
    }
}

/// [`SPARES`]' memory for one hash or check. The thread that gives kept
/// memories back starts with the first; should it fail to, none is kept.
fn with_memory<R>(blocks: usize, compute: impl FnOnce(&mut [Block]) -> R) -> R {
    static RELEASING: LazyLock<bool> = LazyLock::new(|| {
        let releaser = std::thread::Builder::new().name("argon2-spares".into());
        let started = releaser.spawn(|| {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                SPARES.release_if_idle(Instant::now());
            }
        });
        started.is_ok()
    });
    let mut memory = SPARES.take(blocks);
    let answer = compute(&mut memory);
    if *RELEASING {
        SPARES.give_back(memory);
    }
    answer
}

/// Checks `password` against a stored hash. With no hash (unknown user) it
/// still does the same work, so response time does not reveal who exists.
pub fn verify(stored: Option<&str>, password: &str) -> bool {
    static DUMMY: LazyLock<String> = LazyLock::new(|| hash("not-a-real-password").expect("hashes"));
    let (stored, known) = match stored {
        Some(h) => (h, true),
        None => (DUMMY.as_str(), false),
    };
    let matches =
        PasswordHash::new(stored).is_ok_and(|parsed| matches(&parsed, password.as_bytes()));
    matches && known
}

/// argon2's own `verify_password` (same parameters, constant-time
/// comparison of the outputs), in a [`working_memory`].
fn matches(stored: &PasswordHash, password: &[u8]) -> bool {
    let (Some(salt), Some(expected)) = (stored.salt, stored.hash) else {
        return false;
    };
    let Some(argon2) = hasher_of(stored) else {
        return false;
    };
    output_of(&argon2, password, salt, expected.len()).is_some_and(|computed| computed == expected)
}

/// argon2's output of `len` bytes for `password` and `salt`, computed in a
/// spare working memory ([`with_memory`]): what a hash stores and a check
/// compares.
fn output_of(argon2: &Argon2, password: &[u8], salt: Salt, len: usize) -> Option<Output> {
    let mut salt_bytes = [0u8; 64];
    let salt = salt.decode_b64(&mut salt_bytes).ok()?;
    with_memory(argon2.params().block_count(), |memory| {
        Output::init_with(len, |out| {
            argon2
                .hash_password_into_with_memory(password, salt, out, memory)
                .map_err(Into::into)
        })
        .ok()
    })
}

/// The argon2 instance (algorithm, version, parameters) a stored hash was made with.
fn hasher_of(stored: &PasswordHash) -> Option<Argon2<'static>> {
    let algorithm = Algorithm::try_from(stored.algorithm).ok()?;
    let version = match stored.version {
        Some(v) => Version::try_from(v).ok()?,
        None => Version::default(),
    };
    let params = Params::try_from(stored).ok()?;
    Some(Argon2::new(algorithm, version, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_verifies() {
        let h = hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify(Some(&h), "correct horse"));
        assert!(!verify(Some(&h), "wrong horse"));
        assert!(!verify(None, "not-a-real-password"));
        assert!(!verify(Some("not a PHC string"), "x"));
        assert_eq!(hash("short"), Err(PasswordError::TooShort));
    }

    #[test]
    fn a_hash_is_argon2s_own_for_the_same_salt() {
        use argon2::password_hash::PasswordHasher;
        let salt = SaltString::generate(&mut OsRng);
        let ours = hash_with_salt("correct horse", &salt).unwrap();
        let argon2s = Argon2::default()
            .hash_password(b"correct horse", &salt)
            .unwrap()
            .to_string();
        assert_eq!(ours, argon2s);
    }

    /// A memory given back is the next one taken (no fresh 19 MiB to map),
    /// and the kept ones go once none was taken for `SPARE_IDLE`.
    #[test]
    fn spare_memories_are_reused_and_given_back_when_idle() {
        let spares = Spares::new();
        let blocks = Argon2::default().params().block_count();
        let first = spares.take(blocks);
        let at = first.as_ptr();
        spares.give_back(first);
        let again = spares.take(blocks);
        assert_eq!(again.as_ptr(), at, "the kept memory was taken again");
        assert_eq!(again.len(), blocks);
        let taken_at = Instant::now();
        spares.give_back(again);
        spares.release_if_idle(taken_at + SPARE_IDLE / 2);
        assert_eq!(
            spares.kept().memories.len(),
            1,
            "kept while checks may come"
        );
        spares.release_if_idle(taken_at + SPARE_IDLE);
        assert!(spares.kept().memories.is_empty(), "given back once idle");
    }

    #[test]
    fn a_working_memory_is_the_hashs_blocks_in_a_mapped_allocation() {
        let blocks = Argon2::default().params().block_count();
        let memory = working_memory(blocks);
        assert_eq!(memory.len() * Block::SIZE, 19 * 1024 * 1024);
        assert!(memory.capacity() * Block::SIZE >= ALWAYS_MAPPED);
    }
}
