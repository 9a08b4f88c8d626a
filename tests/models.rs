//! The built-in models (`models/*.toml`) are data the fixtures must cover: every entry decides
//! something in at least one fixture, and without it that fixture's findings change. An entry no
//! fixture needs is either dead or untested; both are reported here.
//!
//! One test in this binary: the record of used entries is shared by the whole process.

#![cfg(feature = "analysis")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retry_audit::analysis::known::{builtin, List, Models};
use retry_audit::{check_source, Settings};

fn fixture_files() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                // Crate fixtures (a folder with Cargo.toml) are read with their crate; the files
                // checked alone are enough to cover the models.
                if !path.join("Cargo.toml").exists() {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// What the engine reports for one source: where, which rule, the message and what the
/// primary label says of each finding (`the wait grows up to 9 min`: the facts read).
fn findings(text: &str) -> Vec<String> {
    match check_source(text, &Settings::preview()) {
        Ok(found) => found
            .iter()
            .map(|d| {
                format!(
                    "{:?} {} {}: {}",
                    d.primary.span,
                    d.rule.id(),
                    d.message,
                    d.primary.message
                )
            })
            .collect(),
        Err(e) => vec![format!("error: {e}")],
    }
}

#[test]
fn every_model_entry_is_exercised_by_a_fixture_and_matters_there() {
    let models: &Models = builtin();
    let files = fixture_files();
    assert!(files.len() > 50, "fixtures not found");
    // Which fixtures use which entries, and what each reports with every entry known.
    let mut users: BTreeMap<(List, usize), Vec<usize>> = BTreeMap::new();
    // Policies: (policy, part) -> fixtures.
    let policies: Vec<_> = models.policies().collect();
    let mut policy_users: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    let mut baseline = Vec::new();
    for (n, (_, text)) in files.iter().enumerate() {
        models.forget();
        baseline.push(findings(text));
        for list in List::ALL {
            for i in 0..models.entries(list).len() {
                if models.was_used(list, i) {
                    users.entry((list, i)).or_default().push(n);
                }
            }
        }
        for (i, (policy, _)) in policies.iter().enumerate() {
            for part in 0..policy.parts().len() {
                if models.policy_part_used(i, part) {
                    policy_users.entry((i, part)).or_default().push(n);
                }
            }
        }
    }
    let fixture_names = |using: &[usize]| -> String {
        using
            .iter()
            .take(3)
            .map(|&n| {
                files[n]
                    .0
                    .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                    .unwrap_or(&files[n].0)
                    .display()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut report = Vec::new();
    let mut checked = 0;
    for list in List::ALL {
        for (i, entry) in models.entries(list).iter().enumerate() {
            checked += 1;
            let Some(using) = users.get(&(list, i)) else {
                report.push(format!(
                    "{} `{}` ({}): no fixture uses it",
                    list.key(),
                    entry.text,
                    entry.file
                ));
                continue;
            };
            let matters = Models::without(list, i, || {
                using.iter().any(|&n| findings(&files[n].1) != baseline[n])
            });
            if !matters {
                report.push(format!(
                    "{} `{}` ({}): used by {} fixture(s) ({}), but none reports anything else without it",
                    list.key(),
                    entry.text,
                    entry.file,
                    using.len(),
                    fixture_names(using)
                ));
            }
        }
    }
    // Every policy entry, each of its steps and each root's own effect.
    for (i, (policy, file)) in policies.iter().enumerate() {
        for (part, what) in policy.parts().iter().enumerate() {
            checked += 1;
            let Some(using) = policy_users.get(&(i, part)) else {
                report.push(format!("policies {what} ({file}): no fixture uses it"));
                continue;
            };
            let matters = Models::without_policy(i, part, || {
                using.iter().any(|&n| findings(&files[n].1) != baseline[n])
            });
            if !matters {
                report.push(format!(
                    "policies {what} ({file}): used by {} fixture(s) ({}), but none reports anything else without it",
                    using.len(),
                    fixture_names(using)
                ));
            }
        }
    }
    assert!(checked > 50, "only {checked} model entries");
    assert!(
        report.is_empty(),
        "{} of {checked} model entries not exercised:\n  {}",
        report.len(),
        report.join("\n  ")
    );
}
