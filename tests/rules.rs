//! Meta-tests over the rule registry: every `rules/<name>.toml` parses and agrees with
//! [`Rule`], follows the message conventions, has an `example` that fires its rule and a
//! `use_instead` that does not, and the README's rule table and the rule pages
//! (`docs/rules/RA001.md`...) are generated from the TOMLs.
//!
//! `BLESS=1 cargo test --test rules` rewrites the README's rule table and the rule pages instead
//! of failing (`BLESS` must be `1`; the table is found by its markers in `README.md` or any
//! `docs/**/*.md`).

#![cfg(feature = "analysis")]

mod blocks;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use blocks::Block;

use retry_audit::{check_source, Level, Rule, RuleMeta, Settings};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn meta(rule: Rule) -> RuleMeta {
    match rule.parse_meta() {
        Ok(meta) => meta,
        Err(e) => panic!("rules/{}.toml does not parse: {e}", rule.name()),
    }
}

/// Settings in which `rule` runs even if its default level is `allow` (experimental rules).
fn settings_enabling(rule: Rule) -> Settings {
    let mut settings = Settings::preview();
    if settings.level(rule) == Level::Allow {
        settings.set_level(rule, Level::Warning);
    }
    settings
}

/// The rules `src` reports, or a panic naming the snippet if it does not parse.
fn reported(rule: Rule, field: &str, src: &str) -> Vec<Rule> {
    match check_source(src, &settings_enabling(rule)) {
        Ok(diagnostics) => diagnostics.iter().map(|d| d.rule).collect(),
        Err(e) => panic!("`{field}` of {} does not parse: {e}", rule.id()),
    }
}

#[test]
fn every_toml_parses_and_matches_its_rule() {
    for &rule in Rule::ALL {
        let meta = meta(rule);
        assert_eq!(meta.id, rule.id(), "id in rules/{}.toml", rule.name());
        assert_eq!(meta.name, rule.name(), "name in rules/{}.toml", rule.name());
    }
}

#[test]
fn rule_files_are_exactly_the_known_rules() {
    let dir = root().join("rules");
    let on_disk: BTreeSet<String> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
            entry.file_name().to_string_lossy().into_owned()
        })
        .collect();
    let expected: BTreeSet<String> = Rule::ALL
        .iter()
        .map(|rule| format!("{}.toml", rule.name()))
        .collect();
    assert_eq!(
        on_disk, expected,
        "rules/ must hold one <name>.toml per Rule, nothing else"
    );
}

#[test]
fn ids_are_unique_and_sequential() {
    // RA000 is a file that does not parse, analysis rules are numbered from RA001, meta rules
    // (about suppressions) from RA100.
    for series in [0..100, 100..200] {
        let ids: Vec<&str> = Rule::ALL
            .iter()
            .map(|rule| rule.id())
            .filter(|id| id[2..].parse().is_ok_and(|n: usize| series.contains(&n)))
            .collect();
        let expected: Vec<String> = (0..ids.len())
            .map(|i| format!("RA{:03}", series.start + i))
            .collect();
        assert_eq!(ids, expected, "ids of a series are sequential, in id order");
    }
    let mut sorted: Vec<&str> = Rule::ALL.iter().map(|rule| rule.id()).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let ids: Vec<&str> = Rule::ALL.iter().map(|rule| rule.id()).collect();
    assert_eq!(ids, sorted, "Rule::ALL is in id order, ids are unique");
    let names: BTreeSet<&str> = Rule::ALL.iter().map(|rule| rule.name()).collect();
    assert_eq!(names.len(), Rule::ALL.len(), "rule names are unique");
}

#[test]
fn names_are_kebab_case_and_read_as_allow_name() {
    for &rule in Rule::ALL {
        let name = rule.name();
        assert!(
            !name.is_empty()
                && !name.starts_with('-')
                && !name.ends_with('-')
                && !name.contains("--")
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name}: names are kebab-case"
        );
        // `no-delay` (RA011) names what is flagged, a retry with no delay, and reads as "allow
        // no-delay"; "no-" is not refused as a prefix for that reason.
        for prefix in ["disallow-", "banned-", "avoid-", "forbid-"] {
            assert!(
                !name.starts_with(prefix),
                "{name}: a name says what is flagged (\"allow {name}\" must read well)"
            );
        }
    }
}

#[test]
fn summary_follows_the_message_convention() {
    for &rule in Rule::ALL {
        let summary = meta(rule).summary;
        let id = rule.id();
        assert!(!summary.is_empty(), "{id}: summary is empty");
        assert!(!summary.contains('\n'), "{id}: summary is one line");
        assert_eq!(
            summary.trim(),
            summary,
            "{id}: summary has no surrounding whitespace"
        );
        assert!(
            summary.starts_with(|c: char| !c.is_uppercase()),
            "{id}: summary starts lower-case: {summary:?}"
        );
        assert!(
            !summary.ends_with('.'),
            "{id}: summary has no trailing period: {summary:?}"
        );
    }
}

#[test]
fn prose_fields_are_written() {
    for &rule in Rule::ALL {
        let meta = meta(rule);
        let id = rule.id();
        assert!(
            meta.what_it_does.starts_with("Checks for"),
            "{id}: what_it_does starts with \"Checks for\": {:?}",
            meta.what_it_does
        );
        for (field, text) in [
            ("what_it_does", &meta.what_it_does),
            ("why_bad", &meta.why_bad),
            ("example", &meta.example),
            ("use_instead", &meta.use_instead),
            ("known_limitations", &meta.known_limitations),
        ] {
            assert!(!text.trim().is_empty(), "{id}: {field} is empty");
            for placeholder in ["TODO", "TBD", "FIXME", "XXX", "lorem ipsum"] {
                assert!(
                    !text.contains(placeholder),
                    "{id}: {field} contains the placeholder {placeholder:?}"
                );
            }
        }
        assert_ne!(
            meta.example, meta.use_instead,
            "{id}: example and use_instead differ"
        );
    }
}

#[test]
fn references_are_https_urls() {
    for &rule in Rule::ALL {
        let meta = meta(rule);
        let id = rule.id();
        assert!(
            !meta.references.is_empty(),
            "{id}: cite at least one source"
        );
        for url in &meta.references {
            let rest = url.strip_prefix("https://");
            assert!(
                rest.is_some_and(|rest| {
                    let host = rest.split('/').next().unwrap_or_default();
                    host.contains('.') && !url.contains(char::is_whitespace)
                }),
                "{id}: reference is not an https URL: {url:?}"
            );
        }
        let unique: BTreeSet<&String> = meta.references.iter().collect();
        assert_eq!(
            unique.len(),
            meta.references.len(),
            "{id}: duplicate reference"
        );
    }
}

/// The rules whose `example` is code that parses: all but RA000 `syntax-error`, whose example
/// is a file that does not parse (checked by [`syntax_error_example_does_not_parse`]).
fn parsing_rules() -> impl Iterator<Item = Rule> {
    Rule::ALL
        .iter()
        .copied()
        .filter(|r| *r != Rule::SyntaxError)
}

/// What each rule's `example` and `use_instead` report, as `RULE@LINE:COLUMN` (the rules
/// enabled as in [`settings_enabling`]), in the order reported: what `retry-audit explain` and the
/// README show next to each. A change here is a change of the documentation, made on purpose.
/// (Several `use_instead` snippets still draw another rule: RA006 where a 429 is retried
/// without reading `Retry-After`, RA004 where every error is retried.)
const EXAMPLES_REPORT: &[(&str, &str, &str)] = &[
    ("RA001", "RA001@10:5 RA006@12:25", "RA006@18:25"),
    ("RA002", "RA006@15:25 RA002@21:9", "RA006@17:25"),
    ("RA003", "RA006@14:25 RA003@20:9", "RA006@14:25"),
    ("RA004", "RA004@16:12", "RA006@19:12"),
    ("RA005", "RA005@16:56 RA006@18:25", "RA006@19:25"),
    ("RA006", "RA006@13:12", ""),
    ("RA007", "RA007@11:17", ""),
    ("RA008", "RA008@14:17", ""),
    ("RA009", "RA009@10:14", ""),
    ("RA010", "RA010@21:15", ""),
    ("RA011", "RA011@3:5 RA004@4:15", "RA004@8:15"),
    ("RA100", "RA100@16:31", ""),
];

/// `RULE@LINE:COLUMN` of each finding of `src`, space-separated.
fn findings(rule: Rule, field: &str, src: &str) -> String {
    match check_source(src, &settings_enabling(rule)) {
        Ok(diagnostics) => diagnostics
            .iter()
            .map(|d| {
                let at = d.primary.span.start_pos;
                format!("{}@{}:{}", d.rule.id(), at.line, at.column)
            })
            .collect::<Vec<_>>()
            .join(" "),
        Err(e) => panic!("`{field}` of {} does not parse: {e}", rule.id()),
    }
}

#[test]
fn examples_report_what_they_show() {
    let measured: Vec<(&str, String, String)> = parsing_rules()
        .map(|rule| {
            let meta = meta(rule);
            (
                rule.id(),
                findings(rule, "example", &meta.example),
                findings(rule, "use_instead", &meta.use_instead),
            )
        })
        .collect();
    let expected: Vec<(&str, String, String)> = EXAMPLES_REPORT
        .iter()
        .map(|&(id, example, instead)| (id, example.to_owned(), instead.to_owned()))
        .collect();
    if measured != expected {
        let mut table = String::new();
        for (id, example, instead) in &measured {
            let _ = writeln!(table, "    ({id:?}, {example:?}, {instead:?}),");
        }
        panic!(
            "the rules' examples report something else than EXAMPLES_REPORT says; now:\n{table}"
        );
    }
}

/// RA000's example does not parse, and a scan reports it as RA000; its `use_instead` parses.
#[test]
fn syntax_error_example_does_not_parse() {
    let meta = meta(Rule::SyntaxError);
    let settings = Settings::preview();
    let error =
        check_source(&meta.example, &settings).expect_err("the example of RA000 must not parse");
    let finding = retry_audit::report::syntax_error(&error, meta.example.as_bytes(), &settings)
        .expect("reported as a finding");
    assert_eq!(finding.rule, Rule::SyntaxError);
}

#[test]
fn example_fires_its_rule() {
    let mut silent = Vec::new();
    for rule in parsing_rules() {
        if !reported(rule, "example", &meta(rule).example).contains(&rule) {
            silent.push(rule.id());
        }
    }
    assert!(
        silent.is_empty(),
        "these rules do not fire on their own `example`: {silent:?}"
    );
}

#[test]
fn use_instead_does_not_fire_its_rule() {
    let mut firing = Vec::new();
    for &rule in Rule::ALL {
        if reported(rule, "use_instead", &meta(rule).use_instead).contains(&rule) {
            firing.push(rule.id());
        }
    }
    assert!(
        firing.is_empty(),
        "these rules fire on their own `use_instead`: {firing:?}"
    );
}

#[test]
fn every_rule_has_an_annotated_fixture() {
    let mut missing = Vec::new();
    // A fixture parses: RA000's cases are in tests/first_use.rs and tests/cli.rs.
    for rule in parsing_rules() {
        let dir = root().join("fixtures").join(rule.name());
        let annotated = fs::read_dir(&dir).is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
                .filter_map(|path| fs::read_to_string(path).ok())
                .any(|text| annotates(&text, rule))
        });
        if !annotated {
            missing.push(format!(
                "fixtures/{}/*.rs with `//~ {}`",
                rule.name(),
                rule.id()
            ));
        }
    }
    assert!(missing.is_empty(), "missing fixtures: {missing:?}");
}

/// Whether a fixture expects `rule` somewhere (`//~ RA002`, `//~^^ RA001 RA002`, `//~| RA002`).
fn annotates(text: &str, rule: Rule) -> bool {
    text.lines().any(|line| {
        line.split_once("//~").is_some_and(|(_, rest)| {
            rest.trim_start_matches(['^', '|', 'v'])
                .split_whitespace()
                .any(|code| code == rule.id())
        })
    })
}

/// The README's rules section: a table (id, name linking to the rule's page, default level,
/// summary), generated from the TOMLs.
fn rules_table() -> String {
    let mut table = String::from(
        "| id | name | default level | tier | judged precision | summary |\n|---|---|---|---|--:|---|\n",
    );
    for &rule in Rule::ALL {
        let meta = meta(rule);
        let judged = meta.judged;
        let precision = judged.precision().map_or_else(
            || "–".to_owned(),
            |p| format!("{p:.2} ({})", judged.right + judged.wrong),
        );
        let _ = writeln!(
            table,
            "| {id} | [`{name}`](docs/rules/{id}.md) | {level} | {tier} | {precision} | {summary} |",
            id = meta.id,
            name = meta.name,
            level = meta.level,
            tier = meta.tier.as_str(),
            summary = meta.summary.replace('|', "\\|"),
        );
    }
    table.push_str(
        "\nA rule is *stable*, and runs by default, only while its precision on findings judged \
         in code not used for tuning (right over right and wrong, `tests/realcode/census.json`) \
         is at least 0.90 over at least 5 findings; the others are *preview*: they run with \
         `--preview` or `preview = true`, as ruff's preview rules and clippy's nursery.\n",
    );
    table.push_str(
        "\nEach rule's page in [`docs/rules/`](docs/rules/) says what it checks, why it matters, \
         an example and what to write instead, its known limitations and references: the text \
         `retry-audit explain RULE` prints, generated from [`rules/*.toml`](rules/).\n",
    );
    table
}

#[test]
fn readme_rule_table_is_generated() {
    Block::find("rules").expect(
        &format!("\n{}", rules_table()),
        "BLESS=1 cargo test --test rules",
    );
}

/// One page per rule, `docs/rules/RA002.md`, is what `retry-audit explain RA002` prints
/// (generated from `rules/*.toml`; `BLESS=1` writes them), and no other page is there.
#[cfg(feature = "cli")]
#[test]
fn rule_pages_are_generated() {
    let dir = root().join("docs").join("rules");
    let mut stale = Vec::new();
    for &rule in Rule::ALL {
        let mut page = Vec::new();
        retry_audit::report::render::write_explain(rule, &mut page).expect("written to memory");
        let path = dir.join(format!("{}.md", rule.id()));
        if fs::read(&path).ok().as_deref() == Some(page.as_slice()) {
            continue;
        }
        if blocks::blessing() {
            fs::create_dir_all(&dir).expect("docs/rules");
            fs::write(&path, page)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        } else {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "rule pages out of date with rules/*.toml (run `BLESS=1 cargo test --test rules`): \
         {stale:?}"
    );
    let expected: BTreeSet<String> = Rule::ALL.iter().map(|r| format!("{}.md", r.id())).collect();
    let on_disk: BTreeSet<String> = fs::read_dir(&dir)
        .expect("docs/rules is listable")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        on_disk, expected,
        "docs/rules/ holds one page per rule, nothing else"
    );
}

/// Each rule's `[judged]` verdicts are the last census's (`tests/realcode/census.json`), and its
/// tier is the one they earn: stable only with a precision of at least 0.90 over at least 5
/// judged findings. RA000 and RA100, which are not about retries, judge nothing.
#[test]
fn each_rule_s_tier_is_earned_by_the_last_census() {
    let census: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(root().join("tests/realcode/census.json")).expect("the census"),
    )
    .expect("JSON");
    let last = census["censuses"]
        .as_array()
        .and_then(|c| c.last())
        .expect("a census");
    let mut counted: std::collections::BTreeMap<String, retry_audit::checks::registry::Judged> =
        std::collections::BTreeMap::new();
    for v in last["verdicts"].as_array().expect("verdicts") {
        let rule = v["rule"].as_str().expect("a rule").to_owned();
        let entry = counted.entry(rule).or_default();
        match v["verdict"].as_str() {
            Some("right") => entry.right += 1,
            Some("not-a-retry" | "wrong-fact") => entry.wrong += 1,
            Some("arguable") => entry.arguable += 1,
            other => panic!("unknown verdict {other:?} in {v}"),
        }
    }
    let mut wrong = Vec::new();
    for &rule in Rule::ALL {
        let meta = meta(rule);
        // RA100 is not about retries and judges nothing: stable by nature. RA000 judges no
        // retry either, and is preview because syn rejects some code rustc accepts.
        if matches!(rule, Rule::SyntaxError | Rule::UnusedSuppression) {
            let tier = if rule == Rule::SyntaxError {
                retry_audit::checks::registry::Tier::Preview
            } else {
                retry_audit::checks::registry::Tier::Stable
            };
            if meta.tier != tier || meta.judged != retry_audit::checks::registry::Judged::default()
            {
                wrong.push(format!(
                    "{}: {tier:?} by nature, judging nothing",
                    rule.id()
                ));
            }
            continue;
        }
        let expected = counted.get(rule.id()).copied().unwrap_or_default();
        if meta.judged != expected {
            wrong.push(format!(
                "{}: [judged] says {:?}, the census {expected:?}",
                rule.id(),
                meta.judged
            ));
        }
        if meta.tier != expected.earned_tier() {
            wrong.push(format!(
                "{}: tier {:?}, earned {:?}",
                rule.id(),
                meta.tier,
                expected.earned_tier()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
