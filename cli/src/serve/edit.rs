//! The write tools, registered only with `--allow-write`: `write_file` and `edit_file`.

use std::fs;

use serde::Deserialize;
use zest_blocking::{State, ToolError};

use super::workspace::Workspace;

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct WriteFile {
    /// The file, relative to the workspace root; missing directories are created.
    path: String,
    /// The file's whole new content.
    content: String,
}

/// Writes the whole file (creating it and its directories as needed).
pub(crate) fn write_file(args: WriteFile, ws: State<Workspace>) -> Result<String, ToolError> {
    let target = ws.writable_target(&args.path)?;
    if target.is_dir() {
        return Err(ToolError::new(format!("{}: is a directory", args.path)));
    }
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
    }
    fs::write(&target, &args.content).map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
    Ok(format!("wrote {} bytes to {}", args.content.len(), args.path))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct EditFile {
    /// The file, relative to the workspace root.
    path: String,
    /// The exact text to replace; it must occur exactly once in the file.
    old_text: String,
    /// What replaces it.
    new_text: String,
}

/// Replaces the one occurrence of `old_text`; refused when it occurs zero or several times.
pub(crate) fn edit_file(args: EditFile, ws: State<Workspace>) -> Result<String, ToolError> {
    let path = ws.writable_target(&args.path)?;
    let text =
        fs::read_to_string(&path).map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
    if args.old_text.is_empty() {
        return Err(ToolError::new("old_text is empty; use write_file to write a whole file"));
    }
    match text.matches(&args.old_text).count() {
        0 => Err(ToolError::new(format!("{}: old_text does not occur in the file", args.path))),
        1 => {
            let edited = text.replacen(&args.old_text, &args.new_text, 1);
            fs::write(&path, edited).map_err(|e| ToolError::new(format!("{}: {e}", args.path)))?;
            Ok(format!("replaced 1 occurrence in {}", args.path))
        }
        n => Err(ToolError::new(format!(
            "{}: old_text occurs {n} times; include more context so that it is unique",
            args.path
        ))),
    }
}
