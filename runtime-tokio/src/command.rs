//! What to run ([`StdioCommand`]) and how to talk to it ([`ClientOptions`]): zest-core's
//! plain-data descriptions, with this runtime's client handlers.

use std::time::Duration;

use zest_core::handler::AsyncClientHandlers;
pub use zest_core::stdio::StdioCommand;

/// How the client presents itself and which server requests it answers (async handlers).
pub type ClientOptions = zest_core::stdio::ClientOptions<AsyncClientHandlers>;

/// How long [`StdioCommand::shutdown_grace`] waits by default.
pub const DEFAULT_GRACE: Duration = StdioCommand::DEFAULT_GRACE;
