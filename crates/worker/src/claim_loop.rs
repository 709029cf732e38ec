//! The loop the workers share: claim as much due work as there is free
//! capacity, process each item in its own task (so one slow item never holds
//! up another), sleep when a claim took all that was due until woken or the
//! poll interval passes (or, when every slot was busy, until a task ends),
//! and on shutdown give the work in flight a bounded time to finish.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

pub(crate) struct LoopSettings {
    /// Items in flight at once.
    pub concurrency: usize,
    /// Sleep between claims when there was nothing to do.
    pub idle_poll: Duration,
    /// How long in-flight work may run on after shutdown.
    pub drain: Duration,
}

/// Runs until `shutdown` is notified (`notify_waiters`). `claim(n)` leases up
/// to `n` items; `start(item)` returns the work for one item, or `None` to
/// skip it (it is already being processed here).
pub(crate) async fn claim_loop<T, Claim, Claimed, Start, Work>(
    settings: LoopSettings,
    wake: Option<Arc<Notify>>,
    shutdown: Arc<Notify>,
    mut claim: Claim,
    start: Start,
) where
    Claim: FnMut(u32) -> Claimed,
    Claimed: Future<Output = Vec<T>>,
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
        let claimed = if free == 0 {
            Vec::new()
        } else {
            claim(free).await
        };
        // A claim that left free slots took all that was due: wait for a wake
        // (new work) or the poll rather than claim again at once, which would
        // be an empty write (on SQLite, a job for the one writer).
        let idle = (claimed.len() as u32) < free || free == 0;
        for item in claimed {
            let Some(work) = start(item) else { continue };
            let permit = permits
                .clone()
                .acquire_owned()
                .await
                .expect("semaphore open");
            tasks.spawn(async move {
                work.await;
                drop(permit);
            });
        }
        if idle {
            // `notify_one` keeps a permit when nobody waits, so no wake-up is lost.
            let woken = async {
                match &wake {
                    Some(wake) => wake.notified().await,
                    None => std::future::pending().await,
                }
            };
            // Every slot busy: work may still be due, so a slot set free is
            // a reason to claim again, not the poll (up to 250 ms later).
            let saturated = free == 0;
            tokio::select! {
                _ = stop.as_mut() => break,
                _ = woken => {}
                Some(_) = tasks.join_next(), if saturated => {}
                _ = tokio::time::sleep(settings.idle_poll) => {}
            }
        } else {
            // Busy: do not sleep, but do not miss a shutdown either.
            tokio::select! {
                biased;
                _ = stop.as_mut() => break,
                _ = std::future::ready(()) => {}
            }
        }
    }
    let _ = tokio::time::timeout(settings.drain, tasks.join_all()).await;
}

/// Processes a claimed batch to the end (the `run_once()` of tests).
pub(crate) async fn run_all<T, Work>(items: Vec<T>, start: impl Fn(T) -> Work) -> usize
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
        let claim = move |n: u32| {
            let mut queue = queue.lock().unwrap();
            let take = (n as usize).min(queue.len());
            let split = queue.len() - take;
            std::future::ready(queue.split_off(split))
        };
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
