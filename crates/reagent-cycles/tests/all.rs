//! reagent-cycles' integration tests: experiments against scripted model servers on 127.0.0.1
//! speaking the real wire formats, on a real SQLite store in a temporary directory.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
