//! One blocking request over http or https (rustls, the endpoint's roots), for the few
//! exchanges a runtime makes outside any MCP session: an issuer's metadata and its JWKS
//! (GET), a token's introspection (POST), the headless authorization (GET, its redirect
//! read). The response is read by core's HTTP/1.1 client machine, the one every runtime's
//! MCP client uses (the same parser and limits). Bounded in time and size; redirects are not
//! followed.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONNECTION, CONTENT_TYPE, HOST};
use http::{HeaderMap, Method, Request};
use zest_core::http1::{self, ClientConnection, ClientEvent};
use zest_core::runtime::http_client::HttpEndpoint;

/// The largest body read.
const MAX_DOCUMENT: u64 = 1 << 20;
const TIMEOUT: Duration = Duration::from_secs(10);

/// What came back: the status, the header fields, the body.
pub(crate) struct Fetched {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

/// GETs `url`: its status and body.
pub(crate) fn get(url: &str) -> Result<(u16, Vec<u8>), String> {
    let fetched = send(url, Method::GET, "application/json", &[], Bytes::new())?;
    Ok((fetched.status, fetched.body))
}

/// POSTs the form `body` to `url` with `authorization` (a whole header value) if given: its
/// status and body.
pub(crate) fn post_form(
    url: &str,
    authorization: Option<&str>,
    body: &str,
) -> Result<(u16, Vec<u8>), String> {
    let mut fields = vec![(CONTENT_TYPE, "application/x-www-form-urlencoded")];
    fields.extend(authorization.map(|value| (AUTHORIZATION, value)));
    let body = Bytes::copy_from_slice(body.as_bytes());
    let fetched = send(url, Method::POST, "application/json", &fields, body)?;
    Ok((fetched.status, fetched.body))
}

/// Sends one request with `Connection: close`: what came back.
pub(crate) fn send(
    url: &str,
    method: Method,
    accept: &str,
    fields: &[(http::HeaderName, &str)],
    body: Bytes,
) -> Result<Fetched, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url:?} is not a url: {e}"))?;
    let host = uri.host().ok_or("the url has no host")?.to_owned();
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return Err(format!("{url:?} is not an http or https url")),
    };
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let authority = uri.authority().map_or(host.clone(), |a| a.to_string());
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(HOST, authority)
        .header(ACCEPT, accept)
        .header(CONNECTION, "close");
    for (name, value) in fields {
        request = request.header(name, *value);
    }
    let request = request.body(body).map_err(|e| format!("a bad request: {e}"))?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let tcp = TcpStream::connect((bare, port)).map_err(|e| format!("{host}:{port}: {e}"))?;
    tcp.set_read_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    if https {
        let endpoint = HttpEndpoint::new(url);
        let tls = super::tls_client_config(&endpoint).map_err(|e| e.to_string())?;
        let name = rustls::pki_types::ServerName::try_from(bare.to_owned())
            .map_err(|e| format!("{host}: {e}"))?;
        let conn = rustls::ClientConnection::new(Arc::clone(&tls), name)
            .map_err(|e| format!("tls: {e}"))?;
        exchange(rustls::StreamOwned::new(conn, tcp), request)
    } else {
        exchange(tcp, request)
    }
}

/// Drives core's client machine over `stream` for one request.
fn exchange(mut stream: impl Read + Write, request: Request<Bytes>) -> Result<Fetched, String> {
    let mut conn = ClientConnection::new(http1::Config::default());
    conn.set_max_body_bytes(Some(MAX_DOCUMENT));
    conn.send_request(Instant::now(), request).map_err(|e| e.to_string())?;
    let mut head = None;
    let mut body = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        while let Some(transmit) = conn.poll_transmit() {
            if let http1::Transmit::Write(bytes) = transmit {
                stream.write_all(&bytes).map_err(|e| format!("sending: {e}"))?;
            }
        }
        while let Some(event) = conn.poll_event() {
            match event {
                ClientEvent::Head(h) => head = Some(h),
                ClientEvent::Data(data) => body.extend_from_slice(&data),
                ClientEvent::End { .. } => {
                    let head = head.ok_or("the response ended before its head")?;
                    let status = head.status.as_u16();
                    return Ok(Fetched { status, headers: head.headers, body });
                }
                ClientEvent::Failed(e) => return Err(format!("reading the response: {e}")),
                // Events a later version of the machine may add carry nothing needed here.
                _ => {}
            }
        }
        match stream.read(&mut buf) {
            // A TLS peer that closes without close_notify has still sent everything.
            Ok(0) => conn.handle_end(),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => conn.handle_end(),
            Ok(n) => conn.handle_data(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading: {e}")),
        }
    }
}
