//! What a client command talks to: an `http(s)://` URL, a command after `--` (spawned over
//! stdio), or a server named in an `mcpServers` file (the format Claude Desktop, Cursor and
//! VS Code use: `{"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::{Client, ClientOptions, ConnectError, HttpEndpoint, StdioCommand};

use crate::fail::Failure;
use crate::login::{LoginArgs, TokenCache};

/// The target arguments every client command takes.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct TargetArgs {
    /// An `http(s)://` URL (Streamable HTTP or legacy SSE, detected) or a server name from
    /// the `--config` file; leave it out and give the command after `--` to spawn a stdio
    /// server.
    #[arg(value_name = "TARGET")]
    pub(crate) target: Option<String>,
    /// An `mcpServers` JSON file to look server names up in.
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) config: Option<PathBuf>,
    /// A header to send on every HTTP request, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "HEADER", global = true)]
    pub(crate) headers: Vec<String>,
    /// A bearer token for an HTTP server.
    #[arg(long, value_name = "TOKEN", global = true)]
    pub(crate) bearer_token: Option<String>,
    /// The stdio server to spawn: `zest tools -- npx -y @modelcontextprotocol/server-everything`.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    #[command(flatten)]
    pub(crate) login: LoginArgs,
}

/// A server as an `mcpServers` entry describes it.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ServerEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServersFile {
    mcp_servers: BTreeMap<String, ServerEntry>,
}

/// Where to connect, resolved.
enum Resolved {
    Stdio(StdioCommand),
    Http(Box<HttpEndpoint>),
}

impl TargetArgs {
    /// Connects and completes the handshake, as `client_name`.
    pub(crate) fn connect(&self, handlers: SyncClientHandlers) -> Result<Client, Failure> {
        let options = |h| ClientOptions::new("zest", env!("CARGO_PKG_VERSION")).handlers(h);
        let outcome = match self.resolve()? {
            Resolved::Stdio(command) => Client::spawn(command, options(handlers)),
            // A server may ask for authorization (OAuth) unless a token was given.
            Resolved::Http(endpoint) if self.bearer_token.is_none() => {
                let cache = TokenCache::default_location();
                let url = endpoint.url.clone();
                let oauth = self.login.oauth(&url, &cache)?;
                let handlers = self.login.handlers(handlers, &oauth, &url, &cache);
                let endpoint = endpoint.oauth(oauth);
                Client::connect_to(endpoint, options(handlers))
            }
            Resolved::Http(endpoint) => Client::connect_to(*endpoint, options(handlers)),
        };
        outcome.map_err(|e| connect_failure(self.describe(), &e))
    }

    /// The URL of an HTTP target (given, or named in the config file).
    pub(crate) fn url(&self) -> Result<Option<String>, Failure> {
        Ok(match self.resolve()? {
            Resolved::Http(endpoint) => Some(endpoint.url.clone()),
            Resolved::Stdio(_) => None,
        })
    }

    /// The target in words, for messages.
    pub(crate) fn describe(&self) -> String {
        match (&self.target, self.command.is_empty()) {
            (Some(t), _) => t.clone(),
            (None, false) => self.command.join(" "),
            (None, true) => "nothing".to_owned(),
        }
    }

    fn resolve(&self) -> Result<Resolved, Failure> {
        match (&self.target, self.command.split_first()) {
            (Some(_), Some(_)) => {
                Err(Failure::usage("give a TARGET or a command after `--`, not both"))
            }
            (None, Some((program, args))) => {
                Ok(Resolved::Stdio(stdio(program, args, &BTreeMap::new())))
            }
            (None, None) => Err(Failure::usage(
                "no server given: name a URL (zest tools http://127.0.0.1:8080/mcp) or a command \
                 after `--` (zest tools -- zest serve .)",
            )),
            (Some(t), None) if t.starts_with("http://") || t.starts_with("https://") => {
                Ok(Resolved::Http(Box::new(self.endpoint(t, &BTreeMap::new())?)))
            }
            (Some(name), None) => self.named(name),
        }
    }

    fn endpoint(
        &self,
        url: &str,
        extra: &BTreeMap<String, String>,
    ) -> Result<HttpEndpoint, Failure> {
        let mut endpoint = HttpEndpoint::new(url);
        for (name, value) in extra {
            endpoint = endpoint.header(name, value);
        }
        for header in &self.headers {
            let Some((name, value)) = header.split_once(':') else {
                return Err(Failure::usage(format!(
                    "--header {header:?}: write it as `Name: value`"
                )));
            };
            endpoint = endpoint.header(name.trim(), value.trim());
        }
        if let Some(token) = &self.bearer_token {
            endpoint = endpoint.bearer(token);
        }
        Ok(endpoint)
    }

    /// The server `name` from the `--config` file (or `.mcp.json` here, when present).
    fn named(&self, name: &str) -> Result<Resolved, Failure> {
        let default = Path::new(".mcp.json");
        let file = match &self.config {
            Some(file) => file.as_path(),
            None if default.exists() => default,
            None => {
                return Err(Failure::usage(format!(
                    "{name:?} is not a URL; to use a server by name, point --config at an \
                     mcpServers JSON file"
                )))
            }
        };
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
        let servers: ServersFile = serde_json::from_str(&text).map_err(|e| {
            Failure::usage(format!("{}: not an mcpServers file: {e}", file.display()))
        })?;
        let Some(entry) = servers.mcp_servers.get(name) else {
            let known: Vec<&str> = servers.mcp_servers.keys().map(String::as_str).collect();
            return Err(Failure::usage(format!(
                "{}: no server named {name:?} (it has: {})",
                file.display(),
                known.join(", ")
            )));
        };
        match (&entry.command, &entry.url) {
            (Some(program), _) => Ok(Resolved::Stdio(stdio(program, &entry.args, &entry.env))),
            (None, Some(url)) => Ok(Resolved::Http(Box::new(self.endpoint(url, &entry.headers)?))),
            (None, None) => Err(Failure::usage(format!(
                "{}: server {name:?} has neither `command` nor `url`",
                file.display()
            ))),
        }
    }
}

fn stdio(program: &str, args: &[String], env: &BTreeMap<String, String>) -> StdioCommand {
    let mut command = StdioCommand::new(program).args(args);
    for (key, value) in env {
        command = command.env(key, value);
    }
    command
}

fn connect_failure(target: String, e: &ConnectError) -> Failure {
    Failure::connect(format!("could not connect to {target}: {e}"))
}
