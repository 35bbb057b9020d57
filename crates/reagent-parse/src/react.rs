//! Prompt-based agent formats: ReAct text (`Action:` / `Action Input:` / `Final Answer:`),
//! ReAct JSON blobs (`{"action", "action_input"}`) and the LangChain XML agent
//! (`<tool>` / `<tool_input>` / `<final_answer>`). A single string input becomes
//! `{"input": <string>}`; an input that is a JSON object is used as the arguments.

use serde_json::{json, Value};

use crate::engine::non_empty;
use crate::engine::Ctx;
use crate::json_at::{json_at, JsonAt};
use crate::scan::{line_starting, unescape_xml};
use crate::{Family, Parsed, ParsedCall};

/// Parse `t` as an agent transcript; `None` when it has no agent markers.
pub(crate) fn parse(t: &str, ctx: &Ctx) -> Option<Parsed> {
    let parsed = parse_transcript(t, ctx)?;
    // A stop marker glued to the end (`…}</s>`) is not part of the last input or answer:
    // a transcript is read again without it (only then, so prose pays no extra pass).
    if crate::stop_tokens::may_hold_one(t) {
        return parse_transcript(&crate::stop_tokens::strip(t.to_string(), false), ctx);
    }
    Some(parsed)
}

fn parse_transcript(t: &str, ctx: &Ctx) -> Option<Parsed> {
    let hint = ctx.hint();
    if hint.is_none() || hint == Some(Family::XmlAgent) {
        if let Some(p) = xml_agent(t) {
            return Some(p);
        }
    }
    ctx.memo.borrow_mut().reset();
    if let Some(p) = react_json(t, ctx) {
        return Some(p);
    }
    react_text(t)
}

fn args_for(input: &str) -> Value {
    match object_input(input) {
        Some(v) => v,
        None => json!({ "input": unquoted(input) }),
    }
}

/// The JSON object an input gives: at its start, also after emphasis (`** {…}`) or as a
/// constructor's argument (`QueryEngineTool({…})`), with any text after it left out;
/// Python literals, `/* … */` comments and closing braces missing at the end are read
/// leniently.
fn object_input(input: &str) -> Option<Value> {
    let s = input.trim_start().trim_start_matches(['*', '`', ' ']);
    let s = match s.find('(') {
        Some(p)
            if p > 0
                && s[..p].chars().all(|c| c.is_alphanumeric() || c == '_')
                && s[p + 1..].trim_start().starts_with('{') =>
        {
            s[p + 1..].trim_start()
        }
        _ => s,
    };
    if !s.starts_with('{') {
        return None;
    }
    let s = without_block_comments(s);
    let text = match crate::scan::container_end(s.as_bytes(), 0, crate::scan::Quoting::PYTHON) {
        crate::scan::End::Complete(e) => s[..e].to_string(),
        // Closers missing at the very end (`{"query": "SF"`).
        crate::scan::End::Incomplete => {
            let open = s
                .matches('{')
                .count()
                .saturating_sub(s.matches('}').count());
            format!("{s}{}", "}".repeat(open.clamp(1, 8)))
        }
        crate::scan::End::Invalid => return None,
    };
    crate::scan::parse_json_lenient(&text).filter(Value::is_object)
}

/// `s` without `/* … */` comments outside strings (a model annotating its JSON).
fn without_block_comments(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains("/*") {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut quote: Option<char> = None;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == '\\' {
                    if let Some((_, next)) = chars.next() {
                        out.push(next);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '/' && s[i..].starts_with("/*") => {
                let Some(close) = s[i + 2..].find("*/") else {
                    out.push_str(&s[i..]);
                    break;
                };
                let resume = i + 2 + close + 2;
                while chars.peek().is_some_and(|&(j, _)| j < resume) {
                    chars.next();
                }
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A string input without the double quotes around it (`"temperature in SF"`), or the one
/// that opens it when its closer was lost; quotes inside are kept.
fn unquoted(input: &str) -> &str {
    match input.strip_prefix('"') {
        Some(inner) => inner.strip_suffix('"').unwrap_or(inner),
        None => input,
    }
}

fn call(name: &str, input: &str, fam: Family) -> Parsed {
    Parsed {
        calls: vec![ParsedCall {
            name: name.to_string(),
            arguments: args_for(input),
            id: None,
        }],
        format: Some(fam),
        ..Parsed::default()
    }
}

fn error(msg: &str) -> Parsed {
    Parsed {
        errors: vec![msg.to_string()],
        ..Parsed::default()
    }
}

/// Find `word\s*\d*\s*:` from `from`; returns (start, end after the colon).
fn keyword(t: &str, from: usize, words: &[&str]) -> Option<(usize, usize)> {
    let b = t.as_bytes();
    let mut search = from;
    while let Some(p) = t[search..].find(words[0]) {
        let s = search + p;
        let mut k = s;
        let mut ok = true;
        for (n, w) in words.iter().enumerate() {
            if n > 0 {
                while k < b.len() && b[k].is_ascii_whitespace() {
                    k += 1;
                }
            }
            if !t[k..].starts_with(w) {
                ok = false;
                break;
            }
            k += w.len();
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
        }
        while ok && k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        if ok && k < b.len() && b[k] == b':' {
            return Some((s, k + 1));
        }
        search = s + words[0].len();
    }
    None
}

fn react_text(t: &str) -> Option<Parsed> {
    let fam = Family::ReactText;
    let answer = t.find("Final Answer:");
    let action = keyword(t, 0, &["Action"]);
    let input = action.and_then(|(_, a)| keyword(t, a, &["Action", "Input"]));
    match (action, input) {
        (Some(_), Some(_)) => {
            if answer.is_some() {
                return Some(error(
                    "the output has both a final answer and an action; give only one",
                ));
            }
            // One call per `Action:`/`Action Input:` pair; an input ends at an
            // `Observation` or at a line that starts the next action.
            let mut parsed = Parsed {
                format: Some(fam),
                ..Parsed::default()
            };
            let mut from = 0;
            // The next `Observation` at or after a position, searched again only once passed
            // (many actions in a row cost linear work).
            let mut observation: Option<(usize, Option<usize>)> = None;
            while let Some((_, a)) = keyword(t, from, &["Action"]) {
                let Some((is, ie)) = keyword(t, a, &["Action", "Input"]) else {
                    break;
                };
                let name = action_name(&t[a..is]);
                if name.is_empty() {
                    return Some(error("Action is empty"));
                }
                let start = ie + (t[ie..].len() - t[ie..].trim_start().len());
                let rest = &t[start..];
                let next = next_action_line(rest);
                let obs = match observation {
                    Some((searched, hit))
                        if searched <= start && hit.is_none_or(|h| h >= start) =>
                    {
                        hit
                    }
                    _ => t[start..].find("\nObservation").map(|p| start + p),
                };
                observation = Some((start, obs));
                let end = [obs.map(|p| p - start), next]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(rest.len());
                let mut input = rest[..end].trim_matches(' ');
                // An input that is one markdown code block ends at its closing fence (the
                // line break after it is layout, as Qwen's ReAct parser reads it).
                if input.starts_with("```") && input.trim_end().ends_with("```") {
                    input = input.trim_end();
                }
                let mut step = call(name, input, fam);
                parsed.calls.append(&mut step.calls);
                match next {
                    Some(n) if n == end => from = start + n + 1,
                    _ => break,
                }
            }
            Some(parsed)
        }
        (Some(_), None) if answer.is_none() => {
            Some(error("found 'Action:' without 'Action Input:'"))
        }
        _ => {
            let thought = line_starting(t, 0, "Thought:").is_some();
            if answer.is_none() && thought && line_starting(t, 0, "Action Input:").is_some() {
                return Some(error("found 'Action Input:' without 'Action:'"));
            }
            let text = match answer {
                Some(p) => &t[p + "Final Answer:".len()..],
                // llama_index's agents answer with `Answer:` after a thought.
                None if thought => &t[line_starting(t, 0, "Answer:")? + "Answer:".len()..],
                None => return None,
            };
            Some(Parsed {
                content: non_empty(text.trim().to_string()),
                ..Parsed::default()
            })
        }
    }
}

/// An action's name without a remark after it (`add (add two numbers)`); names may hold
/// spaces (crewAI's tools).
fn action_name(line: &str) -> &str {
    let name = line.trim();
    match name.strip_suffix(')').and_then(|n| n.rfind(" (")) {
        Some(p) if p > 0 => name[..p].trim_end(),
        _ => name,
    }
}

/// Offset in `rest` of the line break before a line that starts an `Action:` (`Action 2:`).
fn next_action_line(rest: &str) -> Option<usize> {
    rest.match_indices("\nAction").map(|(p, _)| p).find(|&p| {
        rest[p + "\nAction".len()..]
            .trim_start_matches(|c: char| c == ' ' || c == '\t' || c.is_ascii_digit())
            .starts_with(':')
    })
}

fn react_json(t: &str, ctx: &Ctx) -> Option<Parsed> {
    let mut from = 0;
    while let Some(p) = t[from..].find('{') {
        let i = from + p;
        if let JsonAt::Value(Value::Object(m), _) = json_at(ctx, t, i) {
            if let (Some(Value::String(action)), Some(input)) =
                (m.get("action"), action_input(&m, ctx))
            {
                if action == "Final Answer" {
                    let text = match input {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    return Some(Parsed {
                        content: non_empty(text),
                        ..Parsed::default()
                    });
                }
                let args = match input {
                    Value::String(s) => json!({ "input": s }),
                    Value::Object(_) => input.clone(),
                    other => json!({ "input": other }),
                };
                return Some(Parsed {
                    calls: vec![ParsedCall {
                        name: action.clone(),
                        arguments: args,
                        id: None,
                    }],
                    format: Some(Family::ReactJson),
                    ..Parsed::default()
                });
            }
        }
        from = i + 1;
    }
    None
}

/// The input of a ReAct JSON blob: `action_input`, or Dify's `input` when the blob holds
/// nothing else but a thought (and, with tools offered, names one of them).
fn action_input<'a>(m: &'a serde_json::Map<String, Value>, ctx: &Ctx) -> Option<&'a Value> {
    if let Some(input) = m.get("action_input") {
        return Some(input);
    }
    let input = m.get("input")?;
    let only_blob = m
        .keys()
        .all(|k| matches!(k.as_str(), "action" | "input" | "thought"));
    let named = match m.get("action") {
        Some(Value::String(a)) => a == "Final Answer" || ctx.known(a),
        _ => false,
    };
    (only_blob && named).then_some(input)
}

fn between<'a>(t: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let s = t.find(open)? + open.len();
    let e = s + t[s..].find(close)?;
    Some(&t[s..e])
}

fn xml_agent(t: &str) -> Option<Parsed> {
    if let Some(ans) = between(t, "<final_answer>", "</final_answer>") {
        return Some(Parsed {
            content: non_empty(unescape_xml(ans)),
            ..Parsed::default()
        });
    }
    let tools = t.matches("<tool>").count();
    let has_input = t.contains("<tool_input>");
    if tools == 0 {
        return has_input.then(|| error("found <tool_input> without <tool>"));
    }
    if tools > 1 {
        return Some(error(
            "found several <tool> blocks; call one tool at a time",
        ));
    }
    let name = between(t, "<tool>", "</tool>")?;
    // A tool's name is one line of text: markup or lines inside `<tool>` are another
    // format's element (langroid's `<tool><request>…`), not a name.
    if name.contains(['<', '\n']) {
        return None;
    }
    let input = between(t, "<tool_input>", "</tool_input>").unwrap_or("");
    Some(call(name.trim(), &unescape_xml(input), Family::XmlAgent))
}
