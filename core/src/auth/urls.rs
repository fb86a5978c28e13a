//! The URLs OAuth discovery derives from the MCP server's and the issuer's: the canonical
//! resource (RFC 8707), the protected-resource metadata candidates (RFC 9728 §3.1), the
//! authorization-server metadata candidates (RFC 8414 §3.1 and OpenID Connect Discovery, in
//! the order MCP 2025-11-25 gives), and the 2025-03-26 fallbacks at the server's origin.

use http::Uri;

use super::AuthError;

/// `scheme://host[:port]`, scheme and host lowercased.
pub(crate) fn origin(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
    let host = uri.host().unwrap_or_default().to_ascii_lowercase();
    match uri.port_u16() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    }
}

/// The path without its trailing slashes (`""` for the root).
fn trimmed_path(uri: &Uri) -> &str {
    uri.path().trim_end_matches('/')
}

/// The canonical URI of the MCP server (RFC 8707 `resource`): lowercase scheme and host, no
/// fragment, no trailing slash, the query kept.
pub fn canonical_resource(uri: &Uri) -> String {
    let mut out = origin(uri);
    out.push_str(trimmed_path(uri));
    if let Some(query) = uri.query() {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// Whether two resource identifiers name the same resource (case of scheme and host and a
/// trailing slash aside): a token's audience against a server's resource.
pub(crate) fn same_resource(a: &str, b: &str) -> bool {
    match (a.parse::<Uri>(), b.parse::<Uri>()) {
        (Ok(a), Ok(b)) if a.scheme().is_some() && b.scheme().is_some() => {
            canonical_resource(&a) == canonical_resource(&b)
        }
        _ => a == b,
    }
}

/// Whether the metadata's `resource` covers the server's canonical URL `server`: the same
/// resource (after the canonical form's case and trailing-slash rules), or a parent of it on
/// the same origin (a server whose metadata sits at the root names its origin, as deployed
/// servers and the official suite do). Anything else is another resource (RFC 9728 §3.3).
pub(crate) fn covers_resource(resource: &str, server: &str) -> bool {
    let Ok(resource) = resource.parse::<Uri>() else { return false };
    if resource.scheme().is_none() || resource.query().is_some() {
        return false;
    }
    let resource = canonical_resource(&resource);
    server == resource
        || server.strip_prefix(&resource).is_some_and(|rest| rest.starts_with(['/', '?']))
}

/// Protected-resource metadata URLs to try, in order: path-inserted (when the server has a
/// path), then root.
pub(crate) fn resource_metadata_candidates(server: &Uri) -> Vec<String> {
    let origin = origin(server);
    let path = trimmed_path(server);
    let root = format!("{origin}/.well-known/oauth-protected-resource");
    if path.is_empty() {
        vec![root]
    } else {
        vec![format!("{root}{path}"), root]
    }
}

/// Authorization-server metadata URLs for `issuer`, in the order MCP gives.
pub(crate) fn server_metadata_candidates(issuer: &Uri) -> Vec<String> {
    let origin = origin(issuer);
    let path = trimmed_path(issuer);
    if path.is_empty() {
        return vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ];
    }
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ]
}

/// Checks an OAuth URL: absolute, `https`, or `http` to a loopback host only.
pub(crate) fn checked(url: &str) -> Result<Uri, AuthError> {
    let bad = |why: &str| AuthError::InsecureUrl { url: url.to_owned(), why: why.to_owned() };
    let uri: Uri = url.parse().map_err(|_| bad("not a url"))?;
    let host = uri.host().ok_or_else(|| bad("no host"))?;
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if is_loopback(host) => Ok(uri),
        Some("http") => Err(bad("plain http is allowed only to a loopback host")),
        _ => Err(bad("not an http or https url")),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn canonical_resource_lowercases_and_drops_the_trailing_slash() {
        assert_eq!(
            canonical_resource(&uri("HTTPS://MCP.Example.com/mcp/")),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(canonical_resource(&uri("https://mcp.example.com/")), "https://mcp.example.com");
        assert_eq!(
            canonical_resource(&uri("https://mcp.example.com:8443")),
            "https://mcp.example.com:8443"
        );
        assert!(covers_resource("https://A.example/mcp/", "https://a.example/mcp"));
        assert!(covers_resource("https://a.example", "https://a.example/mcp"));
        assert!(covers_resource("https://a.example/", "https://a.example/mcp"));
        assert!(!covers_resource("https://a.example/mcp", "https://a.example/other"));
        assert!(!covers_resource("https://a.example/mc", "https://a.example/mcp"));
        assert!(!covers_resource("https://evil.example.com/mcp", "http://localhost:9/mcp"));
        assert!(!covers_resource("http://a.example/mcp", "https://a.example/mcp"));
        assert!(!covers_resource("/mcp", "https://a.example/mcp"));
    }

    #[test]
    fn metadata_candidates_follow_the_spec_order() {
        assert_eq!(
            resource_metadata_candidates(&uri("https://example.com/public/mcp")),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_candidates(&uri("https://example.com/")),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            server_metadata_candidates(&uri("https://auth.example.com/tenant1")),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(server_metadata_candidates(&uri("https://auth.example.com")).len(), 2);
    }

    #[test]
    fn oauth_urls_need_https_except_loopback() {
        assert!(checked("https://auth.example.com/token").is_ok());
        assert!(checked("http://127.0.0.1:9000/token").is_ok());
        assert!(checked("http://[::1]:9000/token").is_ok());
        assert!(checked("http://localhost/token").is_ok());
        assert!(matches!(
            checked("http://auth.example.com/token"),
            Err(AuthError::InsecureUrl { .. })
        ));
        assert!(checked("ftp://127.0.0.1/").is_err());
        assert!(checked("/token").is_err());
    }
}
