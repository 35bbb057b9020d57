//! Names: escaping odd names for display, spotting invisible characters, and the
//! protected-path check (NFKC + case folding + Unicode confusable skeletons).

use std::path::{Component, Path};

use unicode_normalization::UnicodeNormalization;
use unicode_security::confusable_detection::skeleton;

/// Whether `c` is a bidi control or an invisible (zero-width) format character.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Whether a character must be escaped when shown (controls, bidi, invisible).
fn needs_escape(c: char) -> bool {
    c.is_control() || is_invisible(c)
}

/// Whether `s` holds control, bidi or zero-width characters (such names are refused for writes).
pub fn has_hidden_chars(s: &str) -> bool {
    s.chars().any(needs_escape)
}

/// Show a name safely: control, bidi and zero-width characters become `\u{..}` escapes and
/// bytes that are not UTF-8 become `\xNN`, so a name can never inject into a log or terminal.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        push_escaped(&mut out, chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// [`escape_bytes`] for a `str`.
pub fn escape_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_escaped(&mut out, s);
    out
}

fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:04X}}}", u32::from(c))),
            c => out.push(c),
        }
    }
}

/// The comparison key of one name: invisible characters dropped, NFKC, lowercased,
/// reduced to its confusable skeleton (UTS #39), lowercased again.
fn name_key(name: &str) -> String {
    let visible: String = name.chars().filter(|c| !is_invisible(*c)).collect();
    let folded: String = visible.nfkc().collect::<String>().to_lowercase();
    skeleton(&folded).collect::<String>().to_lowercase()
}

/// The protected paths of a workspace (read-only for the file tools).
///
/// An entry without `/` (`.git`, `.env`) protects every file or directory of that name at any
/// depth, like a `.gitignore` pattern; an entry with `/` (`config/secrets.toml`) is anchored at
/// the workspace root. Names compare by [NFKC, case folding and confusable skeleton], so
/// `．env`, `.GIT` and `.gіt` (Cyrillic і) all count as protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPaths {
    entries: Vec<(String, Vec<String>)>,
}

impl ProtectedPaths {
    /// The defaults: `.git`, `.env`, `reagent.toml`, `.reagent`.
    pub const DEFAULTS: [&'static str; 4] = [".git", ".env", "reagent.toml", ".reagent"];

    /// Protect these workspace-relative paths.
    pub fn new<S: AsRef<str>>(paths: &[S]) -> Self {
        let entries = paths
            .iter()
            .filter_map(|p| {
                let keys: Vec<String> = p
                    .as_ref()
                    .split('/')
                    .filter(|c| !c.is_empty() && *c != ".")
                    .map(name_key)
                    .collect();
                (!keys.is_empty()).then(|| (p.as_ref().to_string(), keys))
            })
            .collect();
        ProtectedPaths { entries }
    }

    /// The entries as given.
    pub fn entries(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(raw, _)| raw.as_str())
    }

    /// The protected entry that covers the workspace-relative path `components`, if any.
    pub fn covering(&self, components: &[String]) -> Option<&str> {
        let keys: Vec<String> = components.iter().map(|c| name_key(c)).collect();
        self.entries.iter().find_map(|(raw, entry)| {
            let hit = if entry.len() == 1 {
                keys.iter().any(|k| *k == entry[0])
            } else {
                keys.len() >= entry.len() && keys[..entry.len()] == entry[..]
            };
            hit.then_some(raw.as_str())
        })
    }
}

impl Default for ProtectedPaths {
    fn default() -> Self {
        Self::new(&Self::DEFAULTS)
    }
}

/// The lexical components of a relative path (`.` dropped, `..` pops), used only for
/// checks and display, never to open anything.
pub(crate) fn lexical_components(path: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n.to_string_lossy().into_owned()),
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_bidi_and_bad_utf8() {
        assert_eq!(escape_bytes(b"a\xFFb"), "a\\xFFb");
        assert_eq!(escape_str("x\u{1b}[31my"), "x\\u{001B}[31my");
        assert_eq!(escape_str("evil\u{202E}txt.exe"), "evil\\u{202E}txt.exe");
        assert_eq!(escape_str("line\nbreak"), "line\\nbreak");
        assert_eq!(escape_str("plain-ünïcode.rs"), "plain-ünïcode.rs");
    }

    #[test]
    fn protected_matches_lookalikes() {
        let p = ProtectedPaths::default();
        let check = |s: &str| p.covering(&lexical_components(Path::new(s))).is_some();
        assert!(check(".git/config"));
        assert!(check(".GIT/hooks/pre-commit"));
        assert!(check(".g\u{0456}t/config"), "Cyrillic i");
        assert!(check("\u{FF0E}env"), "fullwidth full stop");
        assert!(check(".e\u{200D}nv"), "zero-width joiner");
        assert!(check("sub/.env"));
        assert!(check("src/../.git/x"));
        assert!(check("reagent.toml"));
        assert!(!check("src/main.rs"));
        assert!(!check(".envrc"));
        assert!(!check(".gitignore"));
    }

    #[test]
    fn anchored_entries_match_only_at_root() {
        let p = ProtectedPaths::new(&["config/secret.toml"]);
        let check = |s: &str| p.covering(&lexical_components(Path::new(s))).is_some();
        assert!(check("config/secret.toml"));
        assert!(!check("x/config/secret.toml"));
    }

    #[test]
    fn hidden_chars() {
        assert!(has_hidden_chars("a\u{200B}b"));
        assert!(has_hidden_chars("a\nb"));
        assert!(!has_hidden_chars("naïve.txt"));
    }
}
