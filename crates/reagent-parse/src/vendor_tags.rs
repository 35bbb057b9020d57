//! Vendor spellings of known tags, read past before a second look at a turn: MiniMax M3's
//! noise before each tag, K2-V3's namespace (`<ifm|tool_call>`) and HY4's checkpoint suffix
//! (`<tool_call:opensource>`) on GLM's tags.

/// The noise MiniMax M3 writes before each of its tags.
pub(crate) const MINIMAX_NOISE: &str = "]<]minimax[>[";

/// The checkpoint suffix at the start of `after` (the text after a tag name's colon, as in
/// `<tool_call:opensource>`), up to the tag's `>`: any short text with no space or tag
/// delimiter in it (the closers repeat it).
pub(crate) fn checkpoint_suffix(after: &str) -> Option<&str> {
    let suffix = &after[..after.find('>')?];
    let valid = !suffix.is_empty()
        && suffix.len() <= 32
        && !suffix.contains(|c: char| c.is_whitespace() || c == '<');
    valid.then_some(suffix)
}

/// The GLM tags of `t` without the namespace K2-V3 puts them under (`<ifm|tool_call>`,
/// `<ifm|arg_key>`, `</ifm|arg_value>`, …) or the checkpoint suffix HY4 writes into them
/// (`<tool_call:opensource>`). `None` when there is neither.
pub(crate) fn without_namespace(t: &str) -> Option<String> {
    // From the first tag on (a byte search): prose with no tag is not searched twice.
    let first_tag = t.find('<')?;
    let rest = &t[first_tag..];
    let word = |s: &str| {
        !s.is_empty() && s.len() <= 16 && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    };
    const TAGS: [&str; 5] = [
        "tool_calls",
        "tool_call",
        "arg_key",
        "arg_value",
        "arg_type",
    ];
    let mut plain = t.to_string();
    if let Some(bar) = rest.find("|tool_call") {
        let lt = rest[..bar].rfind('<')?;
        let ns = rest[lt + 1..bar].trim_start_matches('/');
        if !word(ns) {
            return None;
        }
        for tag in TAGS {
            plain = plain
                .replace(&format!("<{ns}|{tag}"), &format!("<{tag}"))
                .replace(&format!("</{ns}|{tag}"), &format!("</{tag}"));
        }
        return Some(plain);
    }
    let colon = rest
        .find("<tool_call:")
        .or_else(|| rest.find("<tool_calls:"))?;
    let after = &rest[colon + 1..];
    let suffix = checkpoint_suffix(&after[after.find(':')? + 1..])?;
    // The whole tag is matched here, so HY's separator and think tags come along.
    for tag in TAGS.iter().chain(&["tool_sep", "think"]) {
        plain = plain
            .replace(&format!("<{tag}:{suffix}>"), &format!("<{tag}>"))
            .replace(&format!("</{tag}:{suffix}>"), &format!("</{tag}>"));
    }
    Some(plain)
}
