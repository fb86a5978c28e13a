//! One blocking request over http or https (rustls, the endpoint's roots), for the few
//! exchanges a runtime makes outside any MCP session: an issuer's metadata and its JWKS
//! (GET), a token's introspection (POST). Bounded in time and size; redirects are not
//! followed.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use zest_core::runtime::http_client::HttpEndpoint;

/// The largest document read.
const MAX_DOCUMENT: usize = 1 << 20;
const TIMEOUT: Duration = Duration::from_secs(10);

/// GETs `url`: its status and body.
pub(crate) fn get(url: &str) -> Result<(u16, Vec<u8>), String> {
    parse(&get_raw(url, "application/json")?)
}

/// POSTs the form `body` to `url` with `authorization` (a whole header value) if given: its
/// status and body.
pub(crate) fn post_form(
    url: &str,
    authorization: Option<&str>,
    body: &str,
) -> Result<(u16, Vec<u8>), String> {
    let mut head = format!(
        "Accept: application/json\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(value) = authorization {
        head.push_str(&format!("Authorization: {value}\r\n"));
    }
    parse(&send(url, "POST", &head, body)?)
}

/// GETs `url` accepting `accept`, with `Connection: close`: the whole response as sent.
pub(crate) fn get_raw(url: &str, accept: &str) -> Result<Vec<u8>, String> {
    send(url, "GET", &format!("Accept: {accept}\r\n"), "")
}

/// Sends one request (`head` holds its own header lines, each ending in CRLF) with
/// `Connection: close`: the whole response as sent.
fn send(url: &str, method: &str, head: &str, body: &str) -> Result<Vec<u8>, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url:?} is not a url: {e}"))?;
    let host = uri.host().ok_or("the url has no host")?.to_owned();
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
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\n{head}Connection: close\r\n\r\n{body}"
    );
    if https {
        let endpoint = HttpEndpoint::new(url);
        let tls = super::tls_client_config(&endpoint).map_err(|e| e.to_string())?;
        let name = rustls::pki_types::ServerName::try_from(bare.to_owned())
            .map_err(|e| format!("{host}: {e}"))?;
        let conn = rustls::ClientConnection::new(Arc::clone(&tls), name)
            .map_err(|e| format!("tls: {e}"))?;
        exchange(rustls::StreamOwned::new(conn, tcp), &request)
    } else {
        exchange(tcp, &request)
    }
}

fn exchange(mut stream: impl Read + Write, request: &str) -> Result<Vec<u8>, String> {
    stream.write_all(request.as_bytes()).map_err(|e| format!("sending: {e}"))?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            // A TLS peer that closes without close_notify has still sent everything.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(format!("reading: {e}")),
        }
        if raw.len() > MAX_DOCUMENT {
            return Err("the document is too large".into());
        }
    }
    Ok(raw)
}

/// The status and body of a whole response (length-delimited, chunked or until close).
fn parse(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut fields);
    let httparse::Status::Complete(head_len) =
        response.parse(raw).map_err(|e| format!("unreadable response: {e}"))?
    else {
        return Err("the response ended inside its head".into());
    };
    let status = response.code.unwrap_or(0);
    let field = |name: &str| {
        (response.headers.iter())
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
    };
    let body = &raw[head_len..];
    if field("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        return dechunk(body).map(|b| (status, b));
    }
    match field("content-length").and_then(|l| l.parse::<usize>().ok()) {
        Some(len) if len <= body.len() => Ok((status, body[..len].to_vec())),
        Some(_) => Err("the body is shorter than its length".into()),
        None => Ok((status, body.to_vec())),
    }
}

fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").ok_or("a bad chunk")?;
        let size = std::str::from_utf8(&body[..line_end]).map_err(|_| "a bad chunk size")?;
        let size = size.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| "a bad chunk size")?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size + 2 {
            return Err("a chunk is cut short".into());
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_length_delimited_chunked_and_close_delimited_bodies() {
        let fixed = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse(fixed).unwrap(), (200, b"{}".to_vec()));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\n3\r\na\":\r\n1\r\n1\r\n0\r\n\r\n";
        assert_eq!(parse(chunked).unwrap().1, b"{\"a\":1".to_vec());
        let closed = b"HTTP/1.1 404 Not Found\r\n\r\nnope";
        assert_eq!(parse(closed).unwrap(), (404, b"nope".to_vec()));
    }
}
