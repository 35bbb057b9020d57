//! A server-sent events parser (the WHATWG `text/event-stream` rules) fed with arbitrary
//! byte pieces: lines end in `\n`, `\r\n` or `\r`; `data:` lines accumulate; a blank line
//! dispatches the event; `:` lines are comments; a field's single leading space is dropped.
//! An event left without its blank line when the stream ends is discarded, as the spec says.

use reagent_protocol::ProviderError;

use crate::http::BodyStream;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, when given.
    pub(crate) event: Option<String>,
    /// The `data:` lines joined by `\n`.
    pub(crate) data: String,
}

/// Incremental parser state.
#[derive(Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    /// The previous piece ended in `\r`: a `\n` at the start of the next one belongs to it.
    skip_lf: bool,
    event: Option<String>,
    data: Vec<String>,
    has_data: bool,
}

impl SseParser {
    /// Feeds bytes; returns the events completed by them.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut bytes = bytes;
        if self.skip_lf && !bytes.is_empty() {
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
            self.skip_lf = false;
        }
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b == b'\n' || b == b'\r' {
                let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
                let mut next = i + 1;
                if b == b'\r' {
                    if next < self.buf.len() {
                        if self.buf[next] == b'\n' {
                            next += 1;
                        }
                    } else {
                        self.skip_lf = true;
                    }
                }
                if let Some(ev) = self.line(&line) {
                    out.push(ev);
                }
                start = next;
                i = next;
            } else {
                i += 1;
            }
        }
        self.buf.drain(..start);
        out
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let event = self.event.take();
            let data = std::mem::take(&mut self.data);
            if !std::mem::take(&mut self.has_data) {
                return None;
            }
            return Some(SseEvent {
                event,
                data: data.join("\n"),
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                self.data.push(value.to_owned());
                self.has_data = true;
            }
            _ => {}
        }
        None
    }
}

/// Reads SSE events from a streamed body, one at a time.
pub(crate) struct SseReader {
    body: BodyStream,
    parser: SseParser,
    pending: std::collections::VecDeque<SseEvent>,
}

impl SseReader {
    /// Wraps a streamed response.
    pub(crate) fn new(
        resp: reqwest::Response,
        url: &str,
        opts: &crate::http::ClientOptions,
    ) -> Self {
        SseReader {
            body: BodyStream::new(resp, url, opts),
            parser: SseParser::default(),
            pending: Default::default(),
        }
    }

    /// The next event, `None` when the stream ended.
    pub(crate) async fn next(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        loop {
            if let Some(ev) = self.pending.pop_front() {
                return Ok(Some(ev));
            }
            match self.body.next().await? {
                None => return Ok(None),
                Some(bytes) => self.pending.extend(self.parser.push(&bytes)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    #[test]
    fn parses_split_and_mixed_line_endings() {
        let mut p = SseParser::default();
        assert!(p.push(b"event: message_start\nda").is_empty());
        assert_eq!(
            p.push(b"ta: {\"a\":1}\n\n: ping comment\r\ndata: x\r"),
            vec![ev(Some("message_start"), "{\"a\":1}")]
        );
        assert_eq!(p.push(b"\n\r\n"), vec![ev(None, "x")]);
        assert_eq!(
            p.push(b"data:one\ndata:  two\n\ndata: [DONE]\n\n"),
            vec![ev(None, "one\n two"), ev(None, "[DONE]")]
        );
        assert_eq!(p.push(b"event: ping\n\n"), vec![], "no data, no event");
        assert_eq!(p.push(b"data: tail-without-blank-line"), vec![]);
    }

    #[test]
    fn an_empty_piece_between_cr_and_lf_changes_nothing() {
        let mut p = SseParser::default();
        assert!(p.push(b"data: a\r").is_empty());
        assert!(p.push(b"").is_empty());
        assert!(p.push(b"\ndata: b\n").is_empty());
        assert_eq!(p.push(b"\n"), vec![ev(None, "a\nb")]);
    }

    #[test]
    fn byte_at_a_time_gives_the_same_events() {
        let input = b"event: e\r\ndata: {\"k\": \"v\"}\r\n\r\ndata: 2\r\rdata: 3\n\n";
        let mut whole = SseParser::default();
        let want = whole.push(input);
        let mut p = SseParser::default();
        let got: Vec<SseEvent> = input.iter().flat_map(|b| p.push(&[*b])).collect();
        assert_eq!(got, want);
        assert_eq!(want.len(), 3);
    }
}
