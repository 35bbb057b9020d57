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

    /// Where the store's journal lives: events the database did not take in time wait there
    /// (see the crate docs). A SQLite store's is a directory next to its file
    /// (`reagent.db.journal`); a PostgreSQL store's is
    /// `$XDG_STATE_HOME/reagent/journal/<hash of the location>` (else under `~/.local/state`,
    /// else the temporary directory).
    pub fn journal_dir(&self) -> PathBuf {
        match self {
            Location::Sqlite(path) => {
                let mut name = path.file_name().unwrap_or_default().to_os_string();
                name.push(".journal");
                path.with_file_name(name)
            }
            Location::Postgres(_) => {
                let state = std::env::var_os("XDG_STATE_HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .or_else(|| {
                        std::env::var_os("HOME")
                            .map(PathBuf::from)
                            .filter(|h| h.is_absolute())
                            .map(|h| h.join(".local/state"))
                    })
                    .unwrap_or_else(std::env::temp_dir);
                state
                    .join("reagent/journal")
                    .join(format!("{:016x}", fnv1a(self.to_string().as_bytes())))
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

/// FNV-1a, 64 bits: a stable name for a location (the same in every process and release).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
    fn the_journal_is_next_to_a_sqlite_file_and_per_database_for_postgres() {
        assert_eq!(
            Location::Sqlite("/d/reagent.db".into()).journal_dir(),
            PathBuf::from("/d/reagent.db.journal")
        );
        let a = Location::parse("postgres://u:one@h/a")
            .unwrap()
            .journal_dir();
        let same = Location::parse("postgres://u:two@h/a")
            .unwrap()
            .journal_dir();
        let b = Location::parse("postgres://u@h/b").unwrap().journal_dir();
        assert_eq!(a, same, "the password does not change the database");
        assert_ne!(a, b);
        assert!(a.to_string_lossy().contains("reagent/journal/"), "{a:?}");
    }

    #[test]
    fn escapes_url_syntax_in_paths() {
        let l = Location::Sqlite("/tmp/a?b#c%d.db".into());
        assert_eq!(l.connect_url(), "sqlite:///tmp/a%3Fb%23c%25d.db?mode=rwc");
    }
}
