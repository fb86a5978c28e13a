//! Resolving the legacy `endpoint` event's URI against the SSE URL (RFC 3986 §5.2), and the
//! same-origin check that guards it.

use http::uri::{Authority, PathAndQuery, Scheme};
use http::Uri;

/// Why an endpoint was refused.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// It resolves to another scheme, host or port.
    CrossOrigin,
    /// It is not a URI reference `http` can hold.
    Invalid,
}

/// Resolves `reference` (absolute, `//authority…`, `/path`, `path`, `?query`) against `base`,
/// an absolute URL, and accepts it only on `base`'s origin. A fragment is dropped.
pub(super) fn resolve_endpoint(base: &Uri, reference: &str) -> Result<Uri, Refusal> {
    let reference = reference.trim();
    let reference = reference.split('#').next().unwrap_or_default();
    let (Some(scheme), Some(authority)) = (base.scheme(), base.authority()) else {
        return Err(Refusal::Invalid);
    };
    let resolved = if has_scheme(reference) {
        reference.parse::<Uri>().map_err(|_| Refusal::Invalid)?
    } else if reference.starts_with("//") {
        format!("{scheme}:{reference}").parse::<Uri>().map_err(|_| Refusal::Invalid)?
    } else {
        let (path, query) = match reference.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (reference, None),
        };
        let path = if path.is_empty() {
            base.path().to_owned()
        } else if path.starts_with('/') {
            remove_dot_segments(path)
        } else {
            let dir = &base.path()[..base.path().rfind('/').map_or(0, |i| i + 1)];
            remove_dot_segments(&format!("/{}{path}", dir.trim_start_matches('/')))
        };
        let query = query.or(if reference.is_empty() { base.query() } else { None });
        let target = match query {
            Some(q) => format!("{path}?{q}"),
            None => path,
        };
        let path_and_query = target.parse::<PathAndQuery>().map_err(|_| Refusal::Invalid)?;
        Uri::builder()
            .scheme(scheme.clone())
            .authority(authority.clone())
            .path_and_query(path_and_query)
            .build()
            .map_err(|_| Refusal::Invalid)?
    };
    if same_origin(base, &resolved) {
        Ok(resolved)
    } else {
        Err(Refusal::CrossOrigin)
    }
}

/// `scheme ":"` at the start: a letter, then letters, digits, `+`, `-` or `.`.
fn has_scheme(reference: &str) -> bool {
    let Some((scheme, _)) = reference.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn same_origin(a: &Uri, b: &Uri) -> bool {
    let (Some(sa), Some(sb)) = (a.scheme(), b.scheme()) else { return false };
    let (Some(aa), Some(ab)) = (a.authority(), b.authority()) else { return false };
    sa == sb && aa.host().eq_ignore_ascii_case(ab.host()) && port(sa, aa) == port(sb, ab)
}

fn port(scheme: &Scheme, authority: &Authority) -> Option<u16> {
    authority.port_u16().or(if *scheme == Scheme::HTTPS {
        Some(443)
    } else if *scheme == Scheme::HTTP {
        Some(80)
    } else {
        None
    })
}

/// RFC 3986 §5.2.4 for a path starting with `/`: drops `.` segments, and `..` with the
/// segment before it.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    let mut trailing = false;
    for (i, segment) in segments.into_iter().enumerate() {
        match segment {
            "." => trailing = i == last,
            ".." => {
                out.pop();
                trailing = i == last;
            }
            other => out.push(other),
        }
    }
    let mut joined = format!("/{}", out.join("/"));
    if trailing && !joined.ends_with('/') {
        joined.push('/');
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(base: &str, reference: &str) -> Result<String, Refusal> {
        resolve_endpoint(&base.parse().unwrap(), reference).map(|u| u.to_string())
    }

    #[test]
    fn relative_references_resolve_against_the_sse_url() {
        let base = "http://127.0.0.1:8080/mcp/sse?x=1";
        let ok = |r: &str, want: &str| assert_eq!(resolve(base, r), Ok(want.to_owned()), "{r}");
        ok("/messages?sessionId=abc", "http://127.0.0.1:8080/messages?sessionId=abc");
        ok("messages?sessionId=abc", "http://127.0.0.1:8080/mcp/messages?sessionId=abc");
        ok("./messages", "http://127.0.0.1:8080/mcp/messages");
        ok("../messages", "http://127.0.0.1:8080/messages");
        ok("../../../messages", "http://127.0.0.1:8080/messages");
        ok("a/./b/../c", "http://127.0.0.1:8080/mcp/a/c");
        ok("?sessionId=1", "http://127.0.0.1:8080/mcp/sse?sessionId=1");
        ok("", "http://127.0.0.1:8080/mcp/sse?x=1");
        ok("/m#frag", "http://127.0.0.1:8080/m");
        ok(" /m\n", "http://127.0.0.1:8080/m");
        ok("http://127.0.0.1:8080/other", "http://127.0.0.1:8080/other");
        ok("//127.0.0.1:8080/p", "http://127.0.0.1:8080/p");
        ok("HTTP://127.0.0.1:8080/p", "http://127.0.0.1:8080/p");
    }

    #[test]
    fn default_ports_are_the_same_origin() {
        assert!(resolve("https://example.test/sse", "https://EXAMPLE.test:443/m").is_ok());
        assert!(resolve("http://example.test/sse", "http://example.test:80/m").is_ok());
    }

    #[test]
    fn other_origins_are_refused() {
        let base = "http://127.0.0.1:8080/sse";
        for reference in [
            "http://evil.test/messages",
            "https://127.0.0.1:8080/messages",
            "http://127.0.0.1:8081/messages",
            "//evil.test/messages",
            "http://127.0.0.1:8080@evil.test/messages",
        ] {
            assert_eq!(resolve(base, reference), Err(Refusal::CrossOrigin), "{reference}");
        }
    }

    #[test]
    fn unusable_references_are_invalid() {
        let base = "http://127.0.0.1:8080/sse";
        for reference in ["/bad path", "http://", "mailto:x@y"] {
            assert!(resolve(base, reference).is_err(), "{reference}");
        }
    }
}
