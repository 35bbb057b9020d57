//! Opening the run store for a command: where it is, and how `reagent run` records into it.

use reagent_core::Session;
use reagent_store::{Location, Recorder, Store};

use crate::cli::RunArgs;
use crate::config::FileConfig;

/// The store named by `--store`, `$REAGENT_STORE` or the config file, else the default file.
pub(crate) fn location(flag: Option<&str>, file: &FileConfig) -> anyhow::Result<Location> {
    Location::resolve(flag, file.store.as_deref()).map_err(|e| crate::usage(e.into()))
}

/// Open the store for a `runs` command (failing to open it is the command's error).
pub(crate) async fn open(flag: Option<&str>, file: &FileConfig) -> anyhow::Result<Store> {
    let location = location(flag, file)?;
    Ok(Store::open(&location).await?)
}

/// The store a `reagent run` records into. A store that cannot be opened or written never stops
/// the run: its first error is kept and reported once at the end.
pub(crate) struct RunStore {
    location: Location,
    store: Option<Store>,
    open_error: Option<String>,
}

impl RunStore {
    /// `None` with `--no-store`; an error only for a location that cannot be understood.
    pub(crate) async fn open(args: &RunArgs, file: &FileConfig) -> anyhow::Result<Option<Self>> {
        if args.no_store {
            return Ok(None);
        }
        let location = location(args.store.as_deref(), file)?;
        let (store, open_error) = match Store::open(&location).await {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e.to_string())),
        };
        Ok(Some(RunStore {
            location,
            store,
            open_error,
        }))
    }

    /// Where events go, when the store is open.
    pub(crate) fn recorder(&self) -> Option<Recorder> {
        self.store.as_ref().map(Store::recorder)
    }

    /// Wait for the last events to be written and save the session (for `--resume`); the
    /// first error the store met, if any.
    pub(crate) async fn finish(&self, session: &mut Session) -> Option<String> {
        let Some(store) = &self.store else {
            return self.open_error.clone();
        };
        let id = session.id().to_owned();
        let saved = store
            .save_session_after_events(&id, |complete| session.snapshot_over_events(complete))
            .await
            .err();
        store.error().or(saved.map(|e| e.to_string()))
    }

    /// Wait for the events recorded so far to be written; the first error the store met (or
    /// why it could not be opened), if any.
    pub(crate) async fn flushed_error(&self) -> Option<String> {
        match &self.store {
            Some(store) => {
                store.flush().await;
                store.error()
            }
            None => self.open_error.clone(),
        }
    }

    /// The open store, if it could be opened.
    pub(crate) fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// The store's location, as shown to people.
    pub(crate) fn location(&self) -> &Location {
        &self.location
    }
}
