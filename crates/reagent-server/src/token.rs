//! The bearer token: kept in a file created on first start (mode 0600), compared in constant
//! time.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rand::RngCore;
use subtle::ConstantTimeEq;

use crate::error::ServerError;

/// The token file's name under the reagent config directory.
pub const TOKEN_FILE_NAME: &str = "serve-token";

/// The token file's default place: `$XDG_CONFIG_HOME/reagent/serve-token`, else
/// `~/.config/reagent/serve-token`.
pub fn default_token_path() -> Result<PathBuf, ServerError> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| !h.as_os_str().is_empty())
                .map(|h| h.join(".config"))
        })
        .map(|dir| dir.join("reagent").join(TOKEN_FILE_NAME))
        .ok_or_else(|| {
            ServerError::Token(
                "cannot find a place for the token file: neither XDG_CONFIG_HOME nor HOME is set; pass --token-file".into(),
            )
        })
}

/// The server's secret. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

impl Token {
    /// Whether `presented` is this token, in time independent of where they differ.
    pub fn matches(&self, presented: &[u8]) -> bool {
        bool::from(self.0.as_bytes().ct_eq(presented))
    }

    /// The token's text (to print the dashboard link once, or for a client in a test).
    pub fn reveal(&self) -> &str {
        &self.0
    }
}

/// Read the token from `path`; when the file is missing and `may_create`, create it (and its
/// directory, mode 0700) with a fresh random token, mode 0600. Returns the token and whether
/// the file was created now.
pub(crate) fn load_or_create(path: &Path, may_create: bool) -> Result<(Token, bool), ServerError> {
    match std::fs::metadata(path) {
        Ok(meta) => {
            if meta.permissions().mode() & 0o077 != 0 {
                return Err(ServerError::Token(format!(
                    "the token file {} can be read by other users (mode {:o}); run `chmod 600 {}`",
                    path.display(),
                    meta.permissions().mode() & 0o777,
                    path.display()
                )));
            }
            let text = std::fs::read_to_string(path).map_err(|e| {
                ServerError::Token(format!(
                    "cannot read the token file {}: {e}",
                    path.display()
                ))
            })?;
            let token = text.trim();
            if token.len() < 16 || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(ServerError::Token(format!(
                    "the token file {} must hold one token of at least 16 characters without spaces",
                    path.display()
                )));
            }
            Ok((Token(token.to_owned()), false))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !may_create {
                return Err(ServerError::Token(format!(
                    "a non-loopback --bind needs an existing token file, and {} does not exist: \
                     start once on 127.0.0.1 to create it, or write one (mode 0600)",
                    path.display()
                )));
            }
            create(path).map(|t| (t, true))
        }
        Err(e) => Err(ServerError::Token(format!(
            "cannot read the token file {}: {e}",
            path.display()
        ))),
    }
}

fn create(path: &Path) -> Result<Token, ServerError> {
    let fail = |e: std::io::Error| {
        ServerError::Token(format!(
            "cannot create the token file {}: {e}",
            path.display()
        ))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(fail)?;
    }
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(fail)?;
    writeln!(file, "{token}").map_err(fail)?;
    Ok(Token(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_token_is_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/serve-token");
        let (token, created) = load_or_create(&path, true).unwrap();
        assert!(created);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (again, created) = load_or_create(&path, true).unwrap();
        assert!(!created);
        assert!(again.matches(token.reveal().as_bytes()));
        assert!(!again.matches(b"wrong"));
        assert!(!format!("{again:?}").contains(token.reveal()));
    }

    #[test]
    fn a_missing_file_is_not_created_when_not_allowed_and_a_loose_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve-token");
        assert!(load_or_create(&path, false).is_err());
        assert!(!path.exists());
        std::fs::write(&path, "0123456789abcdef0123\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create(&path, false).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
    }
}
