//! reagent-sandbox (skeleton; see ARCHITECTURE.md).
