//! reagent-providers (skeleton; see ARCHITECTURE.md).
