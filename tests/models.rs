//! The built-in models (`models/*.toml`) are data the fixtures must cover: every entry decides
//! something in at least one fixture, and without it that fixture's findings change. An entry no
//! fixture needs is either dead or untested; both are reported here.
//!
//! The vocabulary (`models/vocabulary.toml`: words of project code's names, such as the words
//! that make an operation a request to a service) is checked a list at a time: each list decides
//! something in at least one fixture, and emptied, some fixture's findings change. Its words
//! are too many, and too often alternatives for one another (`retry`, `attempt`), for a fixture
//! each; which of them no fixture uses is printed (`--nocapture`), not failed. A word that
//! can never decide anything (in a list matched by parts, one that contains another word of it)
//! is removed. A word that decides nothing in the fixtures, the realcode corpus or the census
//! trees (the ignored test below counts them) is dead there: a candidate for removal, which is
//! made only when removing it changes no finding on any of them.
//!
//! One test in this binary: the record of used entries is shared by the whole process. (The
//! other, ignored, is run alone: `VOCABULARY_TREES=dir:dir cargo test --release --test models --
//! --ignored --nocapture` counts the files of other trees each vocabulary word decides
//! something in, to find dead vocabulary.)

#![cfg(feature = "analysis")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retry_audit::analysis::known::{builtin, List, Models};
use retry_audit::{check_source, Settings};

/// Vocabulary lists no fixture proves yet: no fixture uses a word of them, or emptied, no
/// fixture's findings change (other evidence decides the same). Each is a gap in the fixtures,
/// listed here so that it is seen; a list leaves this list once a fixture proves it (the test
/// says so).
const UNPROVEN_VOCABULARY: &[&str] = &[
    // No fixture uses a word of them.
    "single-exchange-words",
    "alternative-pickers",
    "wait-qualifiers",
    "not-wait-prefixes",
    "random-name-prefixes",
    "random-name-suffixes",
    "key-names",
    "jittered-strategy-words",
    "attempts-left-checks",
    "error-names",
    "random-file-words",
    "clock-checks",
    "status-collection-words",
    // Used, but emptied, no fixture's findings change.
    "remote-operations",
    "session-word-stems",
    "time-names",
    "retry-predicate-words",
    "retry-predicates",
    "time-up-words",
    "wait-words",
    "not-wait-words",
    "exhausted-checks",
    "count-down-words",
    "error-variable-words",
    "growth-field-names",
    "attempt-limit-field-words",
    "delay-field-names",
    "not-policy-type-words",
    "schedule-calls",
    "budget-checks",
    "reauth-operations",
];

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
    for key in UNPROVEN_VOCABULARY {
        if !List::ALL
            .iter()
            .any(|l| l.is_vocabulary() && l.key() == *key)
        {
            report.push(format!(
                "UNPROVEN_VOCABULARY names `{key}`, no vocabulary list"
            ));
        }
    }
    let mut unused_words = Vec::new();
    for list in List::ALL.into_iter().filter(|l| l.is_vocabulary()) {
        checked += 1;
        let entries = models.entries(list);
        let mut using: Vec<usize> = (0..entries.len())
            .filter_map(|i| users.get(&(list, i)))
            .flatten()
            .copied()
            .collect();
        using.sort_unstable();
        using.dedup();
        unused_words.extend(
            (0..entries.len())
                .filter(|i| !users.contains_key(&(list, *i)))
                .map(|i| format!("{} `{}`", list.key(), entries[i].text)),
        );
        let unproven = UNPROVEN_VOCABULARY.contains(&list.key());
        if using.is_empty() {
            if unproven {
                continue;
            }
            report.push(format!(
                "{} ({} words, {}): no fixture uses any of its words",
                list.key(),
                entries.len(),
                entries.first().map_or("", |e| e.file)
            ));
            continue;
        }
        let matters = Models::without_list(list, || {
            using.iter().any(|&n| findings(&files[n].1) != baseline[n])
        });
        if matters && unproven {
            report.push(format!(
                "{}: proven by a fixture now ({}): take it out of UNPROVEN_VOCABULARY",
                list.key(),
                fixture_names(&using)
            ));
        }
        if !matters && !unproven {
            report.push(format!(
                "{} ({}): used by {} fixture(s) ({}), but none reports anything else without the whole list",
                list.key(),
                entries.first().map_or("", |e| e.file),
                using.len(),
                fixture_names(&using)
            ));
        }
    }
    if !unused_words.is_empty() {
        println!(
            "{} vocabulary words no fixture uses (the lists are checked as a whole):\n  {}",
            unused_words.len(),
            unused_words.join("\n  ")
        );
    }
    for list in List::ALL.into_iter().filter(|l| !l.is_vocabulary()) {
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

/// How many files of the trees in `VOCABULARY_TREES` (`:`-separated) each vocabulary word
/// decides something in (each file read alone): a word that decides nothing there, nor in the
/// fixtures, is dead vocabulary.
#[test]
#[ignore = "reads the trees named in VOCABULARY_TREES"]
fn vocabulary_words_used_in_other_trees() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                if !path.is_symlink() {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let trees = std::env::var("VOCABULARY_TREES").expect("VOCABULARY_TREES=dir:dir");
    let mut files = Vec::new();
    for tree in trees.split(':') {
        walk(Path::new(tree), &mut files);
    }
    let models = builtin();
    let mut counts: BTreeMap<(List, usize), usize> = BTreeMap::new();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        models.forget();
        let _ = check_source(&text, &Settings::preview());
        for list in List::ALL.into_iter().filter(|l| l.is_vocabulary()) {
            for i in 0..models.entries(list).len() {
                if models.was_used(list, i) {
                    *counts.entry((list, i)).or_default() += 1;
                }
            }
        }
    }
    println!("{} files", files.len());
    for list in List::ALL.into_iter().filter(|l| l.is_vocabulary()) {
        for (i, entry) in models.entries(list).iter().enumerate() {
            let n = counts.get(&(list, i)).copied().unwrap_or(0);
            println!("{n:>7} {} `{}`", list.key(), entry.text);
        }
    }
}
