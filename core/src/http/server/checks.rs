//! The checks every HTTP request passes before a session sees it: Host and Origin (DNS
//! rebinding), the bearer token when one is configured, media types, the protocol version
//! header.

use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN};
use http::HeaderMap;

use crate::error::Rejection;
use crate::jsonrpc::RawJson;
use crate::schema::ProtocolVersion;

/// The loopback names allowed by default, as hosts and in origins.
pub(super) const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// `Host` must name an allowed host (any port). `"*"` in the list allows any.
pub(super) fn check_host(headers: &HeaderMap, allowed: &[String]) -> Result<(), Rejection> {
    if allowed.iter().any(|a| a == "*") {
        return Ok(());
    }
    let host = headers.get(HOST).and_then(|h| h.to_str().ok()).ok_or(Rejection::ForbiddenHost)?;
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(host_name(host))) {
        Ok(())
    } else {
        Err(Rejection::ForbiddenHost)
    }
}

/// An `Origin`, when present, must be an allowed origin: one whose host is allowed (any
/// scheme and port), or one listed exactly. Requests without `Origin` (not from a browser)
/// pass
/// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning>).
pub(super) fn check_origin(
    headers: &HeaderMap,
    allowed_hosts: &[String],
    allowed_origins: &[String],
) -> Result<(), Rejection> {
    let Some(origin) = headers.get(ORIGIN) else { return Ok(()) };
    let origin = origin.to_str().map_err(|_| Rejection::ForbiddenOrigin)?;
    if allowed_origins.iter().any(|a| a == "*" || a.eq_ignore_ascii_case(origin)) {
        return Ok(());
    }
    let host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .ok_or(Rejection::ForbiddenOrigin)?;
    let host = host_name(host);
    if allowed_hosts.iter().any(|a| a != "*" && a.eq_ignore_ascii_case(host)) {
        Ok(())
    } else {
        Err(Rejection::ForbiddenOrigin)
    }
}

/// With a bearer token configured, every request must carry `Authorization: Bearer <it>`.
/// The comparison takes the same time wherever the tokens differ.
pub(super) fn check_bearer(headers: &HeaderMap, expected: &str) -> Result<(), Rejection> {
    let given = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
    let Some(given) = given.and_then(bearer_token) else {
        return Err(Rejection::Unauthorized { invalid_token: false });
    };
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    let differ = a.iter().zip(b).fold(a.len() ^ b.len(), |acc, (x, y)| acc | usize::from(x ^ y));
    if differ == 0 {
        Ok(())
    } else {
        Err(Rejection::Unauthorized { invalid_token: true })
    }
}

/// The token of a `Bearer` credential (the scheme is case-insensitive, RFC 6750 §2.1).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// A POST must send JSON and accept both JSON and SSE answers
/// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server>).
pub(super) fn check_post_media(headers: &HeaderMap) -> Result<(), Rejection> {
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| media_type(v) == "application/json");
    if !json {
        return Err(Rejection::UnsupportedMediaType);
    }
    if accepts(headers, "application/json") && accepts(headers, "text/event-stream") {
        Ok(())
    } else {
        Err(Rejection::NotAcceptable)
    }
}

/// A GET opens an SSE stream: it must accept one.
pub(super) fn check_get_media(headers: &HeaderMap) -> Result<(), Rejection> {
    if accepts(headers, "text/event-stream") {
        Ok(())
    } else {
        Err(Rejection::NotAcceptable)
    }
}

/// The `MCP-Protocol-Version` header: absent is fine (the session knows, or 2025-03-26 is
/// assumed); present, it must name a revision we support
/// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#protocol-version-header>).
pub(super) fn version_header(
    headers: &HeaderMap,
    supported: &[ProtocolVersion],
) -> Result<Option<ProtocolVersion>, Rejection> {
    let Some(value) = headers.get("mcp-protocol-version") else { return Ok(None) };
    let text = value.to_str().unwrap_or("");
    match ProtocolVersion::parse(text.trim()) {
        Some(v) if supported.contains(&v) => Ok(Some(v)),
        _ => Err(Rejection::UnsupportedProtocolVersion {
            requested: String::from_utf8_lossy(value.as_bytes()).into_owned(),
            supported: supported.iter().map(|v| v.as_str().to_owned()).collect(),
        }),
    }
}

/// The host part of `host[:port]` (an IPv6 literal keeps its brackets).
fn host_name(authority: &str) -> &str {
    let authority = authority.split('/').next().unwrap_or("");
    if authority.starts_with('[') {
        return authority.find(']').map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn media_type(value: &str) -> &str {
    value.split(';').next().unwrap_or("").trim()
}

/// True when some `Accept` value lists `wanted`, its type's wildcard, or `*/*`.
fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    let family = wanted.split('/').next().unwrap_or("");
    headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').map(media_type).any(|m| {
            m.eq_ignore_ascii_case(wanted)
                || m == "*/*"
                || m.strip_suffix("/*").is_some_and(|f| f.eq_ignore_ascii_case(family))
        })
    })
}

/// The names a 2026-07-28 request's headers must repeat from its body.
#[derive(serde::Deserialize)]
struct Named {
    name: Option<String>,
    uri: Option<String>,
}

/// 2026-07-28: the headers of a POST agree with its body (`Mcp-Method` with the method,
/// `Mcp-Name` with the tool's or prompt's name or the resource's URI, `MCP-Protocol-Version`
/// with the `_meta` revision); a header that is missing, badly encoded or different is a
/// `HeaderMismatch` naming it. Returns the name it checked (a tool's, for `tools/call`).
pub(super) fn stateless_headers(
    headers: &HeaderMap,
    method: &str,
    params: Option<&RawJson>,
) -> Result<Option<String>, Rejection> {
    let mismatch = |header: &str| Rejection::HeaderMismatch { header: header.to_owned() };
    let header = |name: &str| headers.get(name).map(|v| decode_header_value(v.as_bytes()));
    if header("mcp-method") != Some(Some(method.to_owned())) {
        return Err(mismatch("Mcp-Method"));
    }
    if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        return Ok(None);
    }
    let named: Option<Named> = params.and_then(|p| p.parse().ok());
    let named = named.and_then(|n| if method == "resources/read" { n.uri } else { n.name });
    if named.is_none() || header("mcp-name").flatten() != named {
        return Err(mismatch("Mcp-Name"));
    }
    Ok(named)
}

/// A header value as text: plain visible ASCII as it is, `=?base64?…?=` decoded from
/// base64 UTF-8; `None` for anything else.
pub(super) fn decode_header_value(value: &[u8]) -> Option<String> {
    use base64::Engine as _;
    let text = std::str::from_utf8(value).ok()?;
    if let Some(encoded) = text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) {
        let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
        return String::from_utf8(bytes).ok();
    }
    text.bytes().all(|b| (0x20..0x7f).contains(&b)).then(|| text.to_owned())
}
