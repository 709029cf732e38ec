//! `billpay backup` under live writes, restored into a working server.

use crate::support::*;
use serde_json::json;

/// `billpay backup` while purchases keep arriving: the copy restores into a
/// working server whose balances equal their ledgers and whose audit passes.
/// On PostgreSQL the command refuses and points to pg_dump.
#[tokio::test(flavor = "multi_thread")]
async fn backup_under_live_writes_restores_into_a_working_server() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let server = Arc::new(TestServer::spawn().await);
    let file = server.path().join("backup.db");
    let file = file.to_str().unwrap();
    if server.is_postgres() {
        let (ok, reply) = server.cli_result(&["backup", file]);
        assert!(!ok, "{reply}");
        assert!(
            reply["error"].as_str().unwrap().contains("pg_dump"),
            "{reply}"
        );
        return;
    }
    let customers: Vec<Customer> = (0..3).map(|_| server.customer("50000")).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let accepted = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = customers
        .iter()
        .map(|c| {
            let (server, key) = (server.clone(), c.api_key.clone());
            let (stop, accepted) = (stop.clone(), accepted.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 100,
                                      "reference": format!("bk-{}", rand_suffix())});
                    server
                        .post(&key, "/v1/airtime/purchase", body)
                        .await
                        .assert_ok();
                    accepted.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    while accepted.load(Ordering::Relaxed) < 30 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let before = accepted.load(Ordering::Relaxed);
    let report = server.cli(&["backup", file]);
    let target = accepted.load(Ordering::Relaxed) + 30;
    while accepted.load(Ordering::Relaxed) < target {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    assert!(report["bytes"].as_u64().unwrap() > 0, "{report}");
    // A second backup to the same file is refused, leaving the first intact.
    let (ok, refused) = server.cli_result(&["backup", file]);
    assert!(
        !ok && refused["error"]
            .as_str()
            .unwrap()
            .contains("already exists")
    );

    let restored = TestServer::restored_from(std::path::Path::new(file)).await;
    let (passed, audit) = restored.audit();
    assert!(passed, "{audit}");
    let mut purchases_in_backup = 0;
    for c in &customers {
        let statement = restored.assert_ledger_consistent(&c.account_id);
        let debits = statement["entries"].as_array().unwrap().len() - 1; // minus the funding
        purchases_in_backup += debits;
        let expected = 50000.0 - 100.0 * debits as f64;
        assert_eq!(statement["balance"].as_f64().unwrap(), expected);
        assert_eq!(
            restored.balance(&c.api_key).await,
            statement["balance"].as_f64().unwrap()
        );
    }
    // The copy holds the purchases made before it, and not those made after.
    assert!(
        purchases_in_backup >= before,
        "{purchases_in_backup} < {before}"
    );
    assert!(purchases_in_backup < accepted.load(Ordering::Relaxed));
    // The restored server takes new purchases with the old keys.
    let c = &customers[0];
    let code = restored
        .post(&c.api_key, "/v1/airtime/purchase",
              json!({"provider_id": "mtn", "phone": "08031234567", "amount": 100, "reference": format!("after-{}", rand_suffix())}))
        .await
        .assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        restored.wait_final(&c.api_key, &code).await["status"],
        "successful"
    );
}
