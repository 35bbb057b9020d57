//! Retries with exponential backoff and jitter, and cancellation.
//!
//! A failed attempt is retried when [`ProviderError::is_retryable`] says so (connection errors,
//! timeouts, 429, 5xx; never other 4xx). The wait is the server's `Retry-After` when it sent one,
//! else `base_delay * 2^(attempt-1)` capped at `max_delay`, scaled by a random factor in
//! `[0.5, 1.0]` so that many clients do not retry in lockstep. Each retry is reported through the
//! sink as [`ChatSignal::Retry`] before the wait. Waiting and attempts both stop at once when the
//! cancellation token fires.

use std::future::Future;
use std::time::Duration;

use rand::Rng;
use reagent_protocol::{CancellationToken, ChatSignal, ProviderError, SignalSink};

/// How failed calls are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = no retry).
    pub max_retries: u32,
    /// Delay before the first retry (before jitter).
    pub base_delay: Duration,
    /// Upper bound of the computed delay (`Retry-After` is honoured as sent).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `attempt` (1-based) after `error`.
    pub fn delay(&self, attempt: u32, error: &ProviderError) -> Duration {
        if let ProviderError::Http {
            retry_after: Some(after),
            ..
        } = error
        {
            return *after;
        }
        let exp = 2u32.saturating_pow(attempt.saturating_sub(1).min(20));
        let full = self.base_delay.saturating_mul(exp).min(self.max_delay);
        let factor: f64 = rand::thread_rng().gen_range(0.5..=1.0);
        Duration::try_from_secs_f64(full.as_secs_f64() * factor).unwrap_or(full)
    }
}

/// Runs `fut` unless `cancel` fires first.
pub(crate) async fn cancellable<T>(
    cancel: &CancellationToken,
    fut: impl Future<Output = Result<T, ProviderError>>,
) -> Result<T, ProviderError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ProviderError::Cancelled),
        r = fut => r,
    }
}

/// Runs `attempt` until it succeeds, fails for good, or the retries are used up.
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    sink: SignalSink<'_>,
    cancel: &CancellationToken,
    mut attempt: F,
) -> Result<T, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let mut n = 0u32;
    loop {
        n += 1;
        let err = match cancellable(cancel, attempt()).await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        if !err.is_retryable() || n > policy.max_retries {
            return Err(err);
        }
        let delay = policy.delay(n, &err);
        tracing::debug!(attempt = n, ?delay, error = %err, "retrying model call");
        sink(ChatSignal::Retry {
            attempt: n,
            delay,
            error: err.to_string(),
        });
        cancellable(cancel, async {
            tokio::time::sleep(delay).await;
            Ok(())
        })
        .await?;
    }
}

/// Implements [`reagent_protocol::Provider`] for an HTTP backend with `opts: ClientOptions`,
/// `base: String` and `refusals: Arc<Refusals>` fields, an `attempt(request, sink)` method (one try of a chat call) and a model-info method
/// (one try): retries with backoff for both, cancellation, feature fallback and partial
/// replies for chat. Every backend is the same
/// here, so this is the one place it is written.
macro_rules! retrying_provider {
    ($backend:ty, $name:literal, $model_info:ident) => {
        #[async_trait::async_trait]
        impl reagent_protocol::Provider for $backend {
            fn name(&self) -> &str {
                $name
            }

            async fn model_info(
                &self,
                model: &str,
            ) -> Result<reagent_protocol::ModelInfo, reagent_protocol::ProviderError> {
                let cancel = reagent_protocol::CancellationToken::new();
                $crate::retry::with_retries(
                    &self.opts.retry,
                    $crate::http::null_sink(),
                    &cancel,
                    || self.$model_info(model),
                )
                .await
            }

            async fn chat(
                &self,
                request: &reagent_protocol::ChatRequest,
                sink: reagent_protocol::SignalSink<'_>,
                cancel: &reagent_protocol::CancellationToken,
            ) -> Result<reagent_protocol::ChatResponse, reagent_protocol::ProviderError> {
                // A feature the server refuses is stepped down and the request sent again
                // (`fallback.rs`); the text of a reply that breaks off is kept in the error.
                let partial = $crate::fallback::Partial::default();
                let observing = |signal: reagent_protocol::ChatSignal| {
                    partial.observe(&signal);
                    sink(signal)
                };
                let sink: reagent_protocol::SignalSink<'_> = &observing;
                let mut sent = self.refusals.adapt(request);
                loop {
                    let result =
                        $crate::retry::with_retries(&self.opts.retry, sink, cancel, || {
                            $crate::retry::cancellable(cancel, self.attempt(&sent, sink))
                        })
                        .await;
                    match result {
                        Err(e) if self.refusals.step_down(&e, &sent, &self.base, sink) => {
                            sent = self.refusals.adapt(request);
                        }
                        Err(e) => return Err(partial.keep(e)),
                        Ok(response) => return Ok(response),
                    }
                }
            }
        }
    };
}
pub(crate) use retrying_provider;

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, retry_after: Option<Duration>) -> ProviderError {
        ProviderError::Http {
            url: "u".into(),
            status,
            message: "m".into(),
            retry_after,
        }
    }

    #[test]
    fn delays_grow_and_are_capped() {
        let p = RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        let e = http(503, None);
        let d1 = p.delay(1, &e);
        assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
        let d2 = p.delay(2, &e);
        assert!(d2 >= Duration::from_millis(100) && d2 <= Duration::from_millis(200));
        let d9 = p.delay(9, &e);
        assert!(d9 >= Duration::from_millis(150) && d9 <= Duration::from_millis(300));
        assert_eq!(
            p.delay(1, &http(429, Some(Duration::from_secs(2)))),
            Duration::from_secs(2)
        );
    }

    #[tokio::test]
    async fn retries_only_retryable_errors() {
        let p = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        };
        let signals = std::sync::Mutex::new(Vec::new());
        let sink = |s: ChatSignal| signals.lock().unwrap().push(s);
        let cancel = CancellationToken::new();
        let mut calls = 0;
        let r: Result<(), _> = with_retries(&p, &sink, &cancel, || {
            calls += 1;
            async { Err(http(500, None)) }
        })
        .await;
        assert!(matches!(r, Err(ProviderError::Http { status: 500, .. })));
        assert_eq!(calls, 3);
        assert_eq!(signals.lock().unwrap().len(), 2);

        let mut calls = 0;
        let r: Result<(), _> = with_retries(&p, &sink, &cancel, || {
            calls += 1;
            async { Err(http(400, None)) }
        })
        .await;
        assert!(matches!(r, Err(ProviderError::Http { status: 400, .. })));
        assert_eq!(calls, 1);
    }

    #[tokio::test]
    async fn cancellation_stops_the_wait() {
        let p = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_secs(60),
            max_delay: Duration::from_secs(60),
        };
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            c2.cancel();
        });
        let started = std::time::Instant::now();
        let r: Result<(), _> =
            with_retries(&p, &|_| {}, &cancel, || async { Err(http(503, None)) }).await;
        assert!(matches!(r, Err(ProviderError::Cancelled)));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
