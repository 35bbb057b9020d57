//! One module per wire, plus the shared server behaviour.

mod refusals;
mod server;
mod wires;
