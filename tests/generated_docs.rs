//! The documentation's generated blocks that no other test writes: each is the output a program
//! of this repository wrote, so that no figure or claim in them is typed by hand.
//!
//! - `overhead` and `bench`: the last blessed outputs of the benchmarks, kept in
//!   `benches/results/` with the date, the commit and the machine they were measured on
//!   (`benches/overhead.py --bless`, `BLESS=1 benches/scan.sh`, which write both the file and
//!   the block). CI does not measure again; it checks the block is the file.
//! - `ci-steps`: the steps of `.ci/run` and what it says it does not run, read from the script.
//! - `census`: the censuses of findings judged on repositories nobody tuned for, counted from
//!   `tests/realcode/census.json` (with what the rules stable in this build report of them).
//!
//! `BLESS=1 cargo test --test generated_docs` rewrites a block from its source instead of
//! failing. Blocks are found by their markers in `README.md` or any `docs/**/*.md`.

mod blocks;

use std::fmt::Write as _;
use std::fs;

use blocks::{root, Block};

/// The block `name` is the blessed output `file` (relative to the crate's root).
fn block_is_blessed_file(name: &str, file: &str, bless: &str) {
    let path = root().join(file);
    let blessed =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {file}: {e} ({bless})"));
    let words = blessed.split_whitespace().collect::<Vec<_>>().join(" ");
    for what in ["at commit ", " on 20", " cores", "rustc "] {
        assert!(
            words.contains(what),
            "{file} does not say where and when it was measured ({what:?})"
        );
    }
    Block::find(name).expect(
        &format!("\n{blessed}"),
        &format!("{bless}, or BLESS=1 cargo test --test generated_docs to copy {file}"),
    );
}

#[test]
fn the_overhead_block_is_the_blessed_benchmark_output() {
    block_is_blessed_file(
        "overhead",
        "benches/results/macro_overhead.md",
        "benches/overhead.py --bless",
    );
}

#[test]
fn the_bench_block_is_the_blessed_benchmark_output() {
    block_is_blessed_file(
        "bench",
        "benches/results/scan.md",
        "BLESS=1 benches/scan.sh",
    );
}

/// The quoted argument of a `step "..."` or `not_run "..."` line of `.ci/run`, unescaped.
fn quoted(line: &str, command: &str) -> Option<String> {
    let rest = line.trim().strip_prefix(command)?.strip_prefix(" \"")?;
    let text = rest.strip_suffix('"')?;
    Some(text.replace("\\\"", "\"").replace("\\\\", "\\"))
}

/// The block `ci-steps`: the steps of `.ci/run` in order, then what it does not run.
fn ci_steps() -> String {
    let script = fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let steps: Vec<String> = script
        .lines()
        .filter_map(|line| quoted(line, "step"))
        .filter(|step| step != "all checks passed")
        .collect();
    let not_run: Vec<String> = script
        .lines()
        .filter_map(|line| quoted(line, "not_run"))
        .collect();
    assert!(steps.len() > 5, "the steps of .ci/run are read: {steps:?}");
    let mut out = String::from(
        "What `.ci/run` runs, in order (read from the script by `tests/generated_docs.rs`):\n\n",
    );
    for (i, step) in steps.iter().enumerate() {
        let _ = writeln!(out, "{}. {step}", i + 1);
    }
    if !not_run.is_empty() {
        out.push_str("\nWhat it does not run:\n\n");
        for item in &not_run {
            let _ = writeln!(out, "- {item}");
        }
    }
    out
}

#[test]
fn the_ci_steps_block_is_read_from_ci_run() {
    Block::find("ci-steps").expect(
        &format!("\n{}", ci_steps()),
        "BLESS=1 cargo test --test generated_docs",
    );
}

/// The census block needs the rules' tiers: the analysis.
#[cfg(feature = "analysis")]
mod census {
    use std::fmt::Write as _;
    use std::fs;

    use super::blocks::{root, Block};

    /// Verdicts counted: right, wrong (not a retry or wrong fact), arguable.
    #[derive(Default, Clone, Copy)]
    struct Count {
        right: usize,
        wrong: usize,
        arguable: usize,
    }
    impl Count {
        fn add(&mut self, verdict: &str) {
            match verdict {
                "right" => self.right += 1,
                "not-a-retry" | "wrong-fact" => self.wrong += 1,
                "arguable" => self.arguable += 1,
                other => panic!("unknown verdict {other}"),
            }
        }
        fn precision(self) -> String {
            if self.right + self.wrong == 0 {
                "–".to_owned()
            } else {
                #[allow(clippy::cast_precision_loss)]
                let p = self.right as f64 / (self.right + self.wrong) as f64;
                format!("{p:.2}")
            }
        }
    }

    /// The censuses of `tests/realcode/census.json` as tables: each census (its repositories, the
    /// build it judged, its verdicts, and what the rules stable in this build report of them: a
    /// default run), then the last census per rule with each rule's tier.
    fn census_tables() -> String {
        let census: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(root().join("tests/realcode/census.json")).expect("the census"),
        )
        .expect("JSON");
        let stable: Vec<&str> = retry_audit::Rule::ALL
            .iter()
            .filter(|r| r.tier() == retry_audit::checks::registry::Tier::Stable)
            .map(|r| r.id())
            .collect();
        let mut out = String::from(
            "\n| census | repositories | build | findings | right | wrong | arguable | precision | \
             a default run: right | wrong | precision |\n|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
        );
        let censuses = census["censuses"].as_array().expect("censuses");
        let repos_of = |c: &serde_json::Value| -> std::collections::BTreeSet<String> {
            c["verdicts"]
                .as_array()
                .expect("verdicts")
                .iter()
                .filter_map(|v| v["repo"].as_str().map(str::to_owned))
                .collect()
        };
        let mut row =
            |name: &str, repositories: usize, build: &str, verdicts: &[&serde_json::Value]| {
                let mut all = Count::default();
                let mut default_run = Count::default();
                for v in verdicts {
                    let verdict = v["verdict"].as_str().expect("verdict");
                    all.add(verdict);
                    if stable.contains(&v["rule"].as_str().expect("rule")) {
                        default_run.add(verdict);
                    }
                }
                writeln!(
                    out,
                    "| {name} | {repositories} | {build} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    verdicts.len(),
                    all.right,
                    all.wrong,
                    all.arguable,
                    all.precision(),
                    default_run.right,
                    default_run.wrong,
                    default_run.precision(),
                )
                .expect("write to a String");
            };
        let count_of = |c: &serde_json::Value| match &c["repositories"] {
            serde_json::Value::Array(a) => a.len(),
            n => usize::try_from(n.as_u64().expect("a count")).expect("a count"),
        };
        for c in censuses {
            let verdicts: Vec<&serde_json::Value> =
                c["verdicts"].as_array().expect("verdicts").iter().collect();
            let repositories = count_of(c);
            let build = c["build"]
                .as_str()
                .unwrap_or("")
                .split(' ')
                .next()
                .unwrap_or("");
            row(
                c["name"].as_str().unwrap_or(""),
                repositories,
                build,
                &verdicts,
            );
        }
        // The last census again, on the repositories of each earlier one that judged other ones.
        let last = censuses.last().expect("a census");
        let last_build = last["build"]
            .as_str()
            .unwrap_or("")
            .split(' ')
            .next()
            .unwrap_or("");
        let mut shown: Vec<std::collections::BTreeSet<String>> = Vec::new();
        for c in &censuses[..censuses.len() - 1] {
            let repos = repos_of(c);
            if shown.contains(&repos) {
                continue;
            }
            let verdicts: Vec<&serde_json::Value> = last["verdicts"]
                .as_array()
                .expect("verdicts")
                .iter()
                .filter(|v| v["repo"].as_str().is_some_and(|r| repos.contains(r)))
                .collect();
            let name = format!(
                "{}, on the repositories of «{}»",
                last["name"].as_str().unwrap_or(""),
                c["name"].as_str().unwrap_or("")
            );
            row(&name, count_of(c), last_build, &verdicts);
            shown.push(repos);
        }
        let mut per_rule: std::collections::BTreeMap<String, Count> =
            std::collections::BTreeMap::new();
        for v in last["verdicts"].as_array().expect("verdicts") {
            per_rule
                .entry(v["rule"].as_str().expect("rule").to_owned())
                .or_default()
                .add(v["verdict"].as_str().expect("verdict"));
        }
        out.push_str(
            "\nThe last census per rule (its verdicts give each rule its tier):\n\n\
             | rule | tier | right | wrong | arguable | precision |\n|---|---|--:|--:|--:|--:|\n",
        );
        for (rule, c) in &per_rule {
            let tier = retry_audit::Rule::ALL
                .iter()
                .find(|r| r.id() == rule)
                .map_or("", |r| match r.tier() {
                    retry_audit::checks::registry::Tier::Stable => "stable",
                    retry_audit::checks::registry::Tier::Preview => "preview",
                });
            writeln!(
                out,
                "| {rule} | {tier} | {} | {} | {} | {} |",
                c.right,
                c.wrong,
                c.arguable,
                c.precision()
            )
            .expect("write to a String");
        }
        out
    }

    #[test]
    fn the_census_block_is_computed_from_the_census_file() {
        Block::find("census").expect(
            &census_tables(),
            "BLESS=1 cargo test --test generated_docs (from tests/realcode/census.json)",
        );
    }
}
