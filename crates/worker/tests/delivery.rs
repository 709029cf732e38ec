//! The delivery worker's loop against a real store (SQLite, or PostgreSQL
//! with `BILLPAY_TEST_BACKEND=postgres`) and a real HTTP receiver.

#[path = "../../store/tests/common/mod.rs"]
mod common;

use billpay_domain::TxStatus;
use billpay_domain::sealed::SecretBox;
use billpay_store::{KeyChange, SharedStore};
use billpay_webhooks::DeliveryConfig;
use billpay_worker::{Delivery, DeliverySettings};
use common::{finalization, funded_account, purchase, store};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// A receiver answering 204 to every request; counts what it received.
async fn receiver() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let received = Arc::new(AtomicUsize::new(0));
    let count = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let count = count.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 64 * 1024];
                let mut seen = Vec::new();
                // One request a connection is enough for this receiver: read
                // the head and the body its Content-Length gives, then answer.
                while let Ok(n) = socket.read(&mut buffer).await {
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buffer[..n]);
                    if let Some(end) = request_end(&seen) {
                        seen.drain(..end);
                        count.fetch_add(1, Ordering::SeqCst);
                        let answer = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n";
                        if socket.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, received)
}

/// Where the first whole request in `bytes` ends, if it is all there.
fn request_end(bytes: &[u8]) -> Option<usize> {
    let head = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let text = String::from_utf8_lossy(&bytes[..head]).to_ascii_lowercase();
    let length = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse::<usize>().unwrap_or(0));
    (bytes.len() >= head + length).then_some(head + length)
}

/// `count` finalized purchases of one key, each with an event due.
async fn events_due(store: &SharedStore, url: &str, count: usize) {
    let (account, key) = funded_account(store, 100_000).await;
    let change = KeyChange::WebhookUrl(Some(url.to_owned()));
    store.update_api_key(key, change).await.unwrap();
    for i in 0..count {
        let tx = store
            .place_purchase(purchase(account, key, &format!("due-{i:03}"), 100))
            .await
            .unwrap();
        let fin = finalization(TxStatus::Successful, false);
        assert!(store.finalize(&tx.code, fin).await.unwrap());
    }
}

/// A claim capped below the free slots (`per_key` 2 of 64) that took all it
/// asked for has left due work behind: the loop claims again at once, so
/// 40 events go out long before even one 60 s poll. (On c645029 the loop
/// slept after each short claim: 2 events a poll, 20 polls.)
#[tokio::test]
async fn a_capped_claim_that_came_back_full_is_followed_at_once() {
    let (_db, store) = store().await;
    let (url, received) = receiver().await;
    events_due(&store, &url, 40).await;
    let settings = DeliverySettings {
        client: DeliveryConfig {
            allow_private: true,
            ..DeliveryConfig::default()
        },
        concurrency: 64,
        per_key: 2,
        idle_poll: Duration::from_secs(60),
        ..DeliverySettings::default()
    };
    let secrets = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
    let delivery = Delivery::new(store.clone(), secrets, settings);
    let shutdown = Arc::new(Notify::new());
    let worker = tokio::spawn(delivery.run(shutdown.clone()));
    let all = tokio::time::timeout(Duration::from_secs(30), async {
        while received.load(Ordering::SeqCst) < 40 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let got = received.load(Ordering::SeqCst);
    shutdown.notify_waiters();
    worker.await.unwrap();
    assert!(
        all.is_ok(),
        "40 events due, {got} delivered: the worker slept while work was due"
    );
}
