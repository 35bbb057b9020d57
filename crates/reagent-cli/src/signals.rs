//! Waiting for the signals that stop a long-running command (`serve`, `hub`), and turning them
//! into a cancellation (`run`, `demo`, `eval`).

use reagent_protocol::CancellationToken;

use crate::exit::ExitCode;

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

/// Cancel `cancel` at the first Ctrl-C or SIGTERM, saying so on stderr (`who` names the
/// command), so the command stops cleanly and keeps what it did; quit at once at the second.
pub(crate) fn cancel_on_stop(
    cancel: CancellationToken,
    who: &'static str,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        stop_requested().await;
        eprintln!("\n{who}: stopping (Ctrl-C again to quit at once)");
        cancel.cancel();
        stop_requested().await;
        std::process::exit(ExitCode::Cancelled as i32);
    })
}
