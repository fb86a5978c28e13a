//! zest-core: the Model Context Protocol as pure state machines.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod framing;
pub mod json_schema;
pub mod jsonrpc;
pub mod schema;
