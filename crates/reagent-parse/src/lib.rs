//! reagent-parse (skeleton; see ARCHITECTURE.md).
