//! Logging a person in: open the authorization URL in their browser and catch the redirect
//! on a loopback listener at the client's redirect URI (RFC 8252 §7.3), returning the whole
//! URL the browser came back to.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the person has to log in.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Listens on `redirect_uri` (an `http://127.0.0.1:PORT/path` or `http://localhost:PORT/path`
/// URL), opens `url` with `open` (see [`open_in_browser`]), and returns the first request to
/// that path as a whole URL, within `timeout`. Requests to other paths get 404.
pub fn authorize_in_browser(
    url: &str,
    redirect_uri: &str,
    open: impl FnOnce(&str) -> io::Result<()>,
    timeout: Duration,
) -> Result<String, String> {
    let uri: http::Uri = redirect_uri.parse().map_err(|e| format!("{redirect_uri:?}: {e}"))?;
    let host = uri.host().unwrap_or_default();
    if uri.scheme_str() != Some("http") || !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        return Err(format!("{redirect_uri} is not a loopback http redirect URI"));
    }
    let port = uri.port_u16().ok_or("the redirect URI names no port")?;
    let bind = if host == "[::1]" { "[::1]" } else { "127.0.0.1" };
    let listener = TcpListener::bind(format!("{bind}:{port}")).map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    open(url).map_err(|e| format!("cannot open the browser: {e}"))?;
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Some(target) = answer(stream, uri.path()) {
                    let authority = uri.authority().map_or("", |a| a.as_str());
                    return Ok(format!("http://{authority}{target}"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("nobody logged in in time".into())
}

/// Reads one request; on `path` answers a page saying the login is done and returns the
/// request target, else 404.
fn answer(stream: TcpStream, path: &str) -> Option<String> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let target = line.split_whitespace().nth(1)?.to_owned();
    let ours = target.split('?').next() == Some(path);
    let (status, body) = if ours {
        ("200 OK", "Logged in. You can close this window.")
    } else {
        ("404 Not Found", "Not here.")
    };
    let mut stream = reader.into_inner();
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    ours.then_some(target)
}

/// Opens `url` in the person's browser (`xdg-open`, `open`, or `start`).
pub fn open_in_browser(url: &str) -> io::Result<()> {
    let mut command = if cfg!(target_os = "macos") {
        Command::new("open")
    } else if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        Command::new("xdg-open")
    };
    command.arg(url).stdout(Stdio::null()).stderr(Stdio::null()).spawn().map(drop)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn catches_the_redirect_and_ignores_other_paths() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let redirect = format!("http://127.0.0.1:{port}/callback");
        // The "browser": a stray request, then the redirect the authorization server sent.
        let browse = move |_: &str| {
            std::thread::spawn(move || {
                for target in ["/favicon.ico", "/callback?code=c0de&state=s1"] {
                    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                    write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
                    let mut page = String::new();
                    let _ = s.read_to_string(&mut page);
                }
            });
            Ok(())
        };
        let back = authorize_in_browser(
            "https://as.example/authorize",
            &redirect,
            browse,
            Duration::from_secs(10),
        );
        assert_eq!(back.unwrap(), format!("{redirect}?code=c0de&state=s1"));
        let refused =
            authorize_in_browser("u", "https://app.example/cb", |_| Ok(()), Duration::ZERO);
        assert!(refused.unwrap_err().contains("loopback"));
    }
}
