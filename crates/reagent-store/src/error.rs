//! The store's errors: each names the store it concerns.

/// Something the store could not do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The location could not be understood.
    #[error("{0}")]
    Location(String),
    /// The store could not be opened (unreachable, not a database, not a reagent store...).
    #[error("cannot open the store {location}: {message}")]
    Open {
        /// The store (file path, or URL without its password).
        location: String,
        /// Why.
        message: String,
    },
    /// A read or an explicit write failed.
    #[error("store {location}: cannot {what}: {message}")]
    Query {
        /// The store.
        location: String,
        /// What was being done.
        what: String,
        /// The database's error.
        message: String,
    },
    /// No run (or eval result) has this id, or a prefix matches several.
    #[error("{0}")]
    NotFound(String),
}
