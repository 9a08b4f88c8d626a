//! The packages `cargo retry-audit` scans: the members of the Cargo workspace around a directory.
//!
//! The answer comes from `cargo metadata --no-deps --format-version 1` (the program in `$CARGO`,
//! which cargo sets for its subcommands, or `cargo` on the `PATH`), so that every way of
//! declaring members is understood exactly as cargo does. When cargo cannot be started, the
//! manifests are read directly ([`members_from_manifests`]): the nearest `Cargo.toml` upward
//! from the directory; if it has no `[workspace]` table, the first one above it that has one and
//! lists the package as a member; then `[workspace] members` (paths and globs) minus `exclude`,
//! plus the root package if the workspace manifest has a `[package]`. `default-members` is not
//! consulted either way: every member is scanned, as `cargo clippy --workspace` would.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use globset::GlobBuilder;
use serde::Deserialize;

use crate::source::paths::absolute;

/// Why the workspace could not be determined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceError(pub String);

impl fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkspaceError {}

/// The Cargo workspace around a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    /// The directory of the workspace's manifest (of the package's, outside any workspace):
    /// where cargo runs `rustc`, so the directory its paths are relative to. Absolute.
    pub root: PathBuf,
    /// The directories of its members: absolute, sorted, without duplicates.
    pub members: Vec<PathBuf>,
}

/// The directories of the workspace members around `dir` (absolute, sorted, without
/// duplicates), from `cargo metadata`, or from the manifests when cargo cannot be started.
pub fn members(dir: &Path) -> Result<Vec<PathBuf>, WorkspaceError> {
    workspace(dir).map(|w| w.members)
}

/// The workspace around `dir`: its root and members, from `cargo metadata`, or from the
/// manifests when cargo cannot be started.
pub fn workspace(dir: &Path) -> Result<Workspace, WorkspaceError> {
    match members_from_cargo(dir) {
        Ok(workspace) => Ok(workspace),
        Err(CargoFailure::NotStarted) => workspace_from_manifests(dir),
        Err(CargoFailure::Failed(message)) => Err(WorkspaceError(message)),
    }
}

enum CargoFailure {
    /// The program could not be run at all: fall back to reading the manifests.
    NotStarted,
    /// Cargo ran and refused (a broken manifest, no manifest): its message.
    Failed(String),
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<MetadataPackage>,
    workspace_root: PathBuf,
}

#[derive(Deserialize)]
struct MetadataPackage {
    manifest_path: PathBuf,
}

fn members_from_cargo(dir: &Path) -> Result<Workspace, CargoFailure> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(dir)
        .output()
        .map_err(|_| CargoFailure::NotStarted)?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr
            .lines()
            .find(|line| line.starts_with("error"))
            .unwrap_or_else(|| stderr.trim())
            .trim_start_matches("error: ");
        return Err(CargoFailure::Failed(format!(
            "`cargo metadata` failed: {message}"
        )));
    }
    let metadata: Metadata = serde_json::from_slice(&output.stdout).map_err(|e| {
        CargoFailure::Failed(format!("cannot read the output of `cargo metadata`: {e}"))
    })?;
    let mut dirs: Vec<PathBuf> = metadata
        .packages
        .iter()
        .filter_map(|p| p.manifest_path.parent().map(absolute))
        .collect();
    dirs.sort();
    dirs.dedup();
    Ok(Workspace {
        root: absolute(&metadata.workspace_root),
        members: dirs,
    })
}

/// A manifest's `[workspace]` and whether it has a `[package]`.
#[derive(Deserialize)]
struct Manifest {
    package: Option<toml::Table>,
    workspace: Option<WorkspaceTable>,
}

#[derive(Deserialize)]
struct WorkspaceTable {
    #[serde(default)]
    members: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
}

fn read_manifest(path: &Path) -> Result<Manifest, WorkspaceError> {
    let text = fs::read_to_string(path)
        .map_err(|e| WorkspaceError(format!("cannot read {}: {e}", path.display())))?;
    toml::from_str(&text)
        .map_err(|e| WorkspaceError(format!("{}: {}", path.display(), e.message().trim_end())))
}

/// The workspace members around `dir`, read from the manifests (see the module documentation).
pub fn members_from_manifests(dir: &Path) -> Result<Vec<PathBuf>, WorkspaceError> {
    workspace_from_manifests(dir).map(|w| w.members)
}

/// The workspace around `dir`, read from the manifests (see the module documentation).
pub fn workspace_from_manifests(dir: &Path) -> Result<Workspace, WorkspaceError> {
    let dir = absolute(dir);
    let nearest = dir
        .ancestors()
        .find(|d| d.join("Cargo.toml").is_file())
        .ok_or_else(|| {
            WorkspaceError(format!(
                "could not find `Cargo.toml` in `{}` or any parent directory",
                dir.display()
            ))
        })?;
    let manifest = read_manifest(&nearest.join("Cargo.toml"))?;
    if let Some(workspace) = &manifest.workspace {
        return Ok(Workspace {
            root: nearest.to_path_buf(),
            members: workspace_members(nearest, workspace, manifest.package.is_some())?,
        });
    }
    // A package: it may belong to a workspace further up.
    for root in nearest.ancestors().skip(1) {
        let path = root.join("Cargo.toml");
        if !path.is_file() {
            continue;
        }
        let Ok(outer) = read_manifest(&path) else {
            continue;
        };
        if let Some(workspace) = &outer.workspace {
            let members = workspace_members(root, workspace, outer.package.is_some())?;
            if members.iter().any(|m| m == nearest) {
                return Ok(Workspace {
                    root: root.to_path_buf(),
                    members,
                });
            }
            break;
        }
    }
    Ok(Workspace {
        root: nearest.to_path_buf(),
        members: vec![nearest.to_path_buf()],
    })
}

/// Expands `members` (paths or globs relative to `root`) into package directories, drops the
/// `exclude`d ones, and adds `root` itself when it is a package.
fn workspace_members(
    root: &Path,
    workspace: &WorkspaceTable,
    root_is_package: bool,
) -> Result<Vec<PathBuf>, WorkspaceError> {
    let mut dirs = Vec::new();
    if root_is_package {
        dirs.push(root.to_path_buf());
    }
    for pattern in &workspace.members {
        let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
        if pattern.contains(['*', '?', '[']) {
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    WorkspaceError(format!("invalid workspace member glob `{pattern}`: {e}"))
                })?
                .compile_matcher();
            let depth = if pattern.contains("**") {
                usize::MAX
            } else {
                pattern.split('/').count()
            };
            let mut found = Vec::new();
            package_dirs(root, root, depth, &mut found)
                .map_err(|e| WorkspaceError(format!("cannot read {}: {e}", root.display())))?;
            dirs.extend(found.into_iter().filter(|d| {
                d.strip_prefix(root)
                    .is_ok_and(|relative| glob.is_match(relative))
            }));
        } else {
            let member = absolute(&root.join(pattern));
            if !member.join("Cargo.toml").is_file() {
                return Err(WorkspaceError(format!(
                    "workspace member `{pattern}` has no Cargo.toml (in {})",
                    root.display()
                )));
            }
            dirs.push(member);
        }
    }
    let excluded: Vec<PathBuf> = workspace
        .exclude
        .iter()
        .map(|e| absolute(&root.join(e)))
        .collect();
    dirs.retain(|d| !excluded.iter().any(|e| d.starts_with(e)));
    dirs.sort();
    dirs.dedup();
    Ok(dirs)
}

/// Collects the directories under `dir` (at most `depth` levels below `root`) that hold a
/// `Cargo.toml`, skipping hidden directories and `target`.
fn package_dirs(root: &Path, dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let level = dir.strip_prefix(root).map_or(0, |r| r.components().count());
    if level >= depth {
        return Ok(());
    }
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || !entry.file_type()?.is_dir() {
            continue;
        }
        let path = entry.path();
        if path.join("Cargo.toml").is_file() {
            out.push(path.clone());
        }
        package_dirs(root, &path, depth, out)?;
    }
    Ok(())
}
