//! [`WireCache`]: the encoded form of a run's messages and tools, kept from one request to the
//! next so that a provider encodes each message once per run instead of once per request, and
//! the buffer of the last request body, reused for the next one.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use bytes::Bytes;

use crate::message::{Message, ToolSpec};

/// Encoded wire forms of a run's messages and tool list, reused across its requests.
///
/// Every request of a run carries the whole history, and the history is append-only between
/// compactions, so almost every message of a request was already encoded for the previous one.
/// Messages are shared (`Arc<Message>`) between the history and its requests, so a provider can
/// recognise a message it has encoded by identity (the `Arc` pointer) without comparing text.
///
/// Exactness: an entry holds its `Arc`, so the address cannot be reused by another message
/// while cached, and a message changed with [`Arc::make_mut`] while cached is copied to a new
/// address first, which is a miss. Entries for messages a request no longer carries are dropped
/// when that request is encoded. Clones share the cache; a request built without one
/// ([`Default`]) just encodes everything.
///
/// The cache also lends out the buffer a body is written into ([`WireCache::body_buffer`]) and
/// gets it back when the HTTP client drops the sent body ([`WireCache::finish_body`]): a long
/// run's body is hundreds of KB, and a fresh allocation of that size is fresh pages from the
/// kernel on every request.
#[derive(Clone, Default)]
pub struct WireCache {
    inner: Arc<Mutex<Shared>>,
}

#[derive(Default)]
struct Shared {
    formats: Vec<FormatEntries>,
    /// The buffer of the last body, back from the HTTP client.
    spare: Option<Vec<u8>>,
}

/// What is cached for one wire format (`"ollama"`, `"openai"`...).
struct FormatEntries {
    format: &'static str,
    /// Keyed by the `Arc<Message>` address.
    messages: HashMap<usize, Encoded<Message>>,
    tools: Option<Encoded<[ToolSpec]>>,
}

/// A value (held, so its address stays its own) and its encoding.
type Encoded<T> = (Arc<T>, Box<[u8]>);

impl WireCache {
    /// A new, empty cache (same as `WireCache::default()`).
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // The cache holds no invariant a panicking encoder could break: keep using it.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends the encodings of `messages` to `out`, separated by commas. Messages already
    /// encoded in `format` by an earlier call are copied, not encoded again; the others are
    /// encoded with `encode` and remembered. Messages not in `messages` are forgotten.
    pub fn write_messages(
        &self,
        format: &'static str,
        messages: &[Arc<Message>],
        encode: impl Fn(&Message) -> Vec<u8>,
        out: &mut Vec<u8>,
    ) {
        let mut shared = self.lock();
        let entries = entries_for(&mut shared.formats, format);
        let mut previous = std::mem::take(&mut entries.messages);
        entries.messages.reserve(messages.len());
        for (i, message) in messages.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let key = Arc::as_ptr(message) as usize;
            let (kept, bytes) = match previous.remove(&key) {
                Some(entry) => entry,
                None => (Arc::clone(message), encode(message).into_boxed_slice()),
            };
            out.extend_from_slice(&bytes);
            entries.messages.insert(key, (kept, bytes));
        }
    }

    /// Appends the encoding of `tools` to `out`: the one remembered for this very tool list
    /// (same `Arc`) in `format`, or a new one made by `encode`.
    pub fn write_tools(
        &self,
        format: &'static str,
        tools: &Arc<[ToolSpec]>,
        encode: impl FnOnce(&[ToolSpec]) -> Vec<u8>,
        out: &mut Vec<u8>,
    ) {
        let mut shared = self.lock();
        let entries = entries_for(&mut shared.formats, format);
        match &entries.tools {
            Some((cached, bytes)) if Arc::ptr_eq(cached, tools) => out.extend_from_slice(bytes),
            _ => {
                let bytes = encode(tools).into_boxed_slice();
                out.extend_from_slice(&bytes);
                entries.tools = Some((Arc::clone(tools), bytes));
            }
        }
    }

    /// Number of messages currently cached, over all formats.
    pub fn cached_messages(&self) -> usize {
        self.lock().formats.iter().map(|f| f.messages.len()).sum()
    }

    /// An empty buffer to write the next body into: the last body's, when it is back.
    pub fn body_buffer(&self) -> Vec<u8> {
        let mut buffer = self.lock().spare.take().unwrap_or_default();
        buffer.clear();
        buffer
    }

    /// `body` as [`Bytes`] for the HTTP client; its buffer returns to this cache when the
    /// client drops it.
    pub fn finish_body(&self, body: Vec<u8>) -> Bytes {
        Bytes::from_owner(Lent {
            buffer: body,
            home: Arc::downgrade(&self.inner),
        })
    }
}

/// A body buffer on loan to the HTTP client.
struct Lent {
    buffer: Vec<u8>,
    home: Weak<Mutex<Shared>>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.buffer
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // `try_lock`: never wait in a destructor; a busy cache just loses this buffer.
        if let Some(home) = self.home.upgrade() {
            if let Ok(mut shared) = home.try_lock() {
                shared.spare = Some(std::mem::take(&mut self.buffer));
            }
        }
    }
}

fn entries_for<'a>(
    formats: &'a mut Vec<FormatEntries>,
    format: &'static str,
) -> &'a mut FormatEntries {
    let at = match formats.iter().position(|f| f.format == format) {
        Some(at) => at,
        None => {
            formats.push(FormatEntries {
                format,
                messages: HashMap::new(),
                tools: None,
            });
            formats.len() - 1
        }
    };
    &mut formats[at]
}

impl fmt::Debug for WireCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WireCache")
            .field("cached_messages", &self.cached_messages())
            .finish()
    }
}

/// The cache is an optimisation, not part of a request's meaning: any two compare equal.
impl PartialEq for WireCache {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode_counting(counter: &std::cell::Cell<usize>) -> impl Fn(&Message) -> Vec<u8> + '_ {
        move |m| {
            counter.set(counter.get() + 1);
            format!("\"{}\"", m.content).into_bytes()
        }
    }

    #[test]
    fn messages_are_encoded_once_and_changes_are_seen() {
        let cache = WireCache::new();
        let count = std::cell::Cell::new(0);
        let mut history = vec![Arc::new(Message::user("a")), Arc::new(Message::user("b"))];
        let mut out = Vec::new();
        cache.write_messages("t", &history, encode_counting(&count), &mut out);
        assert_eq!(out, b"\"a\",\"b\"");
        assert_eq!(count.get(), 2);

        history.push(Arc::new(Message::user("c")));
        out.clear();
        cache.write_messages("t", &history, encode_counting(&count), &mut out);
        assert_eq!(out, b"\"a\",\"b\",\"c\"");
        assert_eq!(count.get(), 3, "only the new message is encoded");

        // Changing a cached message copies it (the cache holds a reference): a miss.
        Arc::make_mut(&mut history[1]).content = "B".into();
        out.clear();
        cache.write_messages("t", &history, encode_counting(&count), &mut out);
        assert_eq!(out, b"\"a\",\"B\",\"c\"");
        assert_eq!(count.get(), 4);

        // Dropped messages are forgotten; another format has its own entries.
        history.remove(0);
        out.clear();
        cache.write_messages("t", &history, encode_counting(&count), &mut out);
        assert_eq!(out, b"\"B\",\"c\"");
        assert_eq!(cache.cached_messages(), 2);
        out.clear();
        cache.write_messages("u", &history, encode_counting(&count), &mut out);
        assert_eq!(count.get(), 6);
        assert_eq!(cache.cached_messages(), 4);
    }

    #[test]
    fn a_sent_body_lends_its_buffer_to_the_next() {
        let cache = WireCache::new();
        let mut body = cache.body_buffer();
        body.extend_from_slice(b"{\"a\":1}");
        let address = body.as_ptr();
        let sent = cache.finish_body(body);
        assert_eq!(&sent[..], b"{\"a\":1}");
        assert!(cache.body_buffer().is_empty(), "still lent: a new buffer");
        drop(sent);
        let again = cache.body_buffer();
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), address, "the sent body's buffer came back");
    }

    #[test]
    fn tools_are_encoded_once_per_list() {
        let cache = WireCache::new();
        let spec = ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters: serde_json::json!({}),
        };
        let tools: Arc<[ToolSpec]> = Arc::from(vec![spec.clone()]);
        let count = std::cell::Cell::new(0);
        let encode = |t: &[ToolSpec]| {
            count.set(count.get() + 1);
            t.len().to_string().into_bytes()
        };
        let mut out = Vec::new();
        cache.write_tools("t", &tools, encode, &mut out);
        cache.write_tools("t", &Arc::clone(&tools), encode, &mut out);
        assert_eq!(out, b"11");
        assert_eq!(count.get(), 1);
        let other: Arc<[ToolSpec]> = Arc::from(vec![spec.clone(), spec]);
        cache.write_tools("t", &other, encode, &mut out);
        assert_eq!(out, b"112");
        assert_eq!(count.get(), 2);
    }
}
