//! Paths for machine formats: findings are reported relative to the repository root, as GitHub
//! code scanning, GitHub annotations and GitLab Code Quality expect.
//!
//! The root is the nearest ancestor of the current directory that holds a `.git` entry (a
//! directory, or a file in a worktree or submodule), or the current directory when there is
//! none. Paths are made absolute and cleaned lexically (`.` and `..` removed) before they are
//! compared, so `./src/a.rs`, `src/../src/a.rs` and `/repo/src/a.rs` are the same file.

use std::fmt::Write as _;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The directory that reported paths are relative to, and the current directory that the
/// scanned paths were given relative to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    cwd: PathBuf,
    dir: PathBuf,
}

impl Root {
    /// The repository root above the current directory, or the current directory.
    pub fn discover() -> io::Result<Root> {
        let cwd = normalize(&std::env::current_dir()?);
        let dir = cwd
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&cwd)
            .to_path_buf();
        Ok(Root { cwd, dir })
    }

    /// The root directory (absolute, cleaned).
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `path` (relative to the current directory, or absolute) made absolute and cleaned.
    #[must_use]
    pub fn absolute(&self, path: &Path) -> PathBuf {
        absolute(path, &self.cwd)
    }

    /// `path` relative to the root, with `/` separators, or `None` when it lies outside the
    /// root or is not valid Unicode.
    #[must_use]
    pub fn relative(&self, path: &Path) -> Option<String> {
        let relative = self.absolute(path).strip_prefix(&self.dir).ok()?.to_owned();
        let parts: Option<Vec<&str>> = relative
            .components()
            .map(|c| match c {
                Component::Normal(part) => part.to_str(),
                _ => None,
            })
            .collect();
        let parts = parts?;
        (!parts.is_empty()).then(|| parts.join("/"))
    }

    /// `path` as shown in annotations and reports: relative to the root when it is inside it,
    /// else absolute.
    #[must_use]
    pub fn display(&self, path: &Path) -> String {
        self.relative(path)
            .unwrap_or_else(|| self.absolute(path).to_string_lossy().into_owned())
    }
}

/// `path` made absolute against `base` and cleaned of `.` and `..` components.
#[must_use]
pub fn absolute(path: &Path, base: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&base.join(path))
    }
}

/// Removes `.` components and resolves `..` lexically (symbolic links are not followed).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `/..` is `/`: popping the root is a no-op.
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A relative path (`/`-separated) as a URI reference: each segment percent-encoded.
#[must_use]
pub fn uri_reference(relative: &str) -> String {
    relative
        .split('/')
        .map(percent_encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// An absolute path as a `file://` URI; with `trailing_slash`, as a directory URI (`.../`).
#[must_use]
pub fn file_uri(path: &Path, trailing_slash: bool) -> String {
    let mut uri = String::from("file://");
    let mut any = false;
    for component in path.components() {
        if let Component::Normal(part) = component {
            uri.push('/');
            uri.push_str(&percent_encode(&part.to_string_lossy()));
            any = true;
        }
    }
    if trailing_slash || !any {
        uri.push('/');
    }
    uri
}

/// Percent-encodes everything but RFC 3986's unreserved characters and the sub-delimiters
/// that are safe in a path segment.
fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(
                byte,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'@'
            );
        if keep {
            out.push(char::from(byte));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> Root {
        Root {
            cwd: PathBuf::from("/repo/crates/app"),
            dir: PathBuf::from("/repo"),
        }
    }

    #[test]
    fn paths_are_relative_to_the_root_whatever_their_spelling() {
        let root = root();
        assert_eq!(
            root.relative(Path::new("./src/a.rs")).as_deref(),
            Some("crates/app/src/a.rs")
        );
        assert_eq!(
            root.relative(Path::new("../lib/src/../src/b.rs"))
                .as_deref(),
            Some("crates/lib/src/b.rs")
        );
        assert_eq!(
            root.relative(Path::new("/repo/x.rs")).as_deref(),
            Some("x.rs")
        );
        assert_eq!(root.relative(Path::new("/elsewhere/y.rs")), None);
        assert_eq!(
            root.display(Path::new("/elsewhere/./y.rs")),
            "/elsewhere/y.rs"
        );
        assert_eq!(root.display(Path::new("src/a.rs")), "crates/app/src/a.rs");
    }

    #[test]
    fn uris_are_percent_encoded_per_segment() {
        assert_eq!(uri_reference("src/my file#1.rs"), "src/my%20file%231.rs");
        assert_eq!(uri_reference("src/é.rs"), "src/%C3%A9.rs");
        assert_eq!(
            file_uri(Path::new("/home/me/my repo"), true),
            "file:///home/me/my%20repo/"
        );
        assert_eq!(file_uri(Path::new("/a/b.rs"), false), "file:///a/b.rs");
        assert_eq!(file_uri(Path::new("/"), true), "file:///");
    }
}
