//! Integration tests of reagent-tools: one binary, modules under `suite/`.

mod suite;
