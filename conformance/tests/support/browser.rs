//! A headless browser for logging in at a loopback authorization server: GETs a URL,
//! follows its redirects with the cookies they set, and stops at the first redirect to the
//! client's redirect URI, whose whole URL it returns (what a browser hands the app).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Follows `url`'s redirects until one goes to `redirect_uri`; `Err` says where it stopped.
pub(crate) fn log_in(url: &str, redirect_uri: &str) -> Result<String, String> {
    let mut cookies: Vec<(String, String)> = Vec::new();
    let mut url = url.to_owned();
    for _ in 0..10 {
        let (status, location, set) = get(&url, &cookies)?;
        for (name, value) in set {
            cookies.retain(|(n, _)| *n != name);
            cookies.push((name, value));
        }
        let location =
            location.ok_or_else(|| format!("{url} answered {status} with no redirect"))?;
        let next = if location.starts_with("http") {
            location
        } else {
            let origin = url.splitn(4, '/').take(3).collect::<Vec<_>>().join("/");
            format!("{origin}{location}")
        };
        if next.starts_with(redirect_uri) {
            return Ok(next);
        }
        url = next;
    }
    Err("too many redirects".into())
}

pub(crate) type Head = (u16, Option<String>, Vec<(String, String)>);

/// A GET of a loopback `url` with `cookies`: the status, `Location` and the cookies set.
pub(crate) fn get(url: &str, cookies: &[(String, String)]) -> Result<Head, String> {
    let rest = url.strip_prefix("http://").ok_or("loopback http only")?;
    let (authority, path) =
        rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let mut stream = TcpStream::connect(authority).map_err(|e| format!("{authority}: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let cookie = cookies.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; ");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut fields);
    response.parse(&raw).map_err(|e| format!("{url}: {e}"))?;
    let mut location = None;
    let mut set = Vec::new();
    for h in response.headers.iter() {
        let value = String::from_utf8_lossy(h.value).into_owned();
        if h.name.eq_ignore_ascii_case("location") {
            location = Some(value);
        } else if h.name.eq_ignore_ascii_case("set-cookie") {
            let pair = value.split(';').next().unwrap_or_default();
            if let Some((n, v)) = pair.split_once('=') {
                set.push((n.trim().to_owned(), v.trim().to_owned()));
            }
        }
    }
    Ok((response.code.unwrap_or(0), location, set))
}

/// A POST to a loopback `url` with `Connection: close`: the status, the `WWW-Authenticate`
/// field and the body.
pub(crate) fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(u16, Option<String>, String), String> {
    let rest = url.strip_prefix("http://").ok_or("loopback http only")?;
    let (authority, path) =
        rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let mut stream = TcpStream::connect(authority).map_err(|e| format!("{authority}: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let fields: String = headers.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\n{fields}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut fields);
    let httparse::Status::Complete(head) = response.parse(&raw).map_err(|e| e.to_string())? else {
        return Err("a cut response".into());
    };
    let challenge = (response.headers.iter())
        .find(|h| h.name.eq_ignore_ascii_case("www-authenticate"))
        .map(|h| String::from_utf8_lossy(h.value).into_owned());
    let body = String::from_utf8_lossy(&raw[head..]).into_owned();
    Ok((response.code.unwrap_or(0), challenge, body))
}
