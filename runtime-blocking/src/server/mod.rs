//! The stdio server: a reader thread, one driver (the calling thread) owning the core server
//! machine, and a thread of its own for each running request's handler (idle ones are reused).

mod context;
mod driver;

use std::io::{self, Read, Write};
use std::sync::mpsc;
use std::time::Instant;

use zest_core::error::CloseReason;
use zest_core::handler::SyncHandler;
use zest_core::server::{Server, ServerConfig};

use crate::child;
pub use context::RequestContext;
use driver::{ServerDriver, ServerInput};

/// What a blocking server serves: tools, resources, templates, prompts and completion, each
/// a plain closure taking `&RequestContext`.
pub type Registry = zest_core::server::Registry<SyncHandler<RequestContext>>;

/// Serves one session on this process's stdin and stdout until stdin ends; returns why the
/// session closed. Stdout carries only protocol frames (handlers MUST NOT print to it); each
/// frame is flushed before the driver waits again. Log to stderr.
pub fn serve_stdio(config: ServerConfig, registry: Registry) -> CloseReason {
    serve(config, registry, io::stdin(), io::stdout())
}

/// Serves one session over any byte streams until `reader` ends (or a write fails); returns
/// why the session closed. The driver runs on the calling thread; `reader` is read on a
/// thread of its own, which may outlive this call if the session ends before `reader` does.
pub fn serve<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> CloseReason
where
    R: Read + Send + 'static,
    W: Write + Send,
{
    let (to_driver, inputs) = mpsc::channel();
    if let Err(e) = child::read_chunks(reader, to_driver.clone(), ServerInput::Read) {
        return CloseReason::TransportFailed(format!("cannot start the reader thread: {e}"));
    }
    let machine = Server::new(config, registry, Instant::now());
    ServerDriver::new(machine, writer, inputs, to_driver).run()
}
