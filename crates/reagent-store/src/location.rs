//! Where the store lives: a SQLite file (the default) or a PostgreSQL database.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::StoreError;

/// The environment variable that names the store when `--store` is not given.
pub const STORE_ENV: &str = "REAGENT_STORE";

/// A store's location, parsed from `--store`, `REAGENT_STORE` or the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file (created with its directory when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`).
    Postgres(String),
}

impl Location {
    /// Parse a location: `postgres://…` or `postgresql://…` select PostgreSQL; `sqlite://PATH`,
    /// `sqlite:PATH` or a plain path select SQLite.
    pub fn parse(s: &str) -> Result<Location, StoreError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(StoreError::Location(
                "the store location is empty: give a file path or a postgres:// URL".into(),
            ));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(Location::Postgres(s.to_owned()));
        }
        let path = s
            .strip_prefix("sqlite://")
            .or_else(|| s.strip_prefix("sqlite:"))
            .unwrap_or(s);
        if path.is_empty() || path.contains("://") {
            return Err(StoreError::Location(format!(
                "unsupported store location '{s}': use a file path, sqlite://PATH or postgres://…"
            )));
        }
        Ok(Location::Sqlite(PathBuf::from(path)))
    }

    /// The location chosen by the first of `flag`, `$REAGENT_STORE` and `config` that is set,
    /// else [`default_sqlite_path`].
    pub fn resolve(flag: Option<&str>, config: Option<&str>) -> Result<Location, StoreError> {
        let env = std::env::var(STORE_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty());
        match flag.or(env.as_deref()).or(config) {
            Some(s) => Location::parse(s),
            None => default_sqlite_path().map(Location::Sqlite),
        }
    }

    /// The URL sqlx connects to (SQLite: created when missing).
    pub(crate) fn connect_url(&self) -> String {
        match self {
            Location::Postgres(url) => url.clone(),
            Location::Sqlite(path) => {
                // sqlx percent-decodes the path: escape what would be read as syntax.
                let p = path
                    .to_string_lossy()
                    .replace('%', "%25")
                    .replace('?', "%3F")
                    .replace('#', "%23");
                format!("sqlite://{p}?mode=rwc")
            }
        }
    }

    /// Whether this is the SQLite backend.
    pub fn is_sqlite(&self) -> bool {
        matches!(self, Location::Sqlite(_))
    }
}

/// Shown to people: the file path, or the URL without its password.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(url) => f.write_str(&redact_password(url)),
        }
    }
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// `$XDG_DATA_HOME/reagent/reagent.db`, else `~/.local/share/reagent/reagent.db`.
pub fn default_sqlite_path() -> Result<PathBuf, StoreError> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| !h.as_os_str().is_empty())
                .map(|h| h.join(".local/share"))
        })
        .ok_or_else(|| {
            StoreError::Location(
                "cannot find the default store: neither XDG_DATA_HOME nor HOME is set; pass --store"
                    .into(),
            )
        })?;
    Ok(data.join("reagent").join("reagent.db"))
}

/// Create the directory a SQLite file goes into.
pub(crate) fn create_parent(path: &Path) -> Result<(), StoreError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                location: path.display().to_string(),
                message: format!("cannot create its directory {}: {e}", dir.display()),
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_form() {
        assert_eq!(
            Location::parse("/tmp/a.db").unwrap(),
            Location::Sqlite("/tmp/a.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:///tmp/a.db").unwrap(),
            Location::Sqlite("/tmp/a.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:rel.db").unwrap(),
            Location::Sqlite("rel.db".into())
        );
        assert!(matches!(
            Location::parse("postgresql://u@h/db").unwrap(),
            Location::Postgres(_)
        ));
        assert!(Location::parse("mysql://h/db").is_err());
        assert!(Location::parse("  ").is_err());
    }

    #[test]
    fn hides_the_password() {
        let l = Location::parse("postgres://me:secret@db.example:5432/x").unwrap();
        assert_eq!(l.to_string(), "postgres://me:***@db.example:5432/x");
        let l = Location::parse("postgres://me@h/x").unwrap();
        assert_eq!(l.to_string(), "postgres://me@h/x");
    }

    #[test]
    fn escapes_url_syntax_in_paths() {
        let l = Location::Sqlite("/tmp/a?b#c%d.db".into());
        assert_eq!(l.connect_url(), "sqlite:///tmp/a%3Fb%23c%25d.db?mode=rwc");
    }
}
