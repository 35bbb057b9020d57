//! ChatGLM3's calls: the model opens a new assistant turn whose header line names the tool,
//! and writes the arguments as a Python call to `tool_call` in a fence:
//!
//! ````text
//! <|assistant|>get_current_weather
//! ```python
//! tool_call(location="beijing", unit="celsius")
//! ```
//! ````
//!
//! The header must name a tool (an offered one, when tools are offered) and the fence must
//! hold that one call; anything else after `<|assistant|>` is the next turn's text.

use crate::engine::{Ctx, Hit};
use crate::Family;

const HEADER: &str = "<|assistant|>";

/// The call whose assistant header starts at `t[i..]`.
pub(crate) fn try_lt(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let after = t[i..].strip_prefix(HEADER)?;
    let line_end = after.find('\n')?;
    let name = after[..line_end].trim();
    if !crate::scan::is_tool_name(name) || !ctx.known(name) {
        return None;
    }
    let body = &after[line_end + 1..];
    let code = crate::pythonic::python_fence(body.trim_start())?;
    let close = code.find("```")?;
    let calls = crate::pythonic::whole_reply_calls(&code[..close], &[])?;
    let [call] = calls.as_slice() else {
        return None;
    };
    if call.name != "tool_call" {
        return None;
    }
    let end = t.len() - code.len() + close + 3;
    Some(Hit::one_call(
        i,
        end,
        Family::Pythonic,
        name,
        call.arguments.clone(),
    ))
}
