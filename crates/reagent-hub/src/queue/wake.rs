//! Waking idle workers: PostgreSQL `LISTEN`/`NOTIFY` at once, polling as the fallback (and the
//! only way on SQLite).

use std::time::Duration;

use reagent_store::Location;
use sqlx::postgres::PgListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{Queue, NOTIFY_CHANNEL};

/// How long the listener waits before connecting again after losing PostgreSQL.
const RECONNECT_PAUSE: Duration = Duration::from_millis(500);

/// Tells an idle worker when to look for work again: when PostgreSQL says a task may have
/// become claimable, or when the polling interval has passed, whichever comes first.
pub struct Wakeup {
    notified: watch::Receiver<u64>,
    poll: Duration,
    listener: Option<JoinHandle<()>>,
}

impl Queue {
    /// A [`Wakeup`] polling every `poll`, listening for notifications when `listen` is set and
    /// the store is PostgreSQL.
    pub fn wakeup(&self, poll: Duration, listen: bool) -> Wakeup {
        let (tx, rx) = watch::channel(0u64);
        let listener = match self.store.location() {
            Location::Postgres(url) if listen => Some(tokio::spawn(listen_loop(url.clone(), tx))),
            _ => None,
        };
        Wakeup {
            notified: rx,
            poll,
            listener,
        }
    }
}

impl Wakeup {
    /// Whether notifications are listened for (else this only polls).
    pub fn listens(&self) -> bool {
        self.listener.is_some()
    }

    /// Wait for a notification that arrived since the last call, or for the polling interval.
    pub async fn wait(&mut self) {
        let poll = self.poll;
        if self.listener.is_some() {
            tokio::select! {
                changed = self.notified.changed() => {
                    if changed.is_err() {
                        tokio::time::sleep(poll).await;
                    }
                }
                () = tokio::time::sleep(poll) => {}
            }
            self.notified.borrow_and_update();
        } else {
            tokio::time::sleep(poll).await;
        }
    }
}

impl Drop for Wakeup {
    fn drop(&mut self) {
        if let Some(listener) = &self.listener {
            listener.abort();
        }
    }
}

/// Listen on [`NOTIFY_CHANNEL`] for as long as the [`Wakeup`] lives, reconnecting after
/// losing the server; every notification (and every reconnection, since notifications sent
/// meanwhile are lost) bumps the counter.
async fn listen_loop(url: String, tx: watch::Sender<u64>) {
    loop {
        let mut listener = match PgListener::connect(&url).await {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!("task queue: cannot listen for notifications: {e}");
                tokio::time::sleep(RECONNECT_PAUSE).await;
                continue;
            }
        };
        if let Err(e) = listener.listen(NOTIFY_CHANNEL).await {
            tracing::debug!("task queue: cannot listen on {NOTIFY_CHANNEL}: {e}");
            tokio::time::sleep(RECONNECT_PAUSE).await;
            continue;
        }
        tx.send_modify(|n| *n += 1);
        loop {
            match listener.recv().await {
                Ok(_) => tx.send_modify(|n| *n += 1),
                Err(e) => {
                    tracing::debug!("task queue: notification listener lost: {e}");
                    tokio::time::sleep(RECONNECT_PAUSE).await;
                    break;
                }
            }
        }
        if tx.is_closed() {
            return;
        }
    }
}
