//! reagent-core (skeleton; see ARCHITECTURE.md).
