//! One module per wire, plus the shared server behaviour.

mod server;
mod wires;
