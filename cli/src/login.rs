//! OAuth for the client commands: every HTTP target may ask for authorization, and then
//! `zest` logs in through the browser (a loopback callback on [`CALLBACK_PORTS`]), or with
//! client credentials when given, and keeps the tokens in a cache file so the next command
//! needs no login (refreshing them when they expire). `zest login` and `zest logout`
//! manage that cache.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use zest_blocking::core::auth::Grant;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::{ClientCredentials, OAuthConfig, Tokens};

use crate::fail::Failure;

/// The loopback ports the browser may come back to, in order: the first one free is used,
/// and registered as the redirect URI with servers that register clients dynamically.
pub(crate) const CALLBACK_PORTS: std::ops::RangeInclusive<u16> = 33418..=33427;

/// The redirect URI on the first free callback port (`None` when all are busy).
fn redirect_uri() -> Option<String> {
    CALLBACK_PORTS
        .into_iter()
        .find(|port| std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .map(|port| format!("http://127.0.0.1:{port}/callback"))
}

/// The OAuth options of the client commands.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct LoginArgs {
    /// A client id registered with the server's authorization server (instead of
    /// registering dynamically).
    #[arg(long, value_name = "ID", global = true)]
    pub(crate) client_id: Option<String>,
    /// That client's secret.
    #[arg(long, value_name = "SECRET", global = true, requires = "client_id")]
    pub(crate) client_secret: Option<String>,
    /// Authorize as the client itself (client credentials), without a person.
    #[arg(long, global = true, requires = "client_secret")]
    pub(crate) client_credentials: bool,
    /// Print the login URL instead of opening a browser.
    #[arg(long, global = true)]
    pub(crate) no_browser: bool,
}

/// The token cache: one JSON object of tokens by server URL, readable only by its owner.
#[derive(Clone, Debug)]
pub(crate) struct TokenCache {
    path: PathBuf,
}

impl TokenCache {
    /// `$ZEST_TOKEN_CACHE`, else `tokens.json` in `$XDG_CONFIG_HOME/zest` or `~/.config/zest`.
    pub(crate) fn default_location() -> Self {
        let path = std::env::var_os("ZEST_TOKEN_CACHE").map(PathBuf::from).unwrap_or_else(|| {
            let config = std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
                .unwrap_or_else(|| PathBuf::from("."));
            config.join("zest").join("tokens.json")
        });
        Self { path }
    }

    fn all(&self) -> BTreeMap<String, Tokens> {
        let text = fs::read_to_string(&self.path).unwrap_or_default();
        serde_json::from_str(&text).unwrap_or_default()
    }

    /// The tokens kept for `url`.
    pub(crate) fn load(&self, url: &str) -> Option<Tokens> {
        self.all().remove(url)
    }

    /// Keeps `tokens` for `url` (`None` forgets them).
    pub(crate) fn store(&self, url: &str, tokens: Option<&Tokens>) -> std::io::Result<()> {
        let mut all = self.all();
        match tokens {
            Some(t) => all.insert(url.to_owned(), t.clone()),
            None => all.remove(url),
        };
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
        let temp = self.path.with_extension("tmp");
        write_private(&temp, text.as_bytes())?;
        fs::rename(&temp, &self.path)
    }
}

#[cfg(unix)]
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file =
        fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    file.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    fs::write(path, bytes)
}

impl LoginArgs {
    /// The OAuth config for the server at `url`, starting from its cached tokens.
    pub(crate) fn oauth(&self, url: &str, cache: &TokenCache) -> Result<OAuthConfig, Failure> {
        let credentials = self.client_id.clone().map(|id| match &self.client_secret {
            Some(secret) => ClientCredentials::confidential(id, secret.clone()),
            None => ClientCredentials::public(id),
        });
        let mut oauth = match (self.client_credentials, credentials) {
            (true, Some(c)) => OAuthConfig::client_credentials(c),
            (true, None) => return Err(Failure::usage("--client-credentials needs --client-id")),
            (false, c) => {
                let redirect = redirect_uri().ok_or_else(|| {
                    Failure::usage(format!(
                        "every login callback port ({}-{}) is busy: another zest logging in?",
                        CALLBACK_PORTS.start(),
                        CALLBACK_PORTS.end()
                    ))
                })?;
                let oauth = OAuthConfig::authorization_code(redirect).client_name("zest");
                match c {
                    Some(c) => oauth.pre_registered(c),
                    None => oauth,
                }
            }
        };
        if let Some(mut tokens) = cache.load(url) {
            // A dynamically registered client knows one redirect URI: on another port it
            // registers again rather than be refused.
            if !matches!(&oauth.grant, Grant::AuthorizationCode { redirect_uri } if redirect_uri.contains(&format!(":{}/", CALLBACK_PORTS.start())))
            {
                tokens.client_id = None;
            }
            oauth = oauth.tokens(tokens);
        }
        Ok(oauth.shared_cache())
    }

    /// `handlers` that log a person in through the browser (back on `oauth`'s redirect URI)
    /// and keep tokens in `cache`.
    pub(crate) fn handlers(
        &self,
        handlers: SyncClientHandlers,
        oauth: &OAuthConfig,
        url: &str,
        cache: &TokenCache,
    ) -> SyncClientHandlers {
        let redirect = match &oauth.grant {
            Grant::AuthorizationCode { redirect_uri } => redirect_uri.clone(),
            _ => String::new(),
        };
        let no_browser = self.no_browser;
        let (store, load) = (Arc::new(cache.clone()), Arc::new(cache.clone()));
        let (url_store, url_load) = (url.to_owned(), url.to_owned());
        handlers
            .on_authorize(move |login| {
                eprintln!("zest: log in at {login}");
                let open = |u: &str| {
                    if no_browser {
                        Ok(())
                    } else {
                        zest_blocking::open_in_browser(u)
                    }
                };
                zest_blocking::authorize_in_browser(
                    &login,
                    &redirect,
                    open,
                    zest_blocking::LOGIN_TIMEOUT,
                )
            })
            .on_tokens_changed(move |tokens| {
                if let Err(e) = store.store(&url_store, Some(tokens)) {
                    eprintln!("zest: cannot keep the tokens in {}: {e}", store.path.display());
                }
            })
            .on_load_tokens(move || load.load(&url_load))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_callback_port_gives_way_to_the_next() {
        let first = redirect_uri().expect("a free callback port");
        let port: u16 =
            first.split(':').nth(2).unwrap().split('/').next().unwrap().parse().unwrap();
        let _busy = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        let next = redirect_uri().expect("another free callback port");
        assert_ne!(next, first);
        assert!(CALLBACK_PORTS.contains(
            &next.split(':').nth(2).unwrap().split('/').next().unwrap().parse().unwrap()
        ));
    }

    #[test]
    fn the_cache_keeps_tokens_by_url_privately_and_forgets_them() {
        let dir = std::env::temp_dir().join(format!("zest-cache-{}", std::process::id()));
        let cache = TokenCache { path: dir.join("tokens.json") };
        let tokens = Tokens::new("https://as.example", "a-1");
        cache.store("https://one.example/mcp", Some(&tokens)).unwrap();
        cache.store("https://two.example/mcp", Some(&Tokens::new("i", "b"))).unwrap();
        assert_eq!(cache.load("https://one.example/mcp"), Some(tokens));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&cache.path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        cache.store("https://one.example/mcp", None).unwrap();
        assert_eq!(cache.load("https://one.example/mcp"), None);
        assert!(cache.load("https://two.example/mcp").is_some());
        let _ = fs::remove_dir_all(dir);
    }
}
