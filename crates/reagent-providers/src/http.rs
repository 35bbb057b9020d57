//! HTTP plumbing shared by every backend: client options, sending with a timeout, turning
//! transport failures and HTTP error bodies into [`ProviderError`]s, and reading a streamed body
//! chunk by chunk with an idle timeout.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use reagent_protocol::{ChatSignal, ProviderError};
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::retry::RetryPolicy;

/// Options shared by every backend's HTTP client.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Per-call timeout. Non-streaming: the whole exchange. Streaming: the wait for the
    /// response headers and then for each next piece of the body (an idle timeout), so a long
    /// but live generation is not cut off.
    pub timeout: Duration,
    /// Retries on connection errors, timeouts, 429 and 5xx.
    pub retry: RetryPolicy,
    /// The largest reply body accepted, in bytes ([`DEFAULT_MAX_REPLY_BYTES`] by default): a
    /// reply that grows past it ends the call with [`ProviderError::ReplyTooLarge`] instead of
    /// growing the agent's memory without bound.
    pub max_reply_bytes: usize,
}

/// The default cap on a reply's size: 8 MiB, hundreds of times a long real reply.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 8 << 20;

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
        }
    }
}

/// A sink that drops every signal (for calls without one, such as `model_info`).
pub(crate) fn null_sink() -> &'static (dyn Fn(ChatSignal) + Send + Sync) {
    &|_| {}
}

/// Builds the shared reqwest client.
pub(crate) fn client() -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ProviderError::Config(format!("cannot build the HTTP client: {e}")))
}

/// Strips trailing slashes and checks the URL has an http(s) scheme.
pub(crate) fn clean_base_url(url: &str) -> Result<String, ProviderError> {
    let url = url.trim().trim_end_matches('/');
    let valid = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .is_some_and(|rest| !rest.is_empty());
    if valid {
        Ok(url.to_owned())
    } else {
        Err(ProviderError::Config(format!(
            "base URL '{url}' must start with http:// or https://"
        )))
    }
}

/// `base` + `path` parsed once, when the provider is built, so a request does not parse its URL
/// again.
pub(crate) fn endpoint(base: &str, path: &str) -> Result<reqwest::Url, ProviderError> {
    let url = format!("{base}{path}");
    reqwest::Url::parse(&url)
        .map_err(|e| ProviderError::Config(format!("base URL '{base}' is not a valid URL: {e}")))
}

/// The full text of an error and its sources.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        src = s.source();
    }
    out
}

/// Sends `req`, waiting at most `timeout` for the response headers.
pub(crate) async fn send(
    req: reqwest::RequestBuilder,
    url: &str,
    timeout: Duration,
    hint: &str,
) -> Result<reqwest::Response, ProviderError> {
    match tokio::time::timeout(timeout, req.send()).await {
        Err(_) => Err(ProviderError::Timeout {
            url: url.to_owned(),
            after: timeout,
        }),
        Ok(Err(e)) if e.is_builder() => Err(ProviderError::Config(format!(
            "bad request to {url}: {}",
            error_chain(&e)
        ))),
        Ok(Err(e)) => Err(ProviderError::Unreachable {
            url: url.to_owned(),
            detail: error_chain(&e),
            hint: hint.to_owned(),
        }),
        Ok(Ok(resp)) => Ok(resp),
    }
}

/// Parses `Retry-After` given in seconds (the HTTP-date form is ignored).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    let secs: f64 = v.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(3600.0)))
}

/// The server's own message from an error body: `{"error": "..."}`,
/// `{"error": {"message": "..."}}`, or the text itself (shortened).
pub(crate) fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let err = v.get("error")?;
        match err {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o.get("message").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        }
    });
    match from_json {
        Some(m) => m,
        None => {
            let text = body.trim();
            if text.is_empty() {
                "(empty body)".to_owned()
            } else {
                text.chars().take(500).collect()
            }
        }
    }
}

/// [`send`], and any status other than 2xx becomes [`http_error`].
pub(crate) async fn send_ok(
    req: reqwest::RequestBuilder,
    url: &str,
    timeout: Duration,
    hint: &str,
) -> Result<reqwest::Response, ProviderError> {
    let resp = send(req, url, timeout, hint).await?;
    if resp.status().is_success() {
        Ok(resp)
    } else {
        Err(http_error(url, resp).await)
    }
}

/// Reads an unsuccessful response into [`ProviderError::Http`].
pub(crate) async fn http_error(url: &str, resp: reqwest::Response) -> ProviderError {
    let status = resp.status().as_u16();
    let retry_after = retry_after(resp.headers());
    let body = resp.text().await.unwrap_or_default();
    ProviderError::Http {
        url: url.to_owned(),
        status,
        message: error_message(&body),
        retry_after,
    }
}

/// An `f32` option (temperature) as the JSON number it was written as: `0.7`, not
/// `0.699999988079071`.
pub(crate) fn f32_json(x: f32) -> Value {
    let shortest: f64 = x.to_string().parse().unwrap_or(f64::from(x));
    serde_json::Number::from_f64(shortest).map_or(Value::Null, Value::Number)
}

/// Sorts out an HTTP 404: when the server's message is about the model it becomes
/// [`ProviderError::ModelNotFound`] with `model_hint`; otherwise the path was wrong, and
/// `url_hint` (what the base URL should look like) is added to the message.
pub(crate) fn classify_404(
    err: ProviderError,
    model: &str,
    base: &str,
    model_hint: impl FnOnce(&str) -> String,
    url_hint: &str,
) -> ProviderError {
    match err {
        ProviderError::Http {
            status: 404,
            message,
            url,
            retry_after,
        } => {
            if message.to_ascii_lowercase().contains("model") {
                ProviderError::ModelNotFound {
                    model: model.to_owned(),
                    url: base.to_owned(),
                    hint: model_hint(&message),
                }
            } else {
                ProviderError::Http {
                    url,
                    status: 404,
                    message: format!("{message} ({url_hint})"),
                    retry_after,
                }
            }
        }
        other => other,
    }
}

/// The error for a body that broke off.
pub(crate) fn cut_error(url: &str, e: &reqwest::Error) -> ProviderError {
    ProviderError::Protocol {
        url: url.to_owned(),
        detail: format!(
            "the connection closed before the reply was complete ({})",
            error_chain(e)
        ),
    }
}

/// The error for a reply past the cap.
fn too_large(url: &str, limit: usize) -> ProviderError {
    ProviderError::ReplyTooLarge {
        url: url.to_owned(),
        limit,
    }
}

/// The whole body of a non-streamed reply, within what is left of the timeout since `started`
/// and within the cap on a reply's size.
pub(crate) async fn read_body(
    resp: reqwest::Response,
    url: &str,
    opts: &ClientOptions,
    started: Instant,
) -> Result<Bytes, ProviderError> {
    let limit = opts.max_reply_bytes;
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large(url, limit));
    }
    let left = opts.timeout.saturating_sub(started.elapsed());
    let mut body = BodyStream::new(resp, url, opts);
    let read = async {
        // Most bodies come in one piece: that piece is the body, without a copy.
        let Some(first) = body.next().await? else {
            return Ok(Bytes::new());
        };
        let Some(second) = body.next().await? else {
            return Ok(first);
        };
        let mut all = Vec::with_capacity(first.len() + second.len());
        all.extend_from_slice(&first);
        all.extend_from_slice(&second);
        while let Some(piece) = body.next().await? {
            all.extend_from_slice(&piece);
        }
        Ok(Bytes::from(all))
    };
    match tokio::time::timeout(left, read).await {
        Err(_) => Err(ProviderError::Timeout {
            url: url.to_owned(),
            after: opts.timeout,
        }),
        Ok(result) => result,
    }
}

/// A reply body as JSON; an invalid one is a protocol error quoting its start.
pub(crate) fn parse_json(bytes: &[u8], url: &str) -> Result<Value, ProviderError> {
    serde_json::from_slice(bytes).map_err(|e| ProviderError::Protocol {
        url: url.to_owned(),
        detail: format!(
            "the reply is not valid JSON ({e}): {}",
            String::from_utf8_lossy(bytes)
                .chars()
                .take(200)
                .collect::<String>()
        ),
    })
}

/// [`read_body`] then [`parse_json`].
pub(crate) async fn read_json(
    resp: reqwest::Response,
    url: &str,
    opts: &ClientOptions,
    started: Instant,
) -> Result<Value, ProviderError> {
    let bytes = read_body(resp, url, opts, started).await?;
    parse_json(&bytes, url)
}

/// A streamed body read piece by piece, each piece within the idle timeout, all of it within
/// the cap on a reply's size.
pub(crate) struct BodyStream {
    inner: BoxStream<'static, reqwest::Result<Bytes>>,
    url: String,
    timeout: Duration,
    limit: usize,
    /// Bytes still allowed under the cap.
    left: usize,
}

impl BodyStream {
    /// Wraps a response's body.
    pub(crate) fn new(resp: reqwest::Response, url: &str, opts: &ClientOptions) -> Self {
        BodyStream {
            inner: resp.bytes_stream().boxed(),
            url: url.to_owned(),
            timeout: opts.timeout,
            limit: opts.max_reply_bytes,
            left: opts.max_reply_bytes,
        }
    }

    /// The next piece, `None` at a clean end.
    pub(crate) async fn next(&mut self) -> Result<Option<Bytes>, ProviderError> {
        match tokio::time::timeout(self.timeout, self.inner.next()).await {
            Err(_) => Err(ProviderError::Timeout {
                url: self.url.clone(),
                after: self.timeout,
            }),
            Ok(None) => Ok(None),
            Ok(Some(Err(e))) => Err(cut_error(&self.url, &e)),
            Ok(Some(Ok(b))) => match self.left.checked_sub(b.len()) {
                Some(left) => {
                    self.left = left;
                    Ok(Some(b))
                }
                None => Err(too_large(&self.url, self.limit)),
            },
        }
    }
}

/// Splits a byte stream into lines (for NDJSON), handling pieces that end mid-line.
#[derive(Default)]
pub(crate) struct LineBuffer {
    buf: Vec<u8>,
}

impl LineBuffer {
    /// Feeds bytes; returns the complete lines (without `\n` / `\r\n`).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(bytes);
        let mut lines = Vec::new();
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let rest = self.buf.split_off(pos + 1);
            let mut line = std::mem::replace(&mut self.buf, rest);
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            lines.push(String::from_utf8_lossy(&line).into_owned());
        }
        lines
    }

    /// What is left after the stream ended (a last line without `\n`).
    pub(crate) fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.buf);
        let s = String::from_utf8_lossy(&rest).trim().to_owned();
        (!s.is_empty()).then_some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_buffer_joins_split_lines() {
        let mut b = LineBuffer::default();
        assert_eq!(b.push(b"{\"a\":"), Vec::<String>::new());
        assert_eq!(b.push(b"1}\r\n{\"b\""), vec!["{\"a\":1}".to_owned()]);
        assert_eq!(
            b.push(b":2}\n\n"),
            vec!["{\"b\":2}".to_owned(), String::new()]
        );
        assert_eq!(b.finish(), None);
        b.push(b"tail");
        assert_eq!(b.finish(), Some("tail".to_owned()));
    }

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            error_message(r#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(
            error_message(r#"{"error":{"message":"bad tool","type":"invalid_request_error"}}"#),
            "bad tool"
        );
        assert_eq!(error_message("  plain text "), "plain text");
        assert_eq!(error_message(""), "(empty body)");
    }

    #[test]
    fn temperatures_keep_their_written_form() {
        assert_eq!(f32_json(0.7).to_string(), "0.7");
        assert_eq!(f32_json(0.0).to_string(), "0.0");
        assert_eq!(f32_json(f32::NAN), Value::Null);
    }

    #[test]
    fn base_urls_are_checked_and_trimmed() {
        assert_eq!(
            clean_base_url("http://h:1/v1/").ok(),
            Some("http://h:1/v1".to_owned())
        );
        assert!(clean_base_url("h:1").is_err());
        assert!(clean_base_url("http://").is_err());
    }
}
