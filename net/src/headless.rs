//! The headless answer to an OAuth authorization request: GET the authorization URL without
//! following the redirect, and hand back the `Location` it names (the whole redirect URL the
//! client checks). For tests, CI and authorization servers that redirect at once; a person
//! logs in through a browser instead.

/// GETs `url` (http or https) and returns its redirect target, resolved against `url`.
/// `Err` says why there is none (not a redirect, unreachable, a TLS failure).
pub fn authorize_headless(url: &str) -> Result<String, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url:?} is not a url: {e}"))?;
    let response = super::fetch::get_raw(url, "text/html")?;
    let location = redirect_target(&response)?;
    resolve(&uri, &location)
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
