//! Property test: paths assembled from hostile pieces (`..`, absolute prefixes, encodings,
//! NUL, lookalikes, invisible characters, symlinks leading out) never make any tool panic,
//! never read or change the sentinel outside, and never create anything outside.

use std::os::unix::fs::symlink;

use proptest::prelude::*;
use reagent_tools::{ToolRegistry, ToolsConfig};
use serde_json::json;

use crate::suite::common::{Fixture, SECRET};

const PIECES: &[&str] = &[
    "..",
    ".",
    "",
    "/",
    "//",
    "a",
    "b",
    "src",
    "out",
    "up",
    "self",
    "~",
    "$HOME",
    "%2e%2e",
    "%2f",
    "..\\..",
    "\0",
    ".git",
    ".GIT",
    "\u{FF0E}env",
    ".g\u{0456}t",
    "\u{202E}",
    "\u{200D}",
    "\n",
    "/proc/self/root",
    "/etc/passwd",
    "sentinel",
    "outside",
    "f.txt",
    "*",
    "**",
    "?",
];

fn hostile_path() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 1..8).prop_map(|parts| {
        let mut s = String::new();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 && !p.starts_with('/') {
                s.push('/');
            }
            s.push_str(p);
        }
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn hostile_paths_never_escape(path in hostile_path(), content in "[a-z]{0,8}") {
        let fx = Fixture::new();
        fx.put("src/f.txt", "inside\n");
        fx.put("a/f.txt", "a\n");
        symlink("../outside", fx.ws.join("out")).unwrap();
        symlink("..", fx.ws.join("up")).unwrap();
        symlink("/proc/self", fx.ws.join("self")).unwrap();
        // Call the tools directly (not through the registry's panic guard): a panic fails.
        let tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
        let calls = [
            ("read_file", json!({"path": path})),
            ("write_file", json!({"path": path, "content": content})),
            ("edit_file", json!({"path": path, "old_string": "inside", "new_string": content})),
            ("list_directory", json!({"path": path, "recursive": true})),
            ("find_files", json!({"pattern": path})),
            ("find_files", json!({"pattern": "*", "path": path})),
            ("grep_search", json!({"pattern": "SENTINEL|inside", "path": path})),
        ];
        for (name, args) in calls {
            let r = tools.call(name, &args, &fx.ctx);
            prop_assert!(!r.to_json().to_string().contains(SECRET), "{name} {args} leaked");
        }
        fx.assert_outside_untouched();
    }
}
