//! Signing switched off and on again, from the CLI.

use super::*;

/// Verification off → no signature headers; switching it off and on again
/// gives a new secret and the old one no longer verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_off_has_no_headers_and_reenabling_rotates_the_secret() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("100000");
    set_url(&server, &c.key_id, &receiver.url("/ok"));

    // Off by default.
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230001")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_json_content_type(&hook);
    assert_unsigned(&hook);

    let first = enable_signing(&server, &c.key_id);
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230002")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_signed(&hook, &first);

    disable_signing(&server, &c.key_id);
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230003")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_unsigned(&hook);

    let second = enable_signing(&server, &c.key_id);
    assert_ne!(first, second, "re-enabling must generate a new secret");
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230004")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_signed(&hook, &second);
    assert_eq!(
        verify_with(&hook, &first),
        Err(VerifyError::SignatureMismatch)
    );

    tokio::time::sleep(SETTLE).await;
    assert_eq!(receiver.received().len(), 4);
}
