//! The loop the workers share: claim as much due work as there is free
//! capacity, process each item in its own task (so one slow item never holds
//! up another), and on shutdown give the work in flight a bounded time to
//! finish. Whether to claim again at once is the claim's own answer
//! ([`Claimed::left`]): only the claim knows its cap (a worker may take fewer
//! than the free slots, as deliveries take at most `per_key`), so the loop
//! never guesses "nothing more is due" from a short claim.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

pub struct LoopSettings {
    /// Items in flight at once.
    pub concurrency: usize,
    /// Sleep between claims when there was nothing to do.
    pub idle_poll: Duration,
    /// How long in-flight work may run on after shutdown.
    pub drain: Duration,
}

/// What one claim took, and what it left behind.
pub struct Claimed<T> {
    pub items: Vec<T>,
    pub left: Left,
}

/// What a claim left due behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// It took all that was due: sleep until a wake or the poll.
    Nothing,
    /// It took as many as it asked for, so more may be due: claim again now.
    More,
    /// Due work was left out because its slots are busy (a receiver at its
    /// own cap): claim again when a task ends, a wake, or the poll.
    UntilASlotFrees,
}

impl<T> Claimed<T> {
    /// `items` from a claim that asked for `limit`: a full claim may have
    /// left more behind; a short one took all that was due.
    pub fn of(items: Vec<T>, limit: u32) -> Self {
        let left = if items.len() as u32 >= limit && limit > 0 {
            Left::More
        } else {
            Left::Nothing
        };
        Claimed { items, left }
    }

    /// A claim that failed: nothing taken; try again after the poll.
    pub fn failed() -> Self {
        Claimed {
            items: Vec::new(),
            left: Left::Nothing,
        }
    }
}

/// Runs until `shutdown` is notified (`notify_waiters`). `claim(n)` leases up
/// to `n` items and says what it left due; `start(item)` returns the work
/// for one item, or `None` to skip it (it is already being processed here).
pub async fn claim_loop<T, Claim, Claiming, Start, Work>(
    settings: LoopSettings,
    wake: Option<Arc<Notify>>,
    shutdown: Arc<Notify>,
    mut claim: Claim,
    start: Start,
) where
    Claim: FnMut(u32) -> Claiming,
    Claiming: Future<Output = Claimed<T>>,
    Start: Fn(T) -> Option<Work>,
    Work: Future<Output = ()> + Send + 'static,
{
    // Registered once, before the loop: a `notify_waiters()` that lands while
    // the loop is busy claiming (not parked in a `select!`) is still seen.
    let stop = shutdown.notified();
    tokio::pin!(stop);
    stop.as_mut().enable();
    let permits = Arc::new(Semaphore::new(settings.concurrency));
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let free = permits.available_permits().min(64) as u32;
        // Every slot busy: work may still be due, so a slot set free is a
        // reason to claim again, not the poll (up to 250 ms later).
        let claimed = if free == 0 {
            Claimed {
                items: Vec::new(),
                left: Left::UntilASlotFrees,
            }
        } else {
            claim(free).await
        };
        for item in claimed.items {
            let Some(work) = start(item) else { continue };
            let permit = permits
                .clone()
                .acquire_owned()
                .await
                .expect("semaphore open");
            // Boxed: a fulfilment's future is large, and tokio moves a task's
            // future through its cell several times (docs/benchmarks.md).
            let work = Box::pin(work);
            tasks.spawn(async move {
                work.await;
                drop(permit);
            });
        }
        if claimed.left == Left::More {
            // Busy: do not sleep, but do not miss a shutdown either.
            tokio::select! {
                biased;
                _ = stop.as_mut() => break,
                _ = std::future::ready(()) => {}
            }
            continue;
        }
        // Nothing more is due (or only behind busy slots): claiming again at
        // once would be an empty write (on SQLite, a job for the one writer).
        // `notify_one` keeps a permit when nobody waits, so no wake-up is lost.
        let woken = async {
            match &wake {
                Some(wake) => wake.notified().await,
                None => std::future::pending().await,
            }
        };
        let on_a_free_slot = claimed.left == Left::UntilASlotFrees;
        tokio::select! {
            _ = stop.as_mut() => break,
            _ = woken => {}
            Some(_) = tasks.join_next(), if on_a_free_slot => {}
            _ = tokio::time::sleep(settings.idle_poll) => {}
        }
    }
    let _ = tokio::time::timeout(settings.drain, tasks.join_all()).await;
}

/// Processes a claimed batch to the end (the `run_once()` of tests).
pub async fn run_all<T, Work>(items: Vec<T>, start: impl Fn(T) -> Work) -> usize
where
    Work: Future<Output = ()> + Send + 'static,
{
    let count = items.len();
    let mut tasks = JoinSet::new();
    for item in items {
        tasks.spawn(start(item));
    }
    tasks.join_all().await;
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    /// Up to `n` items from the back of `queue`, as a claim of `n`.
    fn take(queue: &Mutex<Vec<u32>>, n: u32) -> Claimed<u32> {
        let mut queue = queue.lock().unwrap();
        let split = queue.len() - (n as usize).min(queue.len());
        Claimed::of(queue.split_off(split), n)
    }

    /// A worker whose claim takes fewer than the free slots (deliveries take
    /// at most `per_key`): 64 slots, claims of 2, 30 items due, a poll far
    /// longer than the test. A full claim of 2 leaves work due, so all 30 are
    /// worked at once; a loop that read "fewer than the free slots" as
    /// "nothing more is due" slept a poll after each claim.
    #[tokio::test]
    async fn a_full_capped_claim_is_followed_at_once_not_after_the_poll() {
        let due = Arc::new(Mutex::new((0..30).collect::<Vec<u32>>()));
        let done = Arc::new(Semaphore::new(0));
        let shutdown = Arc::new(Notify::new());
        let settings = LoopSettings {
            concurrency: 64,
            idle_poll: Duration::from_secs(60),
            drain: Duration::from_secs(1),
        };
        let queue = due.clone();
        let claim = move |free: u32| std::future::ready(take(&queue, free.min(2)));
        let finished = done.clone();
        let start = move |_item: u32| {
            let finished = finished.clone();
            Some(async move { finished.add_permits(1) })
        };
        let worker = tokio::spawn(claim_loop(settings, None, shutdown.clone(), claim, start));
        let all = tokio::time::timeout(Duration::from_secs(20), done.acquire_many(30)).await;
        assert!(all.is_ok(), "30 items due were all worked, not 2 a poll");
        assert!(due.lock().unwrap().is_empty());
        shutdown.notify_waiters();
        worker.await.unwrap();
    }

    /// One slot, three items due, a poll far longer than the test: each item
    /// after the first is claimed when the one before it ends.
    #[tokio::test]
    async fn a_slot_set_free_claims_again_before_the_poll() {
        let due = Arc::new(Mutex::new(vec![3u32, 2, 1]));
        let done = Arc::new(Semaphore::new(0));
        let shutdown = Arc::new(Notify::new());
        let settings = LoopSettings {
            concurrency: 1,
            idle_poll: Duration::from_secs(60),
            drain: Duration::from_secs(1),
        };
        let queue = due.clone();
        let claim = move |n: u32| std::future::ready(take(&queue, n));
        let finished = done.clone();
        let start = move |_item: u32| {
            let finished = finished.clone();
            Some(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                finished.add_permits(1);
            })
        };
        let started = Instant::now();
        let worker = tokio::spawn(claim_loop(settings, None, shutdown.clone(), claim, start));
        let all = tokio::time::timeout(Duration::from_secs(10), done.acquire_many(3)).await;
        assert!(all.is_ok(), "three items worked one after another");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "not held back by the 60 s poll: {:?}",
            started.elapsed()
        );
        assert!(due.lock().unwrap().is_empty());
        shutdown.notify_waiters();
        worker.await.unwrap();
    }
}
