//! Stop markers and leftover wrapper tokens taken out of the content once a turn is parsed.

/// Tokens that never belong in content.
const STRIP_TOKENS: &[&str] = &[
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
    "<|end▁of▁sentence|>",
    "<｜end▁of▁sentence｜>",
    "<|role_end|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|CHATBOT_TOKEN|>",
    "<|eot|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|eom|>",
    "<|endoftext|>",
    "<|eos|>",
    "<|end_of_text|>",
    "<|end|>",
    "<|user|>",
    "<|assistant|>",
    "<|tool_calls_section_end|>",
    "<|close|>message<|sep|>",
    // DeepSeek's markers around a tool's output quoted in the answer (its text stays).
    "<｜tool▁output▁begin｜>",
    "<｜tool▁output▁end｜>",
];

/// Stop markers without the `<|` shape, stripped when they end the content (Gemma 3's and
/// Gemma 4's ends of turn among them).
const TRAILING_STOP_TOKENS: &[&str] = &[
    "<seed:eos>",
    "</s>",
    "<end_of_turn>",
    "<turn|>",
    "<eos>",
    // A Gemma 4 channel closer left after the answer, with no channel open.
    "<channel|>",
];

/// A chat template's header of the assistant's turn, which a raw generation may repeat at
/// its very start (ChatML, Llama 3, Gemma).
const LEADING_ROLE_HEADERS: &[&str] = &[
    "<|im_start|>assistant",
    "<|start_header_id|>assistant<|end_header_id|>",
    "<start_of_turn>model",
];

/// A role label a system prompt tells the model to open its reply with (Hunyuan's agent
/// prompt asks for `助手：`, "Assistant:"), taken off the very start of the content.
const LEADING_ROLE_LABELS: &[&str] = &["助手：", "助手:"];

/// Tokens that are noise, not text, once calls were found: closing tags of call wrappers
/// left over in the content (the opener was missing, or the closer was written twice:
/// Gemma 4's `…<tool_call|><tool_call|>`), and the tool-response opener a model writes
/// after its call, where the server would have answered (Gemma 4's `<|tool_response>`;
/// the text after it is kept).
const AFTER_CALL_NOISE: &[&str] = &[
    "</tool_call>",
    "<tool_call|>",
    "<|tool_response>",
    "</longcat_tool_call>",
    "</seed:tool_call>",
    "</minimax:tool_call>",
    "[END_TOOL_REQUEST]",
    "<|tool_call_end|>",
];

/// `content` without the wrapper tags left empty where tool-tag calls were taken out of them
/// (gptme's `<tool-use>…</tool-use>`, SkyRL's `<tool>…</tool>`): a `<NAME>` with only
/// whitespace before its `</NAME>`, nested ones too.
pub(crate) fn drop_emptied_wrappers(mut content: String) -> String {
    // Each pass takes out the innermost empty pairs; wrappers nest a level or two.
    for _ in 0..4 {
        let mut out = String::with_capacity(content.len());
        let mut rest = content.as_str();
        while let Some(lt) = rest.find('<') {
            out.push_str(&rest[..lt]);
            let at = &rest[lt..];
            match empty_pair_len(at) {
                Some(n) => rest = &at[n..],
                None => {
                    out.push('<');
                    rest = &at[1..];
                }
            }
        }
        out.push_str(rest);
        if out.len() == content.len() {
            break;
        }
        content = out;
    }
    content
}

/// The length of `<NAME>` + whitespace + `</NAME>` at the start of `t`.
fn empty_pair_len(t: &str) -> Option<usize> {
    let name_len = t[1..]
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b':'))
        .count();
    let name = &t[1..1 + name_len];
    let after = t[1 + name_len..].strip_prefix('>')?;
    let body = after.len() - after.trim_start().len();
    let close = after[body..]
        .strip_prefix("</")?
        .strip_prefix(name)?
        .strip_prefix('>')?;
    (name_len > 0).then(|| t.len() - close.len())
}

/// Whether [`strip`] may take anything out of `t` (calls aside): a cheap check that spares
/// a copy of the text.
pub(crate) fn may_hold_one(t: &str) -> bool {
    let end = t.trim_end();
    t.contains("<|")
        || t.contains("<｜")
        || TRAILING_STOP_TOKENS.iter().any(|tok| end.ends_with(tok))
        || LEADING_ROLE_HEADERS
            .iter()
            .chain(LEADING_ROLE_LABELS)
            .any(|h| t.trim_start().starts_with(h))
}

/// `content` without the tokens that never belong in it: the assistant's turn header at its
/// start, control tokens anywhere, stop markers at its end and, once calls were found
/// (`calls_found`), orphan wrapper closers and tool-response openers.
pub(crate) fn strip(mut content: String, calls_found: bool) -> String {
    let start = content.len() - content.trim_start().len();
    let header = LEADING_ROLE_HEADERS
        .iter()
        .find(|h| content[start..].starts_with(*h))
        .filter(|h| {
            let after = &content[start + h.len()..];
            after.is_empty() || after.starts_with(['\n', '\r'])
        });
    if let Some(h) = header {
        let after = &content[start + h.len()..];
        content = after.trim_start_matches(['\r', '\n']).to_string();
    } else if let Some(label) = LEADING_ROLE_LABELS
        .iter()
        .find(|l| content[start..].starts_with(*l))
    {
        content = content[start + label.len()..].trim_start().to_string();
    }
    if content.contains("<|") || content.contains("<｜") {
        for tok in STRIP_TOKENS {
            if content.contains(tok) {
                content = content.replace(tok, "");
            }
        }
    }
    // Several may end the text, in any order (Gemma 4's `<turn|><eos>`, `<eos> <turn|>`).
    while let Some(tok) = TRAILING_STOP_TOKENS.iter().find(|tok| {
        // `</s>` closing an HTML `<s>` strike-through is text, not the stop marker.
        content.trim_end().ends_with(**tok) && !(**tok == "</s>" && content.contains("<s>"))
    }) {
        // The marker goes with the layout before it.
        let kept = content.trim_end().len() - tok.len();
        let kept = content[..kept].trim_end().len();
        content.truncate(kept);
    }
    if calls_found {
        for tok in AFTER_CALL_NOISE {
            if content.contains(tok) {
                content = content.replace(tok, "");
            }
        }
    }
    content
}

/// An answer wrapped whole in `<response>…</response>` (ERNIE 4.5 after its thinking,
/// Granite 3) is the text inside; a wrapper around only part of the content is text. So is
/// one in `<answer>…</answer>` (Hunyuan-A13B after its thinking), whose closer a stream cut
/// off or stopped before may lack.
pub(crate) fn unwrap_response(content: String) -> String {
    let t = content.trim();
    let inner = match t.strip_prefix("<answer>") {
        Some(r) => {
            Some(r.strip_suffix("</answer>").unwrap_or(r)).filter(|i| !i.contains("<answer>"))
        }
        None => t
            .strip_prefix("<response>")
            .and_then(|r| r.strip_suffix("</response>"))
            .filter(|i| !i.contains("<response>")),
    };
    match inner {
        Some(inner) => inner.trim().to_string(),
        None => content,
    }
}

#[cfg(test)]
mod tests {
    use super::drop_emptied_wrappers;

    #[test]
    fn emptied_wrappers_go_and_others_stay() {
        let cut = |t: &str| drop_emptied_wrappers(t.to_owned());
        assert_eq!(cut("a <tool>\n\n</tool> b"), "a  b");
        assert_eq!(cut("<outer> <tool-use></tool-use> </outer>x"), "x");
        assert_eq!(cut("<b>kept</b> <i></b>"), "<b>kept</b> <i></b>");
        assert_eq!(cut("x < y and <>"), "x < y and <>");
    }
}
