//! The directory `zest serve` exposes, and the one rule every tool goes through: a path the
//! client names resolves inside it or is refused. Refused are any `..` segment, an absolute
//! path outside the root, and a path whose real location (symbolic links followed) is
//! outside the root.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused, in words the client's model can act on.
#[derive(Debug)]
pub(crate) struct PathRefused(String);

impl fmt::Display for PathRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PathRefused {}

/// The served directory, as its canonical path.
#[derive(Clone, Debug)]
pub(crate) struct Workspace {
    root: PathBuf,
    /// What the write tools are allowed (`--allow-write`).
    pub(crate) writable: bool,
}

impl Workspace {
    /// The workspace at `dir`, which must be a directory.
    pub(crate) fn open(dir: &Path, writable: bool) -> io::Result<Self> {
        let root = dir.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::other(format!("{} is not a directory", dir.display())));
        }
        Ok(Self { root, writable })
    }

    /// The canonical root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// `path` as the client wrote it, relative to the root (`.` for the root itself).
    pub(crate) fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        match path.strip_prefix(&self.root) {
            Ok(p) if p.as_os_str().is_empty() => Path::new("."),
            Ok(p) => p,
            Err(_) => path,
        }
    }

    /// The real path of the existing file or directory `path` names.
    pub(crate) fn existing(&self, path: &str) -> Result<PathBuf, PathRefused> {
        let joined = self.lexical(path)?;
        let real = joined.canonicalize().map_err(|e| refused_io(path, &e))?;
        self.inside(path, real)
    }

    /// Where a file `path` names may be written: the file itself need not exist, but the
    /// nearest existing ancestor must be inside the root and the file must not be a link
    /// that leads out of it.
    pub(crate) fn writable_target(&self, path: &str) -> Result<PathBuf, PathRefused> {
        let joined = self.lexical(path)?;
        if joined.symlink_metadata().is_ok() {
            return self.existing(path);
        }
        let mut ancestor = joined.as_path();
        let mut rest = Vec::new();
        while !ancestor.exists() {
            let Some(parent) = ancestor.parent() else { break };
            rest.push(ancestor.file_name().unwrap_or_default().to_owned());
            ancestor = parent;
        }
        let real = ancestor.canonicalize().map_err(|e| refused_io(path, &e))?;
        let mut real = self.inside(path, real)?;
        real.extend(rest.iter().rev());
        Ok(real)
    }

    /// `path` joined to the root, refusing `..` and absolute paths outside the root; links
    /// are not followed yet.
    fn lexical(&self, path: &str) -> Result<PathBuf, PathRefused> {
        let given = Path::new(path);
        if given.components().any(|c| c == Component::ParentDir) {
            return Err(PathRefused(format!(
                "{path}: `..` is not allowed; name a path inside the workspace"
            )));
        }
        if given.is_absolute() {
            if !given.starts_with(&self.root) {
                let root = self.root.display();
                return Err(PathRefused(format!("{path}: outside the workspace ({root})")));
            }
            return Ok(given.to_path_buf());
        }
        Ok(self.root.join(given))
    }

    fn inside(&self, path: &str, real: PathBuf) -> Result<PathBuf, PathRefused> {
        if real.starts_with(&self.root) {
            Ok(real)
        } else {
            Err(PathRefused(format!("{path}: leads outside the workspace through a symbolic link")))
        }
    }
}

fn refused_io(path: &str, e: &io::Error) -> PathRefused {
    match e.kind() {
        io::ErrorKind::NotFound => PathRefused(format!("{path}: no such file or directory")),
        _ => PathRefused(format!("{path}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("zest-ws-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root/sub")).unwrap();
        std::fs::write(dir.join("root/sub/a.txt"), "a").unwrap();
        std::fs::write(dir.join("secret.txt"), "s").unwrap();
        dir
    }

    #[test]
    fn paths_inside_resolve_and_escapes_are_refused() {
        let dir = scratch("escape");
        let ws = Workspace::open(&dir.join("root"), false).unwrap();
        assert!(ws.existing("sub/a.txt").unwrap().ends_with("root/sub/a.txt"));
        assert!(ws.existing(".").unwrap().ends_with("root"));
        let abs = ws.root().join("sub/a.txt");
        assert!(ws.existing(abs.to_str().unwrap()).is_ok());
        let up = ws.existing("sub/../../secret.txt").unwrap_err().to_string();
        assert!(up.contains("`..` is not allowed"), "{up}");
        let outside = dir.join("secret.txt");
        let abs = ws.existing(outside.to_str().unwrap()).unwrap_err().to_string();
        assert!(abs.contains("outside the workspace"), "{abs}");
        std::os::unix::fs::symlink(&outside, dir.join("root/link")).unwrap();
        let link = ws.existing("link").unwrap_err().to_string();
        assert!(link.contains("symbolic link"), "{link}");
        let write = ws.writable_target("link").unwrap_err().to_string();
        assert!(write.contains("symbolic link"), "{write}");
        std::os::unix::fs::symlink(&dir, dir.join("root/up")).unwrap();
        let through = ws.writable_target("up/new/file.txt").unwrap_err().to_string();
        assert!(through.contains("symbolic link"), "{through}");
        let new = ws.writable_target("sub/new/file.txt").unwrap();
        assert!(new.ends_with("root/sub/new/file.txt"), "{new:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
