//! What to run ([`StdioCommand`]) and how the client behaves ([`ClientOptions`]): zest-core's
//! plain-data descriptions, with this runtime's client handlers.

use std::time::Duration;

use zest_core::handler::AsyncClientHandlers;
pub use zest_core::stdio::StdioCommand;

/// How a [`Client`](crate::Client) behaves: the core's config and the async handlers that
/// answer the server's requests (sampling, elicitation, roots).
pub type ClientOptions = zest_core::stdio::ClientOptions<AsyncClientHandlers>;

/// How long [`StdioCommand::shutdown_grace`] waits by default.
pub const DEFAULT_GRACE: Duration = StdioCommand::DEFAULT_GRACE;
