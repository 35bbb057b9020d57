//! The test suite: see each module.

mod runs;
