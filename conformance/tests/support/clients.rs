//! Each runtime's HTTP client behind one small blocking interface, so a check written once
//! runs with every client. Every client answers sampling with `canned: <the prompt>`,
//! declines every elicitation, lists the one root [`ROOT`], and every wait is bounded (a
//! panic past [`LIMIT`]).
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use zest_core::api::{CallError, ClientApi};
use zest_core::client::ServerNotification;
use zest_core::framing::lines::DEFAULT_MAX_LINE;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::ConnectError;
use zest_core::schema::{
    CallToolResult, CreateMessageParams, CreateMessageResult, ElicitResult, GetPromptResult,
    ListRootsResult, LoggingLevel, LoggingMessageParams, ProgressParams, ReadResourceResult,
    SamplingContent,
};

/// A module per check, each with one test per client runtime: `check::<Tokio>()` and the
/// others. The including file declares this module as `clients` with `#[macro_use]`.
#[allow(unused_macros)] // not every including file runs a check per client
macro_rules! with_every_client {
    ($($check:ident),* $(,)?) => {
        $(mod $check {
            use super::clients::{Blocking, Smol, Tokio};

            #[test]
            fn tokio() {
                super::$check::<Tokio>();
            }

            #[test]
            fn smol() {
                super::$check::<Smol>();
            }

            #[test]
            fn blocking() {
                super::$check::<Blocking>();
            }
        })*
    };
}

/// The longest any one step may take before the test fails instead of hanging.
pub const LIMIT: Duration = Duration::from_secs(30);

/// The one root every client lists.
pub const ROOT: &str = "file:///tmp/zest-root";

/// The roots every client lists: [`ROOT`].
pub fn roots() -> ListRootsResult {
    serde_json::from_value(json!({"roots": [{"uri": ROOT, "name": "zest root"}]}))
        .expect("a valid roots result")
}

/// Every client's answer to an elicitation: declined.
pub fn declined() -> ElicitResult {
    serde_json::from_value(json!({"action": "decline"})).expect("a valid elicitation result")
}

/// A connected zest client of one runtime, driven from the test's thread.
pub trait Peer: Sized {
    /// `tokio`, `smol` or `blocking`.
    const RUNTIME: &'static str;
    /// Connects to `endpoint` (Streamable HTTP unless it says otherwise) and initializes,
    /// taking messages of up to `max_message` bytes; the handshake's outcome as it is.
    fn try_connect_with(endpoint: HttpEndpoint, max_message: usize) -> Result<Self, ConnectError> {
        Self::try_connect_in(endpoint, max_message, false)
    }
    /// [`try_connect_with`](Self::try_connect_with); with `modern`, the client prefers
    /// 2026-07-28 (the era ladder: `server/discover` first).
    fn try_connect_in(
        endpoint: HttpEndpoint,
        max_message: usize,
        modern: bool,
    ) -> Result<Self, ConnectError>;
    /// Connects to `url` preferring 2026-07-28, which must succeed.
    fn connect_modern(url: &str) -> Self {
        Self::try_connect_in(HttpEndpoint::new(url), DEFAULT_MAX_LINE, true)
            .unwrap_or_else(|e| panic!("the {} client connects: {e}", Self::RUNTIME))
    }
    /// The revision the client speaks.
    fn revision(&self) -> &'static str;
    /// [`try_connect_with`](Self::try_connect_with), which must succeed.
    fn connect_with(endpoint: HttpEndpoint, max_message: usize) -> Self {
        Self::try_connect_with(endpoint, max_message)
            .unwrap_or_else(|e| panic!("the {} client connects: {e}", Self::RUNTIME))
    }
    /// Connects to `endpoint` with the default message limit.
    fn connect_to(endpoint: HttpEndpoint) -> Self {
        Self::connect_with(endpoint, DEFAULT_MAX_LINE)
    }
    /// Connects to the Streamable HTTP endpoint at `url` and initializes.
    fn connect(url: &str) -> Self {
        Self::connect_to(HttpEndpoint::new(url))
    }
    /// The `serverInfo.name` the handshake settled.
    fn server_name(&self) -> String;
    /// `tools/call`, which must succeed at the protocol level.
    fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        self.try_call(tool, arguments).unwrap_or_else(|e| panic!("{tool}: {e}"))
    }
    /// `tools/call`, its outcome as it is.
    fn try_call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, CallError>;
    /// `ping`, which must succeed.
    fn ping(&self);
    /// The names of every tool, over every page of `tools/list`.
    fn tool_names(&self) -> Vec<String>;
    /// The next notification the server sent within `wait`, if one came.
    fn notification_within(&self, wait: Duration) -> Option<ServerNotification>;
    /// `tools/call` asking for progress, each value handed to `on_progress` as it comes;
    /// the outcome as it is.
    fn try_call_reporting(
        &self,
        tool: &str,
        arguments: Value,
        on_progress: Box<dyn FnMut(ProgressParams) + Send>,
    ) -> Result<CallToolResult, CallError>;
    /// `tools/call` asking for progress; the result and the progress values, in order.
    fn call_with_progress(&self, tool: &str, arguments: Value) -> (CallToolResult, Vec<f64>) {
        self.call_with_progress_as(tool, arguments, |p| p.progress)
    }
    /// `tools/call` asking for progress; the result and `pick` of each progress
    /// notification, in order.
    fn call_with_progress_as<T: Send + 'static>(
        &self,
        tool: &str,
        arguments: Value,
        pick: fn(&ProgressParams) -> T,
    ) -> (CallToolResult, Vec<T>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let on_progress = Box::new(move |p: ProgressParams| sink.lock().unwrap().push(pick(&p)));
        let result = self.try_call_reporting(tool, arguments, on_progress);
        let result = result.unwrap_or_else(|e| panic!("{}, {tool}: {e}", Self::RUNTIME));
        let seen = std::mem::take(&mut *seen.lock().unwrap());
        (result, seen)
    }
    /// `resources/read`.
    fn read_resource(&self, uri: &str) -> ReadResourceResult;
    /// `prompts/get`.
    fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> GetPromptResult;
    /// `logging/setLevel`, which must succeed.
    fn set_logging_level(&self, level: LoggingLevel);
    /// The next `n` log records the server sent (other notifications are skipped).
    fn logs(&self, n: usize) -> Vec<LoggingMessageParams> {
        let mut logs = Vec::new();
        while logs.len() < n {
            match self.notification_within(LIMIT) {
                Some(ServerNotification::LoggingMessage(m)) => logs.push(m),
                Some(_) => {}
                None => panic!("{}: no log record within 30 s after {logs:?}", Self::RUNTIME),
            }
        }
        logs
    }
    /// Closes the session (over Streamable HTTP: a DELETE) and waits for the client to end.
    fn close(self);
}

/// The canned model's answer to `params`: `canned: <every text of every message>`.
pub fn canned(params: &CreateMessageParams) -> CreateMessageResult {
    let asked: String = params
        .messages
        .iter()
        .flat_map(|m| m.content.as_slice())
        .filter_map(SamplingContent::as_text)
        .collect();
    let answer = json!({
        "role": "assistant", "model": "canned",
        "content": {"type": "text", "text": format!("canned: {asked}")}
    });
    serde_json::from_value(answer).expect("a valid sampling result")
}

/// Every text block of `result`, joined.
pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

fn prompt_args(arguments: &[(&str, &str)]) -> BTreeMap<String, String> {
    arguments.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// zest-tokio's client on a runtime of its own (one worker thread drives the session).
pub struct Tokio {
    rt: tokio::runtime::Runtime,
    client: zest_tokio::Client,
    notes: zest_tokio::Notifications,
}

impl Tokio {
    fn wait<T>(&self, fut: impl std::future::Future<Output = T>) -> T {
        self.rt.block_on(async {
            tokio::time::timeout(LIMIT, fut).await.expect("the tokio client answers within 30 s")
        })
    }
}

impl Peer for Tokio {
    const RUNTIME: &'static str = "tokio";

    fn try_connect_in(
        endpoint: HttpEndpoint,
        max_message: usize,
        modern: bool,
    ) -> Result<Self, ConnectError> {
        use zest_tokio::core::handler::AsyncClientHandlers;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let handlers = AsyncClientHandlers::default()
            .on_sampling(|p| async move { Ok(canned(&p)) })
            .on_elicitation(|_| async move { Ok(declined()) })
            .on_roots(|| async move { Ok(roots()) });
        let mut options = zest_tokio::ClientOptions::new("tokio-peer", "1").handlers(handlers);
        options.config.max_message = max_message;
        options = options.with_config(|c| if modern { c.prefer_modern() } else { c.session_era() });
        let client = rt
            .block_on(async {
                tokio::time::timeout(LIMIT, zest_tokio::Client::connect_to(endpoint, options)).await
            })
            .expect("connects within 30 s")?;
        let notes = client.notifications();
        Ok(Self { rt, client, notes })
    }

    fn server_name(&self) -> String {
        self.client.negotiated().server_info.name.clone()
    }

    fn revision(&self) -> &'static str {
        self.client.negotiated().protocol_version.as_str()
    }

    fn try_call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        self.wait(self.client.call_tool(tool, arguments))
    }

    fn ping(&self) {
        self.wait(self.client.ping()).expect("the tokio client pings");
    }

    fn tool_names(&self) -> Vec<String> {
        let tools = self.wait(self.client.list_all_tools()).expect("tools/list");
        tools.into_iter().map(|t| t.name).collect()
    }

    fn notification_within(&self, wait: Duration) -> Option<ServerNotification> {
        self.rt.block_on(async { tokio::time::timeout(wait, self.notes.recv()).await.ok()?.ok() })
    }

    fn try_call_reporting(
        &self,
        tool: &str,
        arguments: Value,
        on_progress: Box<dyn FnMut(ProgressParams) + Send>,
    ) -> Result<CallToolResult, CallError> {
        self.wait(self.client.call_tool_with_progress(tool, arguments, on_progress))
    }

    fn read_resource(&self, uri: &str) -> ReadResourceResult {
        self.wait(self.client.read_resource(uri)).unwrap_or_else(|e| panic!("{uri}: {e}"))
    }

    fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> GetPromptResult {
        let call = self.client.get_prompt(name, prompt_args(arguments));
        self.wait(call).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn set_logging_level(&self, level: LoggingLevel) {
        self.wait(self.client.set_logging_level(level)).expect("the tokio client sets the level");
    }

    fn close(self) {
        self.wait(self.client.close()).expect("the tokio client closes");
    }
}

/// zest-smol's client; its session runs on smol's global executor.
pub struct Smol {
    client: zest_smol::Client,
    notes: smol::channel::Receiver<ServerNotification>,
}

fn smol_wait<T>(fut: impl std::future::Future<Output = T>) -> T {
    use smol::future::FutureExt as _;
    smol::block_on(fut.or(async {
        smol::Timer::after(LIMIT).await;
        panic!("the smol client did not answer within 30 s")
    }))
}

impl Peer for Smol {
    const RUNTIME: &'static str = "smol";

    fn try_connect_in(
        endpoint: HttpEndpoint,
        max_message: usize,
        modern: bool,
    ) -> Result<Self, ConnectError> {
        let handlers = zest_smol::AsyncClientHandlers::default()
            .on_sampling(|p| async move { Ok(canned(&p)) })
            .on_elicitation(|_| async move { Ok(declined()) })
            .on_roots(|| async move { Ok(roots()) });
        let mut options = zest_smol::ClientOptions::new("smol-peer", "1").handlers(handlers);
        options.config.max_message = max_message;
        options = options.with_config(|c| if modern { c.prefer_modern() } else { c.session_era() });
        let client = smol_wait(zest_smol::Client::connect_to(endpoint, options))?;
        let notes = client.notifications();
        Ok(Self { client, notes })
    }

    fn server_name(&self) -> String {
        self.client.negotiated().server_info.name.clone()
    }

    fn revision(&self) -> &'static str {
        self.client.negotiated().protocol_version.as_str()
    }

    fn try_call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        smol_wait(self.client.call_tool(tool, arguments))
    }

    fn ping(&self) {
        smol_wait(self.client.ping()).expect("the smol client pings");
    }

    fn tool_names(&self) -> Vec<String> {
        let tools = smol_wait(self.client.list_all_tools()).expect("tools/list");
        tools.into_iter().map(|t| t.name).collect()
    }

    fn notification_within(&self, wait: Duration) -> Option<ServerNotification> {
        use smol::future::FutureExt as _;
        smol::block_on(async { self.notes.recv().await.ok() }.or(async {
            smol::Timer::after(wait).await;
            None
        }))
    }

    fn try_call_reporting(
        &self,
        tool: &str,
        arguments: Value,
        on_progress: Box<dyn FnMut(ProgressParams) + Send>,
    ) -> Result<CallToolResult, CallError> {
        smol_wait(self.client.call_tool_with_progress(tool, arguments, on_progress))
    }

    fn read_resource(&self, uri: &str) -> ReadResourceResult {
        smol_wait(self.client.read_resource(uri)).unwrap_or_else(|e| panic!("{uri}: {e}"))
    }

    fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> GetPromptResult {
        let call = self.client.get_prompt(name, prompt_args(arguments));
        smol_wait(call).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn set_logging_level(&self, level: LoggingLevel) {
        smol_wait(self.client.set_logging_level(level)).expect("the smol client sets the level");
    }

    fn close(self) {
        smol_wait(self.client.close()).expect("the smol client closes");
    }
}

/// zest-blocking's client; every call blocks the calling thread.
pub struct Blocking(zest_blocking::Client);

impl Peer for Blocking {
    const RUNTIME: &'static str = "blocking";

    fn try_connect_in(
        endpoint: HttpEndpoint,
        max_message: usize,
        modern: bool,
    ) -> Result<Self, ConnectError> {
        use zest_blocking::core::handler::SyncClientHandlers;
        let handlers = SyncClientHandlers::default()
            .on_sampling(|p| Ok(canned(&p)))
            .on_elicitation(|_| Ok(declined()))
            .on_roots(|| Ok(roots()));
        let mut options =
            zest_blocking::ClientOptions::new("blocking-peer", "1").handlers(handlers);
        options.config.max_message = max_message;
        options = options.with_config(|c| if modern { c.prefer_modern() } else { c.session_era() });
        zest_blocking::Client::connect_to(endpoint, options).map(Self)
    }

    fn server_name(&self) -> String {
        self.0.negotiated().server_info.name.clone()
    }

    fn revision(&self) -> &'static str {
        self.0.negotiated().protocol_version.as_str()
    }

    fn try_call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        self.0.call_tool(tool, arguments)
    }

    fn ping(&self) {
        self.0.ping().expect("the blocking client pings");
    }

    fn tool_names(&self) -> Vec<String> {
        let tools = self.0.list_all_tools().expect("tools/list");
        tools.into_iter().map(|t| t.name).collect()
    }

    fn notification_within(&self, wait: Duration) -> Option<ServerNotification> {
        self.0.notifications().recv_timeout(wait)
    }

    fn try_call_reporting(
        &self,
        tool: &str,
        arguments: Value,
        on_progress: Box<dyn FnMut(ProgressParams) + Send>,
    ) -> Result<CallToolResult, CallError> {
        self.0.call_tool_with_progress(tool, arguments, on_progress)
    }

    fn read_resource(&self, uri: &str) -> ReadResourceResult {
        self.0.read_resource(uri).unwrap_or_else(|e| panic!("{uri}: {e}"))
    }

    fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> GetPromptResult {
        self.0.get_prompt(name, prompt_args(arguments)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn set_logging_level(&self, level: LoggingLevel) {
        self.0.set_logging_level(level).expect("the blocking client sets the level");
    }

    fn close(self) {
        self.0.close().expect("the blocking client closes");
    }
}
