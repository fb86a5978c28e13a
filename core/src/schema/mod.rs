//! Typed MCP params, results and notifications.

mod version;

pub use version::ProtocolVersion;
