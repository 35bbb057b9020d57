//! The hub's errors.

/// Something the hub could not do.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The database refused or failed a statement.
    #[error("hub store: cannot {what}: {message}")]
    Db {
        /// What was being done.
        what: String,
        /// The database's error.
        message: String,
    },
    /// This hub no longer holds the lease at its epoch: another hub took over (or the lease
    /// ran out); the write was refused.
    #[error("this hub was deposed: its lease at epoch {epoch} is no longer current")]
    Deposed {
        /// The epoch this hub held.
        epoch: i64,
    },
    /// A state change the transition table does not allow.
    #[error("invalid hub transition {from} -> {to}")]
    InvalidTransition {
        /// The current state.
        from: String,
        /// The state asked for.
        to: String,
    },
    /// A model's task graph that cannot be dispatched.
    #[error("invalid task graph: {0}")]
    InvalidGraph(String),
    /// The hub's model failed or answered something unusable.
    #[error("hub model: {0}")]
    Model(String),
    /// No goal (or other record) with this id.
    #[error("{0}")]
    NotFound(String),
    /// Bad input (an unknown state name, a malformed value).
    #[error("{0}")]
    Invalid(String),
}

impl HubError {
    /// A database error while doing `what`.
    pub(crate) fn db(what: &str) -> impl FnOnce(sqlx::Error) -> HubError + '_ {
        move |e| HubError::Db {
            what: what.to_owned(),
            message: e.to_string(),
        }
    }
}

impl From<crate::queue::QueueError> for HubError {
    fn from(e: crate::queue::QueueError) -> Self {
        HubError::Db {
            what: "use the task queue".to_owned(),
            message: e.to_string(),
        }
    }
}

/// The hub's result type.
pub type Result<T, E = HubError> = std::result::Result<T, E>;
