//! Waiting for the signals that stop a long-running command (`serve`, `hub`).

/// Resolves at Ctrl-C or SIGTERM (or never, if SIGTERM cannot be watched: Ctrl-C still works).
pub(crate) async fn stop_requested() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
