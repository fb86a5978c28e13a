//! The headless answer to an OAuth authorization request: GET the authorization URL without
//! following the redirect, and hand back the `Location` it names (the whole redirect URL the
//! client checks). For tests, CI and authorization servers that redirect at once; a person
//! logs in through a browser instead.

/// GETs `url` (http or https) and returns its redirect target, resolved against `url`.
/// `Err` says why there is none (not a redirect, unreachable, a TLS failure).
pub fn authorize_headless(url: &str) -> Result<String, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url:?} is not a url: {e}"))?;
    let fetched =
        super::fetch::send(url, http::Method::GET, "text/html", &[], bytes::Bytes::new())?;
    let location = redirect_target(fetched.status, &fetched.headers)?;
    resolve(&uri, &location)
}

/// The `Location` of a 3xx response.
fn redirect_target(status: u16, headers: &http::HeaderMap) -> Result<String, String> {
    if !(300..400).contains(&status) {
        return Err(format!("the authorization url answered {status}, not a redirect"));
    }
    let location = headers.get(http::header::LOCATION).ok_or("the redirect has no Location")?;
    location.to_str().map(str::to_owned).map_err(|_| "Location is not text".into())
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
        let mut headers = http::HeaderMap::new();
        let target = "http://localhost:3000/cb?code=x&state=y";
        headers.insert(http::header::LOCATION, target.parse().unwrap());
        assert_eq!(redirect_target(302, &headers).unwrap(), target);
        assert!(redirect_target(200, &headers).is_err());
        assert!(redirect_target(302, &http::HeaderMap::new()).is_err());
        let base: http::Uri = "http://127.0.0.1:9/authorize?x=1".parse().unwrap();
        assert_eq!(resolve(&base, "/cb?code=1").unwrap(), "http://127.0.0.1:9/cb?code=1");
    }
}
