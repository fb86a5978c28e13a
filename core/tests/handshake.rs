//! Handshake transcripts per revision and per negotiation case, ping, and the
//! requests-before-`initialized` rules.

mod common;

use common::*;
use serde_json::json;
use zest_core::client::{self, Event as ClientEvent};
use zest_core::error::{CloseReason, ProtocolViolation};
use zest_core::jsonrpc::{codes, RawJson};
use zest_core::schema::ProtocolVersion;
use zest_core::server::Event as ServerEvent;
use zest_core::testkit::{Pair, Wire};
use zest_core::RequestOptions;

const TRANSCRIPT: [&str; 3] = ["c→s initialize", "s→c result 0", "c→s notifications/initialized"];

#[test]
fn every_session_revision_has_the_same_three_step_transcript() {
    for version in ProtocolVersion::SESSION_ERA {
        let mut cfg = client_config();
        cfg.protocol_version = version;
        let mut pair = Pair::new(cfg, server_config(), registry());
        let negotiated = pair.handshake();
        assert_eq!(negotiated.protocol_version, version);
        assert_eq!(negotiated.server_info.name, "test-server");
        assert_eq!(pair.transcript(), TRANSCRIPT, "revision {version}");
        let Wire::ToServer(init) = &pair.wire[0] else { panic!() };
        let init: serde_json::Value = serde_json::from_str(init).unwrap();
        assert_eq!(init["params"]["protocolVersion"], version.as_str());
        assert_eq!(init["params"]["clientInfo"]["name"], "test-client");
        let server_events = pair.take_server_events();
        assert!(
            matches!(&server_events[0], ServerEvent::Initialized(info) if info.protocol_version == version)
        );
        assert_eq!(server_events[1], ServerEvent::Ready);
    }
}

#[test]
fn client_offering_newer_than_the_server_gets_the_servers_newest() {
    let mut server = server_config();
    server.supported_versions = vec![ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_03_26];
    let mut pair = Pair::new(client_config(), server, registry());
    assert_eq!(pair.handshake().protocol_version, ProtocolVersion::V2025_03_26);
}

#[test]
fn client_offering_older_gets_its_own_revision_back() {
    let mut cfg = client_config();
    cfg.protocol_version = ProtocolVersion::V2024_11_05;
    let mut pair = Pair::new(cfg, server_config(), registry());
    assert_eq!(pair.handshake().protocol_version, ProtocolVersion::V2024_11_05);
}

#[test]
fn server_answers_an_unknown_revision_with_its_newest() {
    let mut pair: Pair<Handler> = Pair::new(client_config(), server_config(), registry());
    while pair.client.poll_output().is_some() {} // the client's own initialize is never sent
    pair.inject_to_server(
        br#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"old","version":"0"}}}
"#,
    );
    let reply = pair.wire.iter().rev().find_map(|w| match w {
        Wire::ToClient(t) if t.contains("\"x\"") => Some(t.clone()),
        _ => None,
    });
    let reply: serde_json::Value = serde_json::from_str(&reply.unwrap()).unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn initialize_never_agrees_on_the_stateless_revision() {
    let mut server = server_config();
    server.supported_versions = ProtocolVersion::ALL.to_vec(); // 2026-07-28 listed on purpose
    let mut pair: Pair<Handler> = Pair::new(client_config(), server, registry());
    while pair.client.poll_output().is_some() {} // the client's own initialize is never sent
    pair.inject_to_server(
        br#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"new","version":"0"}}}
"#,
    );
    let reply = pair.wire.iter().rev().find_map(|w| match w {
        Wire::ToClient(t) if t.contains("\"x\"") => Some(t.clone()),
        _ => None,
    });
    let reply: serde_json::Value = serde_json::from_str(&reply.unwrap()).unwrap();
    assert_eq!(reply["result"]["protocolVersion"], ProtocolVersion::LATEST_SESSION.as_str());
}

#[test]
fn client_closes_when_the_server_picks_a_revision_it_does_not_support() {
    let mut cfg = client_config();
    cfg.supported_versions = vec![ProtocolVersion::V2025_11_25];
    let mut server = server_config();
    server.supported_versions = vec![ProtocolVersion::V2025_03_26];
    let mut pair = Pair::new(cfg, server, registry());
    pair.pump();
    let events = pair.take_client_events();
    assert!(events.contains(&ClientEvent::Violation(ProtocolViolation::UnsupportedVersion(
        "2025-03-26".into()
    ))));
    assert!(matches!(events.last(), Some(ClientEvent::Closed(CloseReason::InitializeInvalid(_)))));
    assert!(!pair.transcript().contains(&"c→s notifications/initialized".to_owned()));
}

#[test]
fn client_closes_when_the_server_names_an_unknown_revision() {
    let now = zest_core::testkit::VirtualClock::new().now();
    let mut client = client::Client::new(client_config(), now);
    while client.poll_output().is_some() {}
    client.handle_input(zest_core::io::data(
        now,
        zest_core::io::StreamId::STDIO,
        br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2099-01-01","capabilities":{},"serverInfo":{"name":"future","version":"9"}}}
"#,
    ));
    let mut events = Vec::new();
    while let Some(o) = client.poll_output() {
        if let zest_core::io::Output::Event(e) = o {
            events.push(e);
        }
    }
    assert_eq!(
        events[0],
        ClientEvent::Violation(ProtocolViolation::UnsupportedVersion("2099-01-01".into()))
    );
    assert!(matches!(events[1], ClientEvent::Closed(CloseReason::InitializeInvalid(_))));
}

#[test]
fn an_initialize_error_closes_the_client_once_with_that_error() {
    let mut pair: Pair<Handler> = Pair::new(client_config(), server_config(), registry());
    // Take initialize (id 0) off the client and answer it with an error ourselves.
    while pair.client.poll_output().is_some() {}
    pair.inject_to_client(
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32602,\"message\":\"no thanks\"}}\n",
    );
    // Past the init timeout too: the error closed the client, the timeout must not again.
    pair.advance(std::time::Duration::from_secs(30));
    let closed: Vec<_> = pair
        .take_client_events()
        .into_iter()
        .filter(|e| matches!(e, ClientEvent::Closed(_)))
        .collect();
    let [ClientEvent::Closed(CloseReason::InitializeRejected(error))] = &closed[..] else {
        panic!("one InitializeRejected close: {closed:?}")
    };
    assert_eq!(error.code, codes::INVALID_PARAMS);
    assert_eq!(error.message, "no thanks");
    assert!(!pair
        .transcript()
        .iter()
        .any(|l| l.contains("initialized") || l.contains("cancelled")));
}

#[test]
fn an_initialize_timeout_closes_the_client_once_and_cancels_nothing() {
    let mut pair: Pair<Handler> = Pair::new(client_config(), server_config(), registry());
    // Deliver nothing: the server never sees initialize.
    while pair.client.poll_output().is_some() {}
    pair.advance(std::time::Duration::from_secs(30));
    let closed: Vec<_> = pair
        .take_client_events()
        .into_iter()
        .filter(|e| matches!(e, ClientEvent::Closed(_)))
        .collect();
    assert_eq!(closed, [ClientEvent::Closed(CloseReason::InitializeTimedOut)]);
    // No notifications/cancelled for initialize, ever.
    assert!(!pair.transcript().iter().any(|l| l.contains("cancelled")));
}

/// What a runtime test once checked on a real clock (a 300 ms `init_timeout`): the initialize
/// deadline is the configured `init_timeout` after the client was made, to the instant.
#[test]
fn the_initialize_timeout_fires_at_the_configured_deadline() {
    let mut config = client_config();
    config.init_timeout = std::time::Duration::from_secs(7);
    let mut pair: Pair<Handler> = Pair::new(config, server_config(), registry());
    let t0 = pair.clock.now();
    while pair.client.poll_output().is_some() {}
    assert_eq!(pair.client.poll_timeout(), Some(t0 + std::time::Duration::from_secs(7)));
    pair.advance_to(t0 + std::time::Duration::from_secs(7) - std::time::Duration::from_millis(1));
    assert!(pair.take_client_events().is_empty(), "early timeouts are harmless");
    pair.advance_to(t0 + std::time::Duration::from_secs(7));
    assert_eq!(pair.take_client_events(), [ClientEvent::Closed(CloseReason::InitializeTimedOut)]);
}

#[test]
fn ping_is_answered_by_both_machines_without_the_app() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let id = pair.client.request(now, "ping", None, RequestOptions::default()).unwrap();
    pair.pump();
    assert_eq!(response_for(&pair.take_client_events(), &id).unwrap(), RawJson::empty_object());
    let sid = pair.server.request(now, None, "ping", None, RequestOptions::default()).unwrap();
    pair.pump();
    let events = pair.take_server_events();
    assert!(events
        .iter()
        .any(|e| matches!(e, ServerEvent::Response { id, result: Ok(_) } if *id == sid)));
    assert!(pair.take_client_events().is_empty(), "the client app saw nothing of the ping");
}

#[test]
fn ping_is_allowed_before_initialize_but_nothing_else_is() {
    let mut pair: Pair<Handler> = Pair::new(client_config(), server_config(), registry());
    while pair.client.poll_output().is_some() {}
    pair.inject_to_server(b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n");
    pair.inject_to_server(b"{\"jsonrpc\":\"2.0\",\"id\":\"t\",\"method\":\"tools/list\"}\n");
    let replies: Vec<serde_json::Value> = pair
        .wire
        .iter()
        .filter_map(|w| match w {
            Wire::ToClient(t) => serde_json::from_str(t).ok(),
            _ => None,
        })
        .collect();
    assert_eq!(replies.len(), 2, "one reply each: {replies:?}");
    assert_eq!(replies[0], json!({"jsonrpc":"2.0","id":"p","result":{}}));
    assert_eq!(replies[1]["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(replies[1]["id"], "t");
}

fn pair_before_initialized(strict: bool) -> Pair<Handler> {
    let mut server = server_config();
    server.strict_initialized = strict;
    let mut pair = Pair::new(client_config(), server, registry());
    // Deliver initialize by hand and withhold notifications/initialized.
    let now = pair.clock.now();
    let Some(zest_core::io::Output::Transmit(zest_core::io::Transmit::Write { bytes, .. })) =
        pair.client.poll_output()
    else {
        panic!()
    };
    pair.server.handle_input(zest_core::io::data(now, zest_core::io::StreamId::STDIO, &bytes));
    while pair.server.poll_output().is_some() {}
    pair
}

#[test]
fn requests_before_initialized_are_accepted_by_default() {
    let mut pair = pair_before_initialized(false);
    pair.inject_to_server(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}\n");
    let Some(Wire::ToClient(reply)) = pair.wire.last() else { panic!() };
    let reply: serde_json::Value = serde_json::from_str(reply).unwrap();
    assert_eq!(reply["result"]["tools"].as_array().unwrap().len(), 3);
}

#[test]
fn strict_mode_rejects_requests_before_initialized_with_a_clear_error() {
    let mut pair = pair_before_initialized(true);
    pair.inject_to_server(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}\n");
    let Some(Wire::ToClient(reply)) = pair.wire.last() else { panic!() };
    let reply: serde_json::Value = serde_json::from_str(reply).unwrap();
    assert_eq!(reply["error"]["code"], codes::INVALID_REQUEST);
    assert!(reply["error"]["message"].as_str().unwrap().contains("notifications/initialized"));
    assert!(pair.take_server_events().iter().any(|e| matches!(
        e,
        ServerEvent::Violation(ProtocolViolation::OutOfOrder { method, .. }) if method == "tools/list"
    )));
    // Ping still works, and after initialized the same request succeeds.
    pair.inject_to_server(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    pair.inject_to_server(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}\n");
    let Some(Wire::ToClient(reply)) = pair.wire.last() else { panic!() };
    assert!(reply.contains("\"result\""));
}

#[test]
fn a_second_initialize_is_rejected() {
    let mut pair = ready_pair();
    pair.inject_to_server(
        br#"{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}
"#,
    );
    let Some(Wire::ToClient(reply)) = pair.wire.last() else { panic!() };
    let reply: serde_json::Value = serde_json::from_str(reply).unwrap();
    assert_eq!(reply["error"]["code"], codes::INVALID_REQUEST);
}

#[test]
fn requests_other_than_ping_wait_for_ready_on_the_client() {
    let mut pair: Pair<Handler> = Pair::new(client_config(), server_config(), registry());
    let now = pair.clock.now();
    let err = pair.client.request(now, "tools/list", None, RequestOptions::default()).unwrap_err();
    assert_eq!(err, zest_core::error::UsageError::NotReady);
    assert!(pair.client.request(now, "ping", None, RequestOptions::default()).is_ok());
}
