//! reagent-testkit (skeleton; see ARCHITECTURE.md).
