//! Separating a reply's thinking (`<think>…</think>`, `<thinking>…</thinking>`) from its text.

/// `(text, thinking)`: the reply without its thinking blocks (trimmed), and the blocks' contents
/// joined by blank lines. An unclosed block runs to the end of the reply.
pub(crate) fn split(reply: &str) -> (String, String) {
    let mut text = String::new();
    let mut thinking: Vec<String> = Vec::new();
    let mut rest = reply;
    loop {
        let open = ["<think>", "<thinking>"]
            .iter()
            .filter_map(|tag| rest.find(tag).map(|at| (at, *tag)))
            .min_by_key(|(at, _)| *at);
        let Some((at, tag)) = open else {
            text.push_str(rest);
            break;
        };
        text.push_str(&rest[..at]);
        let inner = &rest[at + tag.len()..];
        let close = if tag == "<think>" {
            "</think>"
        } else {
            "</thinking>"
        };
        match inner.find(close) {
            Some(end) => {
                thinking.push(inner[..end].trim().to_owned());
                rest = &inner[end + close.len()..];
            }
            None => {
                thinking.push(inner.trim().to_owned());
                break;
            }
        }
    }
    // A stray closing tag (the server ate the opening one): what comes before it is thinking.
    if let Some(end) = text.find("</think>") {
        thinking.insert(0, text[..end].trim().to_owned());
        text = text[end + "</think>".len()..].to_owned();
    }
    thinking.retain(|t| !t.is_empty());
    (text.trim().to_owned(), thinking.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn thinking_is_taken_out_of_the_text() {
        assert_eq!(
            split("<think>hmm\nok</think>\n\nI reflected."),
            ("I reflected.".to_owned(), "hmm\nok".to_owned())
        );
        assert_eq!(
            split("a <thinking>x</thinking> b <think>y</think>"),
            ("a  b".to_owned(), "x\n\ny".to_owned())
        );
        assert_eq!(split("plain"), ("plain".to_owned(), String::new()));
        assert_eq!(
            split("<think>never closed"),
            (String::new(), "never closed".to_owned())
        );
        assert_eq!(
            split("eaten open</think>answer"),
            ("answer".to_owned(), "eaten open".to_owned())
        );
    }
}
