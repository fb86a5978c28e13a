//! An HTTP client with OAuth whose every answer is arbitrary: the MCP server's refusal and
//! its `WWW-Authenticate` challenge, the metadata documents, registration and token answers
//! (status and body), and the redirect the application hands back. Drives the challenge
//! parser, the metadata and token decoders and the flow machine together.
//!
//! Never panics; `initialize` ends in exactly one outcome (Ready, or Closed with a reason).
#![no_main]

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use http::header::{HeaderValue, WWW_AUTHENTICATE};
use http::{HeaderMap, StatusCode};
use libfuzzer_sys::fuzz_target;
use zest_core::auth::OAuthConfig;
use zest_core::client::{Client, ClientConfig, Event};
use zest_core::http::client::{HttpClientConfig, HttpMode};
use zest_core::io::{
    HttpRequest, Input, Output, Receive, ResponseHead, StreamEvent, StreamId, Transmit,
};

#[derive(Arbitrary, Debug)]
struct Answer {
    status: u16,
    challenge: Option<String>,
    json: bool,
    body: Vec<u8>,
    /// Keep the body well-formed JSON of this shape instead (a valid document, mostly).
    shape: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct Script {
    answers: Vec<Answer>,
    /// The redirect handed back: raw, or the right `state` with this code and `iss`.
    redirects: Vec<(bool, String)>,
}

const SHAPES: [&str; 5] = [
    r#"{"resource":"http://127.0.0.1:9000/mcp","authorization_servers":["http://127.0.0.1:9100"],"scopes_supported":["a"]}"#,
    r#"{"issuer":"http://127.0.0.1:9100","authorization_endpoint":"http://127.0.0.1:9100/authorize","token_endpoint":"http://127.0.0.1:9100/token","registration_endpoint":"http://127.0.0.1:9100/register","code_challenge_methods_supported":["S256"]}"#,
    r#"{"client_id":"c","client_secret":"s"}"#,
    r#"{"access_token":"t","token_type":"Bearer","expires_in":60,"refresh_token":"r"}"#,
    r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
];

fuzz_target!(|script: Script| {
    let t0 = Instant::now();
    let mut http = HttpClientConfig::new("http://127.0.0.1:9000/mcp".parse().unwrap());
    http.mode = HttpMode::StreamableHttp;
    http.open_get_stream = false;
    let oauth = OAuthConfig::authorization_code("http://127.0.0.1:3000/cb")
        .with_entropy([3; 32], t0, 1_000);
    let mut client =
        Client::new_http(ClientConfig::new("fuzz", "1"), http.oauth(oauth), t0).unwrap();
    let mut answers: VecDeque<Answer> = script.answers.into_iter().take(64).collect();
    let mut redirects: VecDeque<(bool, String)> = script.redirects.into_iter().take(8).collect();
    let mut opened: VecDeque<(StreamId, HttpRequest)> = VecDeque::new();
    let mut events = Vec::new();
    let mut now = t0;
    let drain = |client: &mut Client,
                 opened: &mut VecDeque<(StreamId, HttpRequest)>,
                 events: &mut Vec<Event>,
                 redirects: &mut VecDeque<(bool, String)>,
                 now: Instant| {
        while let Some(out) = client.poll_output() {
            match out {
                Output::Transmit(Transmit::Http { stream, request }) => {
                    opened.push_back((stream, *request))
                }
                Output::Transmit(_) => {}
                Output::Event(Event::AuthorizationRequired { url }) => {
                    let state =
                        url.split("state=").nth(1).and_then(|s| s.split('&').next()).unwrap_or("");
                    match redirects.pop_front() {
                        Some((true, tail)) => {
                            let back = format!("http://127.0.0.1:3000/cb?state={state}&{tail}");
                            let _ = client.authorize(now, &back);
                        }
                        Some((false, raw)) => {
                            let _ = client.authorize(now, &raw);
                        }
                        None => client.refuse_authorization(now, "fuzz"),
                    }
                }
                Output::Event(e) => events.push(e),
            }
        }
    };
    drain(&mut client, &mut opened, &mut events, &mut redirects, now);
    while let Some((stream, _request)) = opened.pop_front() {
        let Some(answer) = answers.pop_front() else { break };
        now += Duration::from_millis(10);
        let mut headers = HeaderMap::new();
        if let Some(c) = answer.challenge.as_deref().and_then(|c| HeaderValue::from_str(c).ok()) {
            headers.insert(WWW_AUTHENTICATE, c);
        }
        if answer.json {
            headers.insert("content-type", HeaderValue::from_static("application/json"));
        }
        let status = StatusCode::from_u16(answer.status % 600).unwrap_or(StatusCode::OK);
        let body = match answer.shape {
            Some(k) => SHAPES[usize::from(k) % SHAPES.len()].as_bytes().to_vec(),
            None => answer.body,
        };
        let head = ResponseHead { status, headers };
        for event in [StreamEvent::Head(Box::new(head)), StreamEvent::Data(&body), StreamEvent::End]
        {
            client.handle_input(Input::Receive(now, Receive { stream, event }));
            drain(&mut client, &mut opened, &mut events, &mut redirects, now);
        }
    }
    client.close(now);
    drain(&mut client, &mut opened, &mut events, &mut redirects, now);
    let closed = events.iter().filter(|e| matches!(e, Event::Closed(_))).count();
    assert_eq!(closed, 1, "exactly one Closed: {events:?}");
    assert!(matches!(events.last(), Some(Event::Closed(_))));
});
