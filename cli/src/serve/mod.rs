//! `zest serve`: a directory's files as an MCP server, over stdio or HTTP.

mod edit;
mod exec;
mod files;
mod watch;
mod workspace;

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::thread;

use base64::Engine as _;
use serde::Deserialize;
use zest_blocking::core::error::CloseReason;
use zest_blocking::core::jsonrpc::{codes, ErrorObject};
use zest_blocking::schema::{
    BlobResourceContents, ReadResourceResult, ResourceContents, ResourceTemplate,
};
use zest_blocking::{Registry, ServerConfig, State, StdioServer, ToolError};

pub(crate) use workspace::Workspace;

use crate::guard::Guard;

/// What `zest serve` was asked for.
pub(crate) struct Serve {
    pub(crate) workspace: Workspace,
    pub(crate) allow_exec: bool,
    /// Over HTTP, who may use the server.
    pub(crate) guard: Guard,
}

/// The server's name, version and the instructions it gives the client's model.
fn config(serve: &Serve) -> ServerConfig {
    let mut config = ServerConfig::new("zest-workspace", env!("CARGO_PKG_VERSION"));
    let mut can = vec!["read_file", "list_directory", "find_files", "search_text", "file_info"];
    if serve.workspace.writable {
        can.extend(["write_file", "edit_file"]);
    }
    if serve.allow_exec {
        can.push("run_command");
    }
    config.instructions = Some(format!(
        "The files of one directory ({}). Paths are relative to it; nothing outside it can be \
         reached. Tools: {}. Every file is also the resource file://<its absolute path>.",
        serve.workspace.root().display(),
        can.join(", ")
    ));
    config
}

/// The registry for `serve`: the read tools always, the write tools and `run_command` as
/// allowed, the `file://` template and the prompts.
fn registry(serve: &Serve, watched: &watch::Watched) -> Registry {
    let ws = serve.workspace.clone();
    let mut r = Registry::new()
        .with_state(serve.workspace.clone())
        .tool("read_file", "Reads a text file, or a range of its lines", files::read_file)
        .tool("list_directory", "Lists a directory's entries", files::list_directory)
        .tool("find_files", "Finds files whose path matches a glob (hidden and git-ignored files skipped)", files::find_files)
        .tool(
            "search_text",
            "Searches files for lines matching a regular expression (hidden and git-ignored files skipped)",
            files::search_text,
        )
        .tool("file_info", "Tells a path's kind, size and modification time", files::file_info)
        .prompt("review_file", "Asks for a review of one file", review_file);
    if serve.workspace.writable {
        r = r
            .tool("write_file", "Writes a whole file, creating it if needed", edit::write_file)
            .tool(
                "edit_file",
                "Replaces one unique occurrence of a text in a file",
                edit::edit_file,
            );
    }
    if serve.allow_exec {
        r = r.tool(
            "run_command",
            "Runs a program (no shell) inside the workspace",
            exec::run_command,
        );
    }
    let template = ResourceTemplate::new("file://{+path}", "file");
    let (ws, watched) = (Arc::new(ws), watched.clone());
    r.resource_template(template, move |_, p, vars| read_resource(&ws, &watched, &p.uri, &vars));
    r
}

/// A file as a resource: text when it is UTF-8, else a base64 blob. From then on the file
/// is watched, so that subscribers hear of changes.
fn read_resource(
    ws: &Workspace,
    watched: &watch::Watched,
    uri: &str,
    vars: &std::collections::BTreeMap<String, String>,
) -> Result<ReadResourceResult, ErrorObject> {
    let not_found = |why: String| ErrorObject::new(codes::RESOURCE_NOT_FOUND, why);
    let path = vars.get("path").map_or("", String::as_str);
    let file = ws.existing(path).map_err(|e| not_found(e.to_string()))?;
    if !file.is_file() {
        return Err(not_found(format!("{uri}: not a file")));
    }
    watched.add(uri, &file);
    let bytes = fs::read(&file).map_err(|e| not_found(format!("{uri}: {e}")))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(ReadResourceResult::text(uri, Some(mime_of(&file)), text)),
        Err(e) => {
            let blob = base64::engine::general_purpose::STANDARD.encode(e.as_bytes());
            let contents = BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: Some("application/octet-stream".to_owned()),
                blob,
                ..Default::default()
            };
            Ok(ReadResourceResult {
                contents: vec![ResourceContents::Blob(contents)],
                ..Default::default()
            })
        }
    }
}

fn mime_of(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        Some("html") => "text/html",
        Some("rs") => "text/x-rust",
        _ => "text/plain",
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ReviewFile {
    /// The file to review, relative to the workspace root.
    path: String,
}

fn review_file(ReviewFile { path }: ReviewFile, ws: State<Workspace>) -> Result<String, ToolError> {
    let file = ws.existing(&path)?;
    let text = fs::read_to_string(&file).map_err(|e| ToolError::new(format!("{path}: {e}")))?;
    let text = files::bounded(text);
    Ok(format!(
        "Review the file {path}: point out bugs, unclear names and missing tests.\n\n{text}"
    ))
}

/// Serves over stdio until the client goes; a session that ended otherwise than by the
/// client closing its side says why on stderr.
pub(crate) fn stdio(serve: &Serve) {
    let watched = watch::Watched::default();
    let server = StdioServer::stdio(config(serve), registry(serve, &watched));
    watched.announce_on(server.handle());
    match server.stopped() {
        CloseReason::TransportEnded | CloseReason::Local => {}
        reason => eprintln!("zest serve: session ended: {reason}"),
    }
}

/// Serves over HTTP on `addr` (Streamable HTTP at `/mcp`, legacy SSE at `/sse`, `/health`)
/// until the process is stopped.
pub(crate) fn http(serve: &Serve, addr: &str) -> std::io::Result<()> {
    let watched = watch::Watched::default();
    let server = serve.guard.serve(addr, config(serve), registry(serve, &watched))?;
    watched.announce_on(server.handle());
    eprintln!("zest serve: {} on {}", serve.workspace.root().display(), server.url());
    loop {
        thread::park();
    }
}
