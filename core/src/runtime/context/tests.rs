use serde_json::json;
use std::sync::Mutex;

use super::*;
use crate::error::{CloseReason, RequestError};
use crate::schema::methods::ListRoots;
use crate::schema::ProtocolVersion;
use crate::server::{Registry, Server, ServerConfig};
use crate::testkit::VirtualClock;

/// A blocking-style link (a call returns its result) that records what reaches the "loop"
/// and answers peer requests with a canned outcome.
#[derive(Clone)]
struct Recording {
    seen: Arc<Mutex<Vec<String>>>,
    peer_outcome: Result<RawJson, CallError>,
}

impl Link for Recording {
    type Reply<'a, T: 'a> = T;
    type Server = ();

    fn server(&self) -> &() {
        &()
    }

    fn report(&self, report: Report) -> Result<(), UsageError> {
        self.seen.lock().unwrap().push(format!("{report:?}"));
        Ok(())
    }

    fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        let seen = format!("{} for {} with {}", call.method, call.related, call.params.get());
        self.seen.lock().unwrap().push(seen);
        self.peer_outcome.clone()
    }

    fn ready<'a, T: Send + 'a, U: 'a>(value: T, f: fn(T) -> U) -> U {
        f(value)
    }

    fn map<'a, T: 'a, U: 'a>(reply: T, f: fn(T) -> U) -> U {
        f(reply)
    }
}

fn context(peer_outcome: Result<RawJson, CallError>) -> (RequestContext<Recording>, CancelFlag) {
    let link = Recording { seen: Arc::default(), peer_outcome };
    let flag = CancelFlag::new();
    (RequestContext::new(RequestId::Number(7), flag.clone(), link), flag)
}

fn seen(ctx: &RequestContext<Recording>) -> Vec<String> {
    ctx.link().seen.lock().unwrap().clone()
}

#[test]
fn a_context_names_its_own_request_in_everything_it_sends() {
    let (ctx, _) = context(Ok(RawJson::from_serialize(&json!({"roots": []}))));
    assert_eq!(ctx.request_id(), &RequestId::Number(7));
    ctx.progress(1.0, Some(2.0), None).unwrap();
    ctx.log(LoggingLevel::Info, json!("plain")).unwrap();
    ctx.log_as("db", LoggingLevel::Error, json!("named")).unwrap();
    let roots = ctx.list_roots().unwrap();
    assert!(roots.roots.is_empty());
    let seen = seen(&ctx);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen[0].starts_with("Progress { id: Number(7), progress: 1.0, total: Some(2.0)"));
    assert!(seen[1].contains("related: Number(7)") && seen[1].contains("logger: None"));
    assert!(seen[2].contains("logger: Some(\"db\")"), "{}", seen[2]);
    assert_eq!(seen[3], "roots/list for 7 with {}");
}

#[test]
fn cancellation_is_seen_by_every_clone() {
    let (ctx, flag) = context(Err(CallError::Usage(UsageError::Closed)));
    let clone = ctx.clone();
    assert!(!ctx.is_cancelled());
    flag.cancel();
    assert!(ctx.is_cancelled() && clone.is_cancelled());
    assert!(format!("{ctx:?}").contains("cancelled: true"));
}

#[test]
fn a_peer_request_fails_with_the_loops_error_or_an_unusable_result() {
    let closed = CallError::Request(RequestError::Closed(CloseReason::Local));
    let (ctx, _) = context(Err(closed.clone()));
    assert_eq!(ctx.peer_request::<ListRoots>(Default::default()).unwrap_err(), closed);
    let (ctx, _) = context(Ok(RawJson::from_serialize(&json!({"nope": 1}))));
    let err = ctx.list_roots().unwrap_err();
    assert!(matches!(err, CallError::Request(RequestError::InvalidResult(_))), "{err:?}");
}

#[test]
fn reports_and_peer_calls_are_applied_to_the_server_machine() {
    let now = VirtualClock::new().now();
    let config = ServerConfig::new("ctx-test", "0");
    let mut server: Server<()> = Server::new(config, Registry::default(), now);
    let progress =
        Report::Progress { id: RequestId::Number(1), progress: 1.0, total: None, message: None };
    assert_eq!(
        progress.apply(now, &mut server),
        Err(UsageError::UnknownRequest(RequestId::Number(1))),
        "progress is only for a request being served"
    );
    let call = PeerCall {
        related: RequestId::Number(1),
        method: "roots/list",
        params: RawJson::from_serialize(&json!({})),
    };
    assert_eq!(call.send(now, &mut server), Err(UsageError::NotReady));
}

#[test]
fn the_session_is_what_the_runtime_gave() {
    let (ctx, _) = context(Ok(RawJson::empty_object()));
    assert!(ctx.session().is_none() && ctx.client_info().is_none());
    let info = SessionInfo {
        protocol_version: ProtocolVersion::LATEST_SESSION,
        client_info: Implementation::new("inspector", "0.9"),
        client_capabilities: serde_json::from_value(serde_json::json!({"sampling": {}})).unwrap(),
        server_capabilities: Default::default(),
    };
    let call = CallContext {
        session: Some(Arc::new(info)),
        log_level: None,
        round: None,
        principal: None,
    };
    let ctx = ctx.with_session(call).clone();
    assert_eq!(ctx.client_info().map(|i| i.name.as_str()), Some("inspector"));
    assert!(ctx.client_capabilities().is_some_and(|c| c.sampling.is_some()));
    assert!(ctx.client_capabilities().is_some_and(|c| c.roots.is_none()));
}
