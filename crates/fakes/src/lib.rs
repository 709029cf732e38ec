//! Fakes of outside systems, written from their public documents (not from
//! our adapters), shared by the integration tests (`crates/billpay/tests/it`,
//! whose `support` kit re-exports them) and the benchmark harness (`bench/`).
//! Each fake is an axum app on a loopback port of its own, served by its own
//! thread and runtime ([`serve_apart`]), so it answers whatever runtime the
//! caller is on, and a caller's blocking code does not stall it.

pub mod smedata;

/// Serves `app` on a loopback port from a thread and a single-threaded
/// runtime of its own, and returns its base URL (`http://127.0.0.1:PORT`):
/// `billpay serve` calls it while the caller's own runtime may be blocked
/// waiting for the server to start (its start-up supplier check).
pub fn serve_apart(app: axum::Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a fake");
    listener.set_nonblocking(true).expect("nonblocking");
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the fake");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            axum::serve(listener, app).await
        })
    });
    base
}
