//! Where the cached llama-server and model live, and the environment overrides.

use std::path::{Path, PathBuf};

use crate::error::LocalError;

/// File name of the default model in the cache's `models/` directory.
pub const MODEL_FILE_NAME: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where to look for the server and the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locations {
    /// The cache directory the install script fills (`bin/llama-server`, `models/…gguf`).
    pub cache_dir: PathBuf,
    /// A llama-server binary to use instead of the cached one.
    pub server_override: Option<PathBuf>,
    /// A GGUF model to use instead of the cached one.
    pub model_override: Option<PathBuf>,
}

impl Locations {
    /// The cache at `cache_dir`, without overrides.
    pub fn in_cache(cache_dir: impl Into<PathBuf>) -> Self {
        Locations {
            cache_dir: cache_dir.into(),
            server_override: None,
            model_override: None,
        }
    }

    /// From the environment: `$REAGENT_CACHE` (else `$HOME/.cache/reagent`, the install
    /// script's default), `$REAGENT_LLAMA_SERVER` and `$REAGENT_MODEL_FILE`. Empty values count
    /// as unset.
    pub fn from_env() -> Result<Self, LocalError> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let cache_dir = match var("REAGENT_CACHE") {
            Some(dir) => dir,
            None => var("HOME")
                .ok_or(LocalError::NoCacheDir)?
                .join(".cache/reagent"),
        };
        Ok(Locations {
            cache_dir,
            server_override: var("REAGENT_LLAMA_SERVER"),
            model_override: var("REAGENT_MODEL_FILE"),
        })
    }

    /// The paths in force (overrides win over the cache).
    pub fn files(&self) -> ServerFiles {
        ServerFiles {
            server: self
                .server_override
                .clone()
                .unwrap_or_else(|| self.cache_dir.join("bin/llama-server")),
            model: self
                .model_override
                .clone()
                .unwrap_or_else(|| self.cache_dir.join("models").join(MODEL_FILE_NAME)),
        }
    }

    /// An error when an override names a file that is not there (installing would not help).
    pub(crate) fn check_overrides(&self) -> Result<(), LocalError> {
        if let Some(path) = &self.server_override {
            if !is_executable(path) {
                return Err(LocalError::OverrideMissing {
                    what: "llama-server",
                    path: path.clone(),
                    var: "REAGENT_LLAMA_SERVER",
                });
            }
        }
        if let Some(path) = &self.model_override {
            if !is_nonempty_file(path) {
                return Err(LocalError::OverrideMissing {
                    what: "model",
                    path: path.clone(),
                    var: "REAGENT_MODEL_FILE",
                });
            }
        }
        Ok(())
    }
}

/// The two files a local server needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFiles {
    /// The llama-server binary.
    pub server: PathBuf,
    /// The GGUF model.
    pub model: PathBuf,
}

impl ServerFiles {
    /// Whether the binary is an executable file and the model a non-empty file.
    pub fn is_complete(&self) -> bool {
        self.missing().is_empty()
    }

    /// The paths that are missing (or, for the binary, not executable).
    pub fn missing(&self) -> Vec<&Path> {
        let mut out = Vec::new();
        if !is_executable(&self.server) {
            out.push(self.server.as_path());
        }
        if !is_nonempty_file(&self.model) {
            out.push(self.model.as_path());
        }
        out
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn is_nonempty_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn cache_layout_matches_the_install_script() {
        let files = Locations::in_cache("/c").files();
        assert_eq!(
            files,
            ServerFiles {
                server: PathBuf::from("/c/bin/llama-server"),
                model: PathBuf::from("/c/models/SmolLM2-135M-Instruct.Q4_1.gguf"),
            }
        );
        let script = crate::INSTALL_SCRIPT;
        assert!(script.contains("BIN=\"${REAGENT_LLAMA_SERVER:-$CACHE/bin/llama-server}\""));
        assert!(script.contains(&format!(
            "MODEL=\"${{REAGENT_MODEL_FILE:-$CACHE/models/{MODEL_FILE_NAME}}}\""
        )));
    }

    #[test]
    fn overrides_win_and_missing_files_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("srv");
        let model = dir.path().join("m.gguf");
        let loc = Locations {
            cache_dir: dir.path().join("cache"),
            server_override: Some(server.clone()),
            model_override: Some(model.clone()),
        };
        let files = loc.files();
        assert_eq!(files.server, server);
        assert_eq!(files.missing(), vec![server.as_path(), model.as_path()]);
        assert!(matches!(
            loc.check_overrides(),
            Err(LocalError::OverrideMissing {
                what: "llama-server",
                ..
            })
        ));

        std::fs::write(&server, "#!/bin/sh\n").unwrap();
        // Present but not executable still counts as missing.
        assert_eq!(files.missing(), vec![server.as_path(), model.as_path()]);
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(&model, "").unwrap();
        assert_eq!(files.missing(), vec![model.as_path()]);
        assert!(matches!(
            loc.check_overrides(),
            Err(LocalError::OverrideMissing { what: "model", .. })
        ));
        std::fs::write(&model, "gguf").unwrap();
        assert!(files.is_complete());
        assert!(loc.check_overrides().is_ok());
    }
}
