//! The child's environment: a cleared environment plus an allowlist.
//!
//! Passed through from the parent when present: `PATH`, `HOME`, `LANG`,
//! `LC_*`, `TERM`, `USER`, `LOGNAME`, `SHELL`, `TZ` and any names the policy
//! adds. `TMPDIR` points at the private temp dir and `GIT_TERMINAL_PROMPT=0`.
//! A variable whose name contains `KEY`, `SECRET`, `TOKEN` or `PASSWORD`
//! (any case) is never passed, whatever the allowlist says.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const ALLOWED: &[&str] = &[
    "PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "SHELL", "TZ",
];
const SECRET_MARKERS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD"];
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// True when a variable name looks like it carries a secret.
pub(crate) fn is_secret_name(name: &OsStr) -> bool {
    let upper = String::from_utf8_lossy(name.as_bytes()).to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|m| upper.contains(m))
}

fn is_allowed(name: &OsStr, extra: &[String]) -> bool {
    let bytes = name.as_bytes();
    ALLOWED.iter().any(|a| a.as_bytes() == bytes)
        || bytes.starts_with(b"LC_")
        || extra.iter().any(|e| e.as_bytes() == bytes)
}

/// Builds the child's environment from `parent` (normally `std::env::vars_os()`).
pub(crate) fn build_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
    tmpdir: &Path,
) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = parent
        .into_iter()
        .filter(|(k, _)| !k.is_empty() && !k.as_bytes().contains(&b'='))
        .filter(|(k, _)| is_allowed(k, extra) && !is_secret_name(k))
        .collect();
    if !out.iter().any(|(k, _)| k == "PATH") {
        out.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    out.push(("TMPDIR".into(), tmpdir.as_os_str().to_owned()));
    out.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        v.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn allowlist_and_secret_filter() {
        let parent = pairs(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C"),
            ("OPENAI_API_KEY", "sk-1"),
            ("GITHUB_TOKEN", "t"),
            ("DB_PASSWORD", "p"),
            ("MY_SECRET", "s"),
            ("LC_MONKEY", "x"),
            ("RANDOM_VAR", "r"),
            ("TMPDIR", "/tmp"),
            ("EXTRA", "1"),
            ("EXTRA_TOKEN", "no"),
        ]);
        let extra = vec!["EXTRA".to_string(), "EXTRA_TOKEN".to_string()];
        let got = build_env(parent, &extra, Path::new("/priv"));
        let want = pairs(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C"),
            ("EXTRA", "1"),
            ("TMPDIR", "/priv"),
            ("GIT_TERMINAL_PROMPT", "0"),
        ]);
        assert_eq!(got, want);
    }

    #[test]
    fn path_gets_a_default() {
        let got = build_env(Vec::new(), &[], Path::new("/t"));
        assert_eq!(got[0], ("PATH".into(), DEFAULT_PATH.into()));
    }
}
