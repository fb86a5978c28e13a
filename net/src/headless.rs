//! The headless answer to an OAuth authorization request: GET the authorization URL without
//! following the redirect, and hand back the `Location` it names (the whole redirect URL the
//! client checks). For tests, CI and authorization servers that redirect at once; a person
//! logs in through a browser instead.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use zest_core::runtime::http_client::HttpEndpoint;

/// The largest response head read.
const MAX_HEAD: usize = 64 * 1024;
const TIMEOUT: Duration = Duration::from_secs(10);

/// GETs `url` (http or https) and returns its redirect target, resolved against `url`.
/// `Err` says why there is none (not a redirect, unreachable, a TLS failure).
pub fn authorize_headless(url: &str) -> Result<String, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url:?} is not a url: {e}"))?;
    let host = uri.host().ok_or("the authorization url has no host")?.to_owned();
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return Err(format!("{url:?} is not an http or https url")),
    };
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let tcp = TcpStream::connect((bare, port)).map_err(|e| format!("{host}:{port}: {e}"))?;
    tcp.set_read_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    let authority = uri.authority().map_or(host.as_str(), |a| a.as_str());
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: text/html\r\nConnection: close\r\n\r\n"
    );
    let head = if https {
        let endpoint = HttpEndpoint::new(url);
        let tls = super::tls_client_config(&endpoint).map_err(|e| e.to_string())?;
        let name = rustls::pki_types::ServerName::try_from(bare.to_owned())
            .map_err(|e| format!("{host}: {e}"))?;
        let conn = rustls::ClientConnection::new(Arc::clone(&tls), name)
            .map_err(|e| format!("tls: {e}"))?;
        exchange(rustls::StreamOwned::new(conn, tcp), &request)?
    } else {
        exchange(tcp, &request)?
    };
    let location = redirect_target(&head)?;
    resolve(&uri, &location)
}

/// Sends `request` and reads until the end of the response head.
fn exchange(mut stream: impl Read + Write, request: &str) -> Result<Vec<u8>, String> {
    stream.write_all(request.as_bytes()).map_err(|e| format!("sending: {e}"))?;
    stream.flush().map_err(|e| format!("sending: {e}"))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).map_err(|e| format!("reading: {e}"))?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return Err("the response head is too large".into());
        }
    }
    Ok(head)
}

/// The `Location` of a 3xx head.
fn redirect_target(head: &[u8]) -> Result<String, String> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut fields);
    response.parse(head).map_err(|e| format!("unreadable response: {e}"))?;
    let status = response.code.ok_or("no response")?;
    if !(300..400).contains(&status) {
        return Err(format!("the authorization url answered {status}, not a redirect"));
    }
    let location = (response.headers.iter())
        .find(|h| h.name.eq_ignore_ascii_case("location"))
        .ok_or("the redirect has no Location")?;
    String::from_utf8(location.value.to_vec()).map_err(|_| "Location is not utf-8".into())
}

/// `location` resolved against `base` (absolute, or a path on the same origin).
fn resolve(base: &http::Uri, location: &str) -> Result<String, String> {
    if location.contains("://") {
        return Ok(location.to_owned());
    }
    let scheme = base.scheme_str().unwrap_or("https");
    let authority = base.authority().ok_or("no authority")?;
    match location.strip_prefix('/') {
        Some(path) => Ok(format!("{scheme}://{authority}/{path}")),
        None => Err(format!("cannot resolve Location {location:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_location_of_a_redirect_and_refuses_anything_else() {
        let head =
            b"HTTP/1.1 302 Found\r\nlocation: http://localhost:3000/cb?code=x&state=y\r\n\r\n";
        assert_eq!(redirect_target(head).unwrap(), "http://localhost:3000/cb?code=x&state=y");
        assert!(redirect_target(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
        let base: http::Uri = "http://127.0.0.1:9/authorize?x=1".parse().unwrap();
        assert_eq!(resolve(&base, "/cb?code=1").unwrap(), "http://127.0.0.1:9/cb?code=1");
    }
}
