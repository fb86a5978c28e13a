//! [`ServerHandle`]: the app's handle on a running server, written once for every runtime.
//! A runtime supplies only where its [`Broadcast`]s go (a [`BroadcastSink`]: a stdio
//! session's loop, or its HTTP hub) and names the handle with its handler type
//! (`ServerHandle<AsyncHandler<RequestContext>>` in the async runtimes,
//! `ServerHandle<SyncHandler<RequestContext>>` in blocking).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::{Broadcast, ListKind, Registry};
use crate::handler::typed::{AsyncCallable, IntoPromptResult, IntoToolResult, SyncCallable};
use crate::handler::{AsyncHandler, HandlerResult, SyncHandler};
use crate::schema::{LoggingLevel, ReadResourceParams, ReadResourceResult, Resource};

/// Where a [`ServerHandle`]'s commands go. `send` returns at once; once the server has
/// stopped it drops the command (there is nobody left to tell).
pub trait BroadcastSink<H>: Send + Sync + 'static {
    /// Carries `command` to every session the server holds, in order with what each sends.
    fn send(&self, command: Broadcast<H>);
}

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server. Cheap to clone, `Send + Sync`; a runtime's `StdioServer`,
/// `HttpServer` and `InMemoryServer` hand one out with `handle()`, and a handler has one in
/// `ctx.server()`.
///
/// Each method returns at once (it never waits on a client): what it sends leaves in order
/// with everything else the session sends. Once the server has stopped, they do nothing.
/// Lists change for every session at once; only sessions told lists may change
/// ([`ServerConfig::announce_changes`](super::ServerConfig::announce_changes)) hear
/// `list_changed`.
pub struct ServerHandle<H> {
    sink: Arc<dyn BroadcastSink<H>>,
}

impl<H> Clone for ServerHandle<H> {
    fn clone(&self) -> Self {
        Self { sink: self.sink.clone() }
    }
}

impl<H> fmt::Debug for ServerHandle<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerHandle")
    }
}

impl<H: Clone + Send + 'static> ServerHandle<H> {
    /// A handle whose commands go to `sink` (for runtimes).
    pub fn new(sink: Arc<dyn BroadcastSink<H>>) -> Self {
        Self { sink }
    }

    /// Changes the registry every session shares, then tells each session's client that the
    /// lists named in `changed` changed (`notifications/tools/list_changed` …). A client
    /// that lists again after that notification sees the change. A change that panics is
    /// dropped: the registry stays as it was and nothing is sent.
    pub fn change_registry(
        &self,
        changed: &[ListKind],
        change: impl FnOnce(&mut Registry<H>) + Send + 'static,
    ) {
        let changed = changed.to_vec();
        self.sink.send(Broadcast::ChangeRegistry { changed, change: Box::new(change) });
    }

    /// Changes the registry through one of its by-value builder methods (the typed `tool`
    /// and `prompt`) and announces `list`. The change is already made on a copy (see
    /// [`Broadcast::ChangeRegistry`]), so the registry is moved into the builder, not cloned.
    fn rebuild(
        &self,
        list: ListKind,
        build: impl FnOnce(Registry<H>) -> Registry<H> + Send + 'static,
    ) {
        self.change_registry(&[list], move |r| *r = build(std::mem::take(r)));
    }

    /// Removes a tool by name and announces it (also when there was none of that name).
    pub fn remove_tool(&self, name: &str) {
        let name = name.to_owned();
        self.change_registry(&[ListKind::Tools], move |r| {
            r.remove_tool(&name);
        });
    }

    /// Removes a prompt by name and announces it (also when there was none of that name).
    pub fn remove_prompt(&self, name: &str) {
        let name = name.to_owned();
        self.change_registry(&[ListKind::Prompts], move |r| {
            r.remove_prompt(&name);
        });
    }

    /// Removes a resource by URI and announces it (also when there was none with that URI).
    pub fn remove_resource(&self, uri: &str) {
        let uri = uri.to_owned();
        self.change_registry(&[ListKind::Resources], move |r| {
            r.remove_resource(&uri);
        });
    }

    /// Tells the sessions subscribed to `uri` (`resources/subscribe`) that it changed
    /// (`notifications/resources/updated`); the others hear nothing.
    pub fn resource_updated(&self, uri: &str) {
        self.sink.send(Broadcast::ResourceUpdated { uri: uri.to_owned() });
    }

    /// Sends a log record (`notifications/message`), related to no request, to every session
    /// whose client admits `level` (`logging/setLevel`; every level when it set none).
    pub fn log(&self, level: LoggingLevel, data: Value) {
        self.sink.send(Broadcast::Log { level, logger: None, data });
    }

    /// Hands the server what another process of its fleet sent it (a fleet store's
    /// receiving side calls this; see [`Fleet`](crate::http::server::Fleet)).
    pub fn deliver_fleet(&self, message: crate::http::server::FleetMessage) {
        self.sink.send(Broadcast::Fleet(message));
    }

    /// [`log`](Self::log), naming the logger the record comes from.
    pub fn log_as(&self, logger: &str, level: LoggingLevel, data: Value) {
        self.sink.send(Broadcast::Log { level, logger: Some(logger.to_owned()), data });
    }
}

impl<C: Send + 'static> ServerHandle<AsyncHandler<C>> {
    /// Adds a typed tool (as [`Registry::tool`] does, with the registry's state), or
    /// replaces the one of that name, and announces it.
    pub fn add_tool<F, Args>(&self, name: &str, description: &str, f: F)
    where
        F: AsyncCallable<C, Args>,
        F::Output: IntoToolResult,
        Args: 'static,
    {
        let (name, description) = (name.to_owned(), description.to_owned());
        self.rebuild(ListKind::Tools, move |r| r.tool(&name, &description, f));
    }

    /// Adds a typed prompt (as [`Registry::prompt`] does), or replaces the one of that
    /// name, and announces it.
    pub fn add_prompt<F, Args>(&self, name: &str, description: &str, f: F)
    where
        F: AsyncCallable<C, Args>,
        F::Output: IntoPromptResult,
        Args: 'static,
    {
        let (name, description) = (name.to_owned(), description.to_owned());
        self.rebuild(ListKind::Prompts, move |r| r.prompt(&name, &description, f));
    }

    /// Adds a resource and the handler that reads it (as [`Registry::resource`] does), or
    /// replaces the one with that URI, and announces it.
    pub fn add_resource<F, Fut>(&self, resource: Resource, f: F)
    where
        F: Fn(C, ReadResourceParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        self.change_registry(&[ListKind::Resources], move |r| {
            r.resource(resource, f);
        });
    }
}

impl<C: Clone + 'static> ServerHandle<SyncHandler<C>> {
    /// Adds a typed tool (as [`Registry::tool`] does, with the registry's state), or
    /// replaces the one of that name, and announces it.
    pub fn add_tool<F, Args>(&self, name: &str, description: &str, f: F)
    where
        F: SyncCallable<C, Args>,
        F::Output: IntoToolResult,
        Args: 'static,
    {
        let (name, description) = (name.to_owned(), description.to_owned());
        self.rebuild(ListKind::Tools, move |r| r.tool(&name, &description, f));
    }

    /// Adds a typed prompt (as [`Registry::prompt`] does), or replaces the one of that
    /// name, and announces it.
    pub fn add_prompt<F, Args>(&self, name: &str, description: &str, f: F)
    where
        F: SyncCallable<C, Args>,
        F::Output: IntoPromptResult,
        Args: 'static,
    {
        let (name, description) = (name.to_owned(), description.to_owned());
        self.rebuild(ListKind::Prompts, move |r| r.prompt(&name, &description, f));
    }

    /// Adds a resource and the handler that reads it (as [`Registry::resource`] does), or
    /// replaces the one with that URI, and announces it.
    pub fn add_resource<F>(&self, resource: Resource, f: F)
    where
        F: Fn(&C, ReadResourceParams) -> HandlerResult<ReadResourceResult> + Send + Sync + 'static,
    {
        self.change_registry(&[ListKind::Resources], move |r| {
            r.resource(resource, f);
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::schema::ReadResourceResult;

    type Handler = SyncHandler<()>;

    /// Keeps what a handle sends.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<Broadcast<Handler>>>);

    impl BroadcastSink<Handler> for Recorder {
        fn send(&self, command: Broadcast<Handler>) {
            self.0.lock().expect("not poisoned").push(command);
        }
    }

    /// A handle and the commands it sent so far.
    fn recorded() -> (ServerHandle<Handler>, Arc<Recorder>) {
        let recorder = Arc::new(Recorder::default());
        (ServerHandle::new(recorder.clone()), recorder)
    }

    /// Applies each recorded registry change to `registry`, returning the lists announced.
    fn apply(recorder: &Recorder, registry: &mut Registry<Handler>) -> Vec<Vec<ListKind>> {
        let commands = std::mem::take(&mut *recorder.0.lock().expect("not poisoned"));
        let apply = |command| match command {
            Broadcast::ChangeRegistry { changed, change } => {
                change(registry);
                changed
            }
            other => panic!("a registry change, not {other:?}"),
        };
        commands.into_iter().map(apply).collect()
    }

    #[test]
    fn each_add_and_remove_changes_its_own_list_and_announces_only_that() {
        let (handle, recorder) = recorded();
        let mut registry = Registry::new();
        handle.add_tool("t", "A tool", || "tool");
        handle.add_prompt("p", "A prompt", || "prompt".to_owned());
        let resource = Resource::new("zest://r", "r");
        handle.add_resource(resource, |_, _| Ok(ReadResourceResult::text("zest://r", None, "r")));
        let announced = apply(&recorder, &mut registry);
        assert_eq!(announced, [[ListKind::Tools], [ListKind::Prompts], [ListKind::Resources]]);
        assert_eq!(registry.tools().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["t"]);

        handle.remove_tool("t");
        handle.remove_prompt("p");
        handle.remove_resource("zest://r");
        let mut after = registry.clone();
        let announced = apply(&recorder, &mut after);
        assert_eq!(announced, [[ListKind::Tools], [ListKind::Prompts], [ListKind::Resources]]);
        assert!(registry.remove_prompt("p").is_some() && after.remove_prompt("p").is_none());
        let uri = "zest://r";
        assert!(registry.remove_resource(uri).is_some() && after.remove_resource(uri).is_none());
        assert_eq!(after.tools().count(), 0);
    }

    #[test]
    fn updates_and_logs_go_to_the_sink_as_they_are() {
        let (handle, recorder) = recorded();
        handle.resource_updated("zest://r");
        handle.log_as("db", LoggingLevel::Warning, json!("slow"));
        let sent = format!("{:?}", recorder.0.lock().expect("not poisoned"));
        assert!(
            sent.contains("zest://r") && sent.contains("db") && sent.contains("slow"),
            "{sent}"
        );
        assert_eq!(format!("{:?}", handle.clone()), "ServerHandle");
    }
}
