//! The read-only tools: `read_file`, `list_directory`, `find_files`, `search_text`,
//! `file_info`. Every answer is bounded; where a bound cut it short, the answer says so.

use std::fs;
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use zest_blocking::{Json, State, ToolError};

use super::workspace::Workspace;

/// The most text one answer carries.
pub(crate) const MAX_ANSWER: usize = 256 * 1024;
/// The most paths `find_files` returns, and the most matches `search_text` returns.
const MAX_HITS: usize = 1000;
/// Files larger than this are not searched.
const MAX_SEARCHED_FILE: u64 = 4 * 1024 * 1024;
/// How many entries a walk visits at most.
const MAX_WALK: usize = 100_000;

fn here() -> String {
    ".".to_owned()
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct ReadFile {
    /// The file, relative to the workspace root.
    path: String,
    /// The first line to return, counting from 1. Default 1.
    #[serde(default)]
    offset: Option<usize>,
    /// How many lines to return. Default: to the end.
    #[serde(default)]
    limit: Option<usize>,
}

/// The file's lines `offset ..= offset + limit - 1`, bounded by [`MAX_ANSWER`].
pub(crate) fn read_file(args: ReadFile, ws: State<Workspace>) -> Result<String, ToolError> {
    let path = ws.existing(&args.path)?;
    let text = fs::read(&path).map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
    let text = String::from_utf8(text).map_err(|_| {
        ToolError::new(format!("{}: not UTF-8 text; read it as a resource", args.path))
    })?;
    let skip = args.offset.unwrap_or(1).max(1) - 1;
    let lines = text.split_inclusive('\n').skip(skip);
    let picked: String = match args.limit {
        Some(limit) => lines.take(limit).collect(),
        None => lines.collect(),
    };
    Ok(bounded(picked))
}

/// `text` cut at [`MAX_ANSWER`] bytes (on a character boundary), saying how much was cut.
pub(crate) fn bounded(mut text: String) -> String {
    if text.len() <= MAX_ANSWER {
        return text;
    }
    let mut end = MAX_ANSWER;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("\n[truncated: {cut} more bytes; ask for a line range]"));
    text
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct ListDirectory {
    /// The directory, relative to the workspace root. Default: the root.
    #[serde(default = "here")]
    path: String,
}

/// One line per entry, sorted: `name/` for a directory, `name  (N bytes)` for a file,
/// `name -> target` for a link.
pub(crate) fn list_directory(
    args: ListDirectory,
    ws: State<Workspace>,
) -> Result<String, ToolError> {
    let dir = ws.existing(&args.path)?;
    let read = fs::read_dir(&dir).map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
    let mut lines: Vec<String> = read
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(t) if t.is_dir() => format!("{name}/"),
                Ok(t) if t.is_symlink() => {
                    let target = fs::read_link(entry.path()).unwrap_or_default();
                    format!("{name} -> {}", target.display())
                }
                _ => {
                    let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                    format!("{name}  ({size} bytes)")
                }
            }
        })
        .collect();
    lines.sort();
    if lines.is_empty() {
        return Ok(format!("{} is empty", args.path));
    }
    Ok(bounded(lines.join("\n")))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct FindFiles {
    /// A glob, matched against paths relative to `path`: `**/*.rs`, `src/*.toml`.
    pattern: String,
    /// Where to look, relative to the workspace root. Default: the root.
    #[serde(default = "here")]
    path: String,
}

/// The files under `path` whose relative path matches the glob, sorted, at most
/// [`MAX_HITS`]. Links are not followed.
pub(crate) fn find_files(args: FindFiles, ws: State<Workspace>) -> Result<String, ToolError> {
    let glob = globset::Glob::new(&args.pattern)
        .map_err(|e| ToolError::new(format!("bad glob {:?}: {e}", args.pattern)))?
        .compile_matcher();
    let base = ws.existing(&args.path)?;
    let mut found = Vec::new();
    let complete = walk(&base, &mut |file| {
        let relative = file.strip_prefix(&base).unwrap_or(file);
        if glob.is_match(relative) {
            found.push(ws.relative(file).display().to_string());
        }
        found.len() < MAX_HITS
    });
    found.sort();
    let mut answer = found.join("\n");
    if found.is_empty() {
        answer = format!("no file under {} matches {}", args.path, args.pattern);
    }
    if !complete {
        answer.push_str(&format!("\n[stopped at {} paths; narrow the pattern]", found.len()));
    }
    Ok(bounded(answer))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct SearchText {
    /// A regular expression (Rust `regex` syntax), matched line by line.
    pattern: String,
    /// Where to search, relative to the workspace root: a directory or one file. Default:
    /// the root.
    #[serde(default = "here")]
    path: String,
    /// Only files whose relative path matches this glob: `**/*.rs`.
    #[serde(default)]
    glob: Option<String>,
    /// The most matching lines to return. Default 200, at most 1000.
    #[serde(default)]
    max_results: Option<usize>,
}

/// `path:line: text` for each matching line, in path order, at most `max_results`; binary
/// files and files over 4 MiB are skipped.
pub(crate) fn search_text(args: SearchText, ws: State<Workspace>) -> Result<String, ToolError> {
    let regex = regex::Regex::new(&args.pattern)
        .map_err(|e| ToolError::new(format!("bad regular expression: {e}")))?;
    let glob = match &args.glob {
        Some(g) => Some(
            globset::Glob::new(g)
                .map_err(|e| ToolError::new(format!("bad glob {g:?}: {e}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let most = args.max_results.unwrap_or(200).clamp(1, MAX_HITS);
    let base = ws.existing(&args.path)?;
    let mut files = Vec::new();
    let complete = walk(&base, &mut |file| {
        let relative = file.strip_prefix(&base).unwrap_or(file);
        if glob.as_ref().is_none_or(|g| g.is_match(relative)) {
            files.push(file.to_path_buf());
        }
        true
    });
    files.sort();
    let mut hits = Vec::new();
    'files: for file in &files {
        let Some(text) = searchable(file) else { continue };
        for (n, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if hits.len() == most {
                    hits.push(format!("[stopped at {most} matches; narrow the search]"));
                    break 'files;
                }
                hits.push(format!("{}:{}: {line}", ws.relative(file).display(), n + 1));
            }
        }
    }
    if hits.is_empty() {
        hits.push(format!("no line under {} matches {}", args.path, args.pattern));
    }
    if !complete {
        hits.push(format!("[searched the first {MAX_WALK} entries only]"));
    }
    Ok(bounded(hits.join("\n")))
}

/// The file's text, unless it is large or not text.
fn searchable(file: &Path) -> Option<String> {
    let size = fs::metadata(file).ok()?.len();
    if size > MAX_SEARCHED_FILE {
        return None;
    }
    let bytes = fs::read(file).ok()?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Calls `visit` with every file under `dir` (or `dir` itself, if it is a file), as git
/// would see them: hidden files and what `.gitignore` files ignore are skipped, links are not
/// followed. Stops when `visit` returns false or after [`MAX_WALK`] entries; true if the walk
/// saw everything.
fn walk(dir: &Path, visit: &mut dyn FnMut(&Path) -> bool) -> bool {
    let walker = ignore::WalkBuilder::new(dir).require_git(false).follow_links(false).build();
    for (seen, entry) in walker.filter_map(Result::ok).enumerate() {
        if seen >= MAX_WALK {
            return false;
        }
        if entry.file_type().is_some_and(|t| t.is_file()) && !visit(entry.path()) {
            return false;
        }
    }
    true
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct FileInfo {
    /// The file or directory, relative to the workspace root.
    path: String,
}

/// What `file_info` answers, as structured content.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Info {
    /// The path relative to the workspace root.
    path: String,
    /// `file`, `directory` or `other`.
    kind: String,
    /// Size in bytes.
    size: u64,
    /// Last modification, in seconds since the Unix epoch.
    modified: Option<u64>,
    /// True if the file cannot be written.
    readonly: bool,
}

/// The kind, size, modification time and write permission of a path.
pub(crate) fn file_info(args: FileInfo, ws: State<Workspace>) -> Result<Json<Info>, ToolError> {
    let path = ws.existing(&args.path)?;
    let meta = fs::metadata(&path).map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
    let kind = if meta.is_dir() {
        "directory"
    } else if meta.is_file() {
        "file"
    } else {
        "other"
    };
    let modified = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    Ok(Json(Info {
        path: ws.relative(&path).display().to_string(),
        kind: kind.to_owned(),
        size: meta.len(),
        modified: modified.map(|d| d.as_secs()),
        readonly: meta.permissions().readonly(),
    }))
}
