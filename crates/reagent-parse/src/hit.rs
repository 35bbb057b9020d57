//! [`Hit`]: one recognised call region, as every format reader returns it to the engine.

use serde_json::Value;

use crate::{Family, ParsedCall};

/// One recognised call region.
#[derive(Debug, Default)]
pub(crate) struct Hit {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) calls: Vec<ParsedCall>,
    pub(crate) family: Option<Family>,
    pub(crate) truncated: bool,
    pub(crate) errors: Vec<String>,
    /// Content carried inside the region (for example `{"response": "..."}`).
    pub(crate) content: Option<String>,
    /// Found by the general fallback (bare JSON or an unknown wrapper), not a family.
    pub(crate) fallback: bool,
    /// The region is written in the model's control tokens (Kimi's `<|tool_call_begin|>`…):
    /// when it holds no valid call it is reported, never kept as the model's text.
    pub(crate) control_tokens: bool,
}

impl Hit {
    pub(crate) fn new(start: usize, end: usize, family: Family, calls: Vec<ParsedCall>) -> Hit {
        Hit {
            start,
            end,
            calls,
            family: Some(family),
            ..Hit::default()
        }
    }

    /// A hit holding one call with no id.
    pub(crate) fn one_call(
        start: usize,
        end: usize,
        family: Family,
        name: &str,
        arguments: Value,
    ) -> Hit {
        let call = ParsedCall {
            name: name.to_string(),
            arguments,
            id: None,
        };
        Hit::new(start, end, family, vec![call])
    }

    /// A call cut off at end of input: swallow the rest, no call.
    pub(crate) fn truncated(start: usize, len: usize, family: Family) -> Hit {
        Hit {
            start,
            end: len,
            family: Some(family),
            truncated: true,
            errors: vec!["tool call cut off before it was complete".to_string()],
            ..Hit::default()
        }
    }

    /// A list of calls cut off at end of input: the calls completed before the cut are
    /// kept, the cut one is not guessed.
    pub(crate) fn cut_after(
        start: usize,
        len: usize,
        family: Family,
        calls: Vec<ParsedCall>,
    ) -> Hit {
        Hit {
            calls,
            ..Hit::truncated(start, len, family)
        }
    }
}
