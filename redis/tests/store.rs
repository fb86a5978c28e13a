//! RedisFleet against a Redis of the test's own (Debian's `redis-server`, which
//! `scripts/test` installs): what the router relies on, kept across a session's time to live.

#[path = "../../conformance/tests/support/redis_server.rs"]
mod redis_server;

use std::thread;
use std::time::Duration;

use serde_json::json;
use zest_core::http::server::{Fleet, FleetKey, SavedSession};
use zest_redis::{FleetOptions, RedisFleet};

fn saved() -> SavedSession {
    serde_json::from_value(json!({
        "ready": true,
        "info": {
            "protocol_version": "2025-11-25",
            "client_info": {"name": "c", "version": "1"},
            "client_capabilities": {},
            "server_capabilities": {}
        },
        "log_level": null,
        "subscriptions": [],
        "subject": null
    }))
    .expect("a saved session")
}

/// A session kept alive by its requests for longer than its time to live, with nothing sent
/// on its standalone stream meanwhile, keeps that stream's numbering and what was delivered.
#[test]
fn a_session_in_use_keeps_its_standalone_numbering_past_its_time_to_live() {
    let redis = redis_server::RedisServer::start();
    let mut options = FleetOptions::default();
    // Long enough that a stall of the loaded test machine between two loads does not expire it.
    options.session_ttl = Duration::from_secs(3);
    let fleet = RedisFleet::connect_with(&redis.url(), options).expect("redis answers");
    let key = FleetKey::from_stored("k");
    fleet.save(&key, &saved()).unwrap();
    assert_eq!(fleet.append_standalone(&key, b"{\"n\":1}").unwrap(), 1);
    fleet.delivered(&key, 1).unwrap();
    // Six seconds of requests (twice the time to live), none of which sends anything on the
    // stream.
    for _ in 0..20 {
        thread::sleep(Duration::from_millis(300));
        assert!(fleet.load(&key).unwrap().is_some(), "the session lives while in use");
    }
    assert_eq!(fleet.append_standalone(&key, b"{\"n\":2}").unwrap(), 2);
    let (after, fresh) = fleet.standalone_after(&key, None).unwrap();
    assert_eq!(after, 1, "what was delivered is remembered");
    assert_eq!(fresh.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [2]);
    // The mark never moves back.
    fleet.delivered(&key, 1).unwrap();
    assert_eq!(fleet.standalone_after(&key, None).unwrap().0, 1);
    fleet.delivered(&key, 2).unwrap();
    assert_eq!(fleet.standalone_after(&key, None).unwrap().0, 2);
}

#[test]
fn an_unreachable_redis_fails_connect_with_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let error = RedisFleet::connect(&format!("redis://127.0.0.1:{port}/")).unwrap_err();
    assert!(error.0.contains("Redis does not answer"), "{error}");
}
