//! `zest bridge`: one MCP server offered again on another transport. `zest bridge URL` is a
//! stdio server in front of a remote HTTP one; `zest bridge --http ADDR -- CMD` is an HTTP
//! server in front of a stdio one.
//!
//! The bridge is a client of the upstream server and a server to its own clients, and
//! forwards at the level of MCP requests: tool calls (with their progress), resource
//! reads and templates, prompts and completions; the upstream's log records, list changes
//! (the bridge lists again and changes its own lists) and resource updates go to its
//! clients, and a call its client cancels is cancelled upstream. The upstream server's own
//! requests (sampling, elicitation, roots) are asked of the client of the newest call in
//! flight, and refused when there is none.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use zest_blocking::core::client::ServerNotification;
use zest_blocking::core::error::RequestError;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::core::jsonrpc::{codes, ErrorObject};
use zest_blocking::schema::methods::{CallTool, Complete, GetPrompt, ReadResource};
use zest_blocking::schema::{
    CallToolParams, CallToolResult, ProgressParams, Prompt, Resource, ResourceTemplate, Tool,
};
use zest_blocking::RequestOptions;
use zest_blocking::{
    CallError, Client, ClientApi, ListKind, PeerApi, Registry, RequestContext, ServerConfig,
    ServerHandle, StdioServer,
};

use crate::fail::Failure;
use crate::guard::Guard;
use crate::target::TargetArgs;

/// Where the bridge offers the upstream server.
pub(crate) enum Front {
    /// Over stdio, to the process that started the bridge.
    Stdio,
    /// Over HTTP at this address, to the clients this guard lets through.
    Http(String, Guard),
}

/// Connects to the upstream server and serves it on `front` until the upstream session or
/// the stdio client ends.
pub(crate) fn bridge(target: &TargetArgs, front: &Front) -> Result<(), Failure> {
    let in_flight = InFlight::default();
    let upstream = target.connect(in_flight.handlers())?;
    let negotiated = upstream.negotiated().clone();
    let info = &negotiated.server_info;
    let mut config = ServerConfig::new(&info.name, &info.version);
    config.instructions.clone_from(&negotiated.instructions);
    let mut lists = Lists::default();
    for list in [ListKind::Tools, ListKind::Resources, ListKind::Prompts] {
        lists.fetch(&upstream, list)?;
    }
    let registry = lists.registry(&upstream, &in_flight);
    match front {
        Front::Stdio => {
            let server = StdioServer::stdio(config, registry);
            relay_notifications(&upstream, lists, in_flight.clone(), server.handle());
            let _ = server.stopped();
        }
        Front::Http(addr, guard) => {
            let server = guard
                .serve(addr, config, registry)
                .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))?;
            eprintln!("zest bridge: {} on {}", target.describe(), server.url());
            relay_notifications(&upstream, lists, in_flight.clone(), server.handle());
            // The bridge lives as long as its upstream session.
            while upstream.close_reason().is_none() {
                thread::sleep(Duration::from_millis(100));
            }
            server.shutdown();
        }
    }
    let reason = upstream.close_reason();
    let _ = upstream.close();
    match (front, reason) {
        (Front::Http(..), Some(reason)) => {
            Err(Failure::broke(format!("the upstream session ended: {reason}")))
        }
        _ => Ok(()),
    }
}

/// What the upstream server lists, as last fetched.
#[derive(Clone, Default)]
struct Lists {
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
}

impl Lists {
    /// Lists `list` again (nothing, when the upstream does not offer it).
    fn fetch(&mut self, upstream: &Client, list: ListKind) -> Result<(), Failure> {
        let offers = &upstream.negotiated().capabilities;
        let failed = |what: &'static str| move |e: CallError| Failure::call(what, &e);
        match list {
            ListKind::Tools if offers.tools.is_some() => {
                self.tools = upstream.list_all_tools().map_err(failed("tools/list"))?;
            }
            ListKind::Resources if offers.resources.is_some() => {
                self.resources = upstream.list_all_resources().map_err(failed("resources/list"))?;
                let templates = upstream.list_all_resource_templates();
                self.templates = templates.map_err(failed("resources/templates/list"))?;
            }
            ListKind::Prompts if offers.prompts.is_some() => {
                self.prompts = upstream.list_all_prompts().map_err(failed("prompts/list"))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A registry offering every listed item, each forwarded to `upstream`.
    fn registry(&self, upstream: &Client, in_flight: &InFlight) -> Registry {
        let mut r = Registry::new();
        for tool in self.tools.iter().cloned() {
            let (up, in_flight) = (upstream.clone(), in_flight.clone());
            r.raw_tool(tool, move |ctx, params| {
                let _asking = in_flight.enter(ctx);
                forwarded(|| call_tool(&up, ctx, params.clone()))
            });
        }
        for resource in self.resources.iter().cloned() {
            let up = upstream.clone();
            r.resource(resource, move |_, params| {
                forwarded(|| up.request::<ReadResource>(params.clone()))
            });
        }
        for template in self.templates.iter().cloned() {
            let up = upstream.clone();
            r.resource_template(template, move |_, params, _| {
                forwarded(|| up.request::<ReadResource>(params.clone()))
            });
        }
        for prompt in self.prompts.iter().cloned() {
            let up = upstream.clone();
            r.raw_prompt(prompt, move |_, params| {
                forwarded(|| up.request::<GetPrompt>(params.clone()))
            });
        }
        if upstream.negotiated().capabilities.completions.is_some() {
            let up = upstream.clone();
            r.completion(move |_, params| forwarded(|| up.request::<Complete>(params.clone())));
        }
        r
    }
}

/// `tools/call` upstream, its progress reported to this call's client, and cancelled
/// upstream once this call's client cancels it.
fn call_tool(
    up: &Client,
    ctx: &RequestContext,
    params: CallToolParams,
) -> Result<CallToolResult, CallError> {
    let reporter = ctx.clone();
    let on_progress = Box::new(move |p: ProgressParams| {
        // Without a progress token from the client there is nothing to send.
        let _ = reporter.progress(p.progress, p.total, p.message);
    });
    let pending = up.start_with_progress::<CallTool>(
        params,
        RequestOptions::with_progress(),
        Some(on_progress),
    );
    let done = Arc::new(AtomicBool::new(false));
    if let Some(cancel) = pending.cancel_handle() {
        let (ctx, done) = (ctx.clone(), done.clone());
        thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                if ctx.is_cancelled() {
                    cancel.cancel();
                    return;
                }
                thread::sleep(CANCEL_POLL);
            }
        });
    }
    let outcome = pending.wait();
    done.store(true, Ordering::Release);
    outcome
}

/// The tool calls the bridge forwards now, newest last, with their clients' contexts: the
/// upstream server's own requests (sampling, elicitation, roots) are asked of the client of
/// the newest one (the client API does not say which call such a request belongs to).
#[derive(Clone, Default)]
struct InFlight(Arc<Mutex<Vec<(u64, RequestContext)>>>);

/// A forwarded call's place in [`InFlight`], left when dropped.
struct Entered {
    in_flight: InFlight,
    token: u64,
}

impl Drop for Entered {
    fn drop(&mut self) {
        self.in_flight.lock().retain(|(t, _)| *t != self.token);
    }
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, RequestContext)>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes a forwarded call, for as long as the guard lives.
    fn enter(&self, ctx: &RequestContext) -> Entered {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let token = NEXT.fetch_add(1, Ordering::Relaxed);
        self.lock().push((token, ctx.clone()));
        Entered { in_flight: self.clone(), token }
    }

    /// The upstream client's handlers: each asks the newest call's client.
    fn handlers(&self) -> SyncClientHandlers {
        let (sampling, elicitation, roots) = (self.clone(), self.clone(), self.clone());
        SyncClientHandlers::default()
            .on_sampling(move |p| sampling.ask(|ctx| ctx.create_message(p)))
            .on_elicitation(move |p| elicitation.ask(|ctx| ctx.elicit(p)))
            .on_roots(move || roots.ask(|ctx| ctx.list_roots()))
    }

    fn ask<T>(
        &self,
        ask: impl FnOnce(&RequestContext) -> Result<T, CallError>,
    ) -> Result<T, ErrorObject> {
        let newest = self.lock().last().map(|(_, ctx)| ctx.clone());
        let Some(ctx) = newest else {
            let why = "the bridge has no call in flight whose client it could ask";
            return Err(ErrorObject::new(codes::INVALID_REQUEST, why));
        };
        ask(&ctx).map_err(as_error)
    }
}

/// How often a forwarded call looks whether its client cancelled it.
const CANCEL_POLL: Duration = Duration::from_millis(10);

/// The upstream's answer to `request` as this server's: its JSON-RPC error as it came,
/// anything else (the upstream session broke, timed out) as an internal error that says so.
/// When the upstream server ended the session, the client has started a new one, and the
/// request is made once more on it.
fn forwarded<T>(request: impl Fn() -> Result<T, CallError>) -> Result<T, ErrorObject> {
    let outcome = match request() {
        Err(CallError::Request(RequestError::SessionExpired)) => request(),
        outcome => outcome,
    };
    outcome.map_err(as_error)
}

/// A failed request as the error to answer with: the peer's JSON-RPC error as it came,
/// anything else (a session broke, timed out) as an internal error that says so.
fn as_error(e: CallError) -> ErrorObject {
    match e {
        CallError::Request(RequestError::Remote(error)) => error,
        other => ErrorObject::new(codes::INTERNAL_ERROR, format!("through the bridge: {other}")),
    }
}

/// Passes the upstream's notifications on, on a thread of its own, until its session ends.
/// A list change is listed again here, then the bridge's registry replaced and the change
/// announced.
fn relay_notifications(
    upstream: &Client,
    mut lists: Lists,
    in_flight: InFlight,
    handle: ServerHandle,
) {
    let up = upstream.clone();
    thread::spawn(move || {
        let notes = up.notifications();
        while up.close_reason().is_none() {
            let Some(note) = notes.recv_timeout(Duration::from_millis(500)) else { continue };
            let changed = match note {
                ServerNotification::LoggingMessage(m) => {
                    let logger = m.logger.unwrap_or_else(|| "upstream".to_owned());
                    handle.log_as(&logger, m.level, m.data);
                    continue;
                }
                ServerNotification::ResourceUpdated(p) => {
                    handle.resource_updated(&p.uri);
                    continue;
                }
                ServerNotification::ToolListChanged => ListKind::Tools,
                ServerNotification::ResourceListChanged => ListKind::Resources,
                ServerNotification::PromptListChanged => ListKind::Prompts,
                // Elicitation completions (and kinds newer than this build) concern requests
                // the bridge never forwards.
                _ => continue,
            };
            if let Err(e) = lists.fetch(&up, changed) {
                eprintln!("zest bridge: could not list again after a change: {e}");
                continue;
            }
            let fresh = lists.registry(&up, &in_flight);
            handle.change_registry(&[changed], move |r| *r = fresh);
        }
    });
}
