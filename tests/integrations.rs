//! The files other tools read to run retry-audit are valid for them, and the command lines they
//! run are ours: `.pre-commit-hooks.yaml` holds what pre-commit's manifest schema requires, with
//! the types it requires, and `action.yml` is a composite GitHub Action whose `retry-audit`
//! command line, with its inputs' defaults, is accepted by the binary and writes SARIF.

#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

mod support;

use support::{temp, write, Run, UNBOUNDED_FIXED};

/// The single YAML document of a file at the top of the repository.
fn load(name: &str) -> Yaml {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(docs.len(), 1, "{name} holds one YAML document");
    docs.remove(0)
}

fn retry_audit(dir: &Path, args: &[String]) -> Run {
    Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the retry-audit binary runs")
        .into()
}

fn string_list(value: &Yaml) -> Option<Vec<&str>> {
    value.as_vec()?.iter().map(Yaml::as_str).collect()
}

// ------------------------------------------------------------------------------- pre-commit

/// What pre-commit's manifest schema (`pre_commit/clientlib.py`, `MANIFEST_HOOK_DICT`) allows in
/// a hook, and the type each key must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    TextList,
    Bool,
}

const HOOK_KEYS: &[(&str, Kind)] = &[
    ("id", Kind::Text),
    ("name", Kind::Text),
    ("entry", Kind::Text),
    ("language", Kind::Text),
    ("alias", Kind::Text),
    ("files", Kind::Text),
    ("exclude", Kind::Text),
    ("types", Kind::TextList),
    ("types_or", Kind::TextList),
    ("exclude_types", Kind::TextList),
    ("additional_dependencies", Kind::TextList),
    ("args", Kind::TextList),
    ("always_run", Kind::Bool),
    ("fail_fast", Kind::Bool),
    ("pass_filenames", Kind::Bool),
    ("description", Kind::Text),
    ("language_version", Kind::Text),
    ("log_file", Kind::Text),
    ("minimum_pre_commit_version", Kind::Text),
    ("require_serial", Kind::Bool),
    ("stages", Kind::TextList),
    ("verbose", Kind::Bool),
];

/// The keys every hook must have.
const REQUIRED: [&str; 4] = ["id", "name", "entry", "language"];

/// pre-commit's languages.
const LANGUAGES: &[&str] = &[
    "conda",
    "coursier",
    "dart",
    "docker",
    "docker_image",
    "dotnet",
    "fail",
    "golang",
    "haskell",
    "julia",
    "lua",
    "node",
    "perl",
    "pygrep",
    "python",
    "r",
    "ruby",
    "rust",
    "swift",
    "script",
    "system",
    "unsupported",
    "unsupported_script",
];

#[test]
fn the_pre_commit_manifest_has_the_keys_pre_commit_requires_with_their_types() {
    let manifest = load(".pre-commit-hooks.yaml");
    let hooks = manifest.as_vec().expect("the manifest is a list of hooks");
    assert!(!hooks.is_empty());
    let mut ids = Vec::new();
    for hook in hooks {
        let hook = hook.as_hash().expect("a hook is a mapping");
        let mut keys = BTreeMap::new();
        for (key, value) in hook {
            let key = key.as_str().expect("keys are strings");
            let Some(&(_, kind)) = HOOK_KEYS.iter().find(|(name, _)| *name == key) else {
                panic!("`{key}` is not a key of pre-commit's manifest");
            };
            let fits = match kind {
                Kind::Text => value.as_str().is_some(),
                Kind::TextList => string_list(value).is_some(),
                Kind::Bool => value.as_bool().is_some(),
            };
            assert!(fits, "`{key}` must be {kind:?}, is {value:?}");
            keys.insert(key, value);
        }
        for key in REQUIRED {
            assert!(keys.contains_key(key), "a hook lacks the required `{key}`");
        }
        let language = keys["language"].as_str().unwrap_or_default();
        assert!(LANGUAGES.contains(&language), "unknown language {language}");
        ids.push(keys["id"].as_str().unwrap_or_default().to_owned());
    }
    assert!(ids.iter().any(|id| id == "retry-audit"), "{ids:?}");
}

/// The hook as pre-commit runs it: `entry`, then `args`, then the staged files of its `types`.
#[test]
fn the_pre_commit_hook_runs_retry_audit_on_the_rust_files_it_is_given() {
    let manifest = load(".pre-commit-hooks.yaml");
    let hook = manifest
        .as_vec()
        .and_then(|hooks| {
            hooks
                .iter()
                .find(|h| h["id"].as_str() == Some("retry-audit"))
        })
        .expect("the retry-audit hook");
    assert_eq!(
        hook["language"].as_str(),
        Some("rust"),
        "built with cargo install"
    );
    assert_eq!(string_list(&hook["types"]), Some(vec!["rust"]));
    assert_ne!(hook["pass_filenames"].as_bool(), Some(false));
    let mut command: Vec<String> = hook["entry"]
        .as_str()
        .expect("entry")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        command.remove(0),
        "retry-audit",
        "the binary `cargo install` puts on PATH"
    );
    command.extend(
        string_list(&hook["args"])
            .unwrap_or_default()
            .into_iter()
            .map(str::to_owned),
    );

    let dir = temp();
    write(dir.path(), "src/retry.rs", UNBOUNDED_FIXED);
    write(dir.path(), "src/clean.rs", "fn f() {}\n");
    let mut failing = command.clone();
    failing.extend(["src/retry.rs".to_owned(), "src/clean.rs".to_owned()]);
    let run = retry_audit(dir.path(), &failing);
    assert_eq!(
        run.code,
        Some(1),
        "a finding at error level fails the hook: {}",
        run.stderr
    );
    assert!(run.stdout.contains("error[RA001]"), "{}", run.stdout);
    let mut passing = command.clone();
    passing.push("src/clean.rs".to_owned());
    let run = retry_audit(dir.path(), &passing);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // The configuration's `exclude` applies to the files pre-commit passes (--force-exclude).
    write(dir.path(), "retry-audit.toml", "exclude = [\"retry.rs\"]\n");
    let mut excluded = command;
    excluded.push("src/retry.rs".to_owned());
    let run = retry_audit(dir.path(), &excluded);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
}

// --------------------------------------------------------------------------- GitHub Action

/// Every `inputs.NAME` an expression of the action mentions.
fn inputs_named(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("inputs.") {
        rest = &rest[at + "inputs.".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        names.push(name);
    }
    names
}

#[test]
fn the_action_is_a_composite_that_installs_runs_and_uploads() {
    let action = load("action.yml");
    for key in ["name", "description"] {
        assert!(action[key].as_str().is_some(), "`{key}` is required");
    }
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    let inputs = action["inputs"].as_hash().expect("inputs");
    for (name, input) in inputs {
        assert!(
            input["description"].as_str().is_some(),
            "{name:?} has no description"
        );
        assert!(
            input["default"].as_str().is_some(),
            "{name:?}: every input has a default"
        );
    }
    let declared: Vec<&str> = inputs.keys().filter_map(Yaml::as_str).collect();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml"))
        .expect("action.yml");
    for name in inputs_named(&text) {
        assert!(
            declared.contains(&name.as_str()),
            "inputs.{name} is not declared"
        );
    }

    let steps = action["runs"]["steps"].as_vec().expect("steps");
    for step in steps {
        match (step["run"].as_str(), step["uses"].as_str()) {
            (Some(_), None) => assert!(
                step["shell"].as_str().is_some(),
                "a composite run step needs a shell: {step:?}"
            ),
            (None, Some(_)) => {}
            _ => panic!("a step runs a command or uses an action: {step:?}"),
        }
    }
    let runs = |needle: &str| {
        steps
            .iter()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains(needle)))
    };
    assert!(runs("cargo install --locked --path \"$ACTION_PATH\""));
    assert!(runs("cargo install --locked retry-audit --version"));
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
        })
        .expect("an upload-sarif step");
    assert_eq!(
        upload["with"]["sarif_file"].as_str(),
        Some("${{ inputs.sarif-file }}")
    );
}

/// The `retry-audit` command line of the action's run step, its variables replaced by the
/// defaults of the inputs they come from (and `inputs.args` by `args`), split into words.
fn action_command(args: &str) -> Vec<String> {
    let action = load("action.yml");
    let step = action["runs"]["steps"]
        .as_vec()
        .and_then(|steps| {
            steps.iter().find(|s| {
                s["run"]
                    .as_str()
                    .is_some_and(|r| r.lines().any(|l| l.trim().starts_with("retry-audit ")))
            })
        })
        .expect("a step that runs retry-audit");
    let script = step["run"].as_str().unwrap_or_default();
    let line = script
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("retry-audit "))
        .unwrap_or_default();
    let command = line.split("||").next().unwrap_or_default();
    let env = step["env"].as_hash().expect("the step's env");
    let mut words = Vec::new();
    for raw in command.split_whitespace() {
        let quoted = raw.starts_with('"');
        let word = raw.trim_matches('"');
        // An array the script fills (`"${diff_base[@]}"`): empty off a pull request.
        if word.starts_with("${") && word.ends_with("[@]}") {
            continue;
        }
        let Some(var) = word.strip_prefix('$') else {
            words.push(word.to_owned());
            continue;
        };
        let source = env
            .get(&Yaml::String(var.to_owned()))
            .and_then(Yaml::as_str)
            .unwrap_or_else(|| panic!("${var} is not set by the step's env"));
        let input = inputs_named(source)
            .pop()
            .unwrap_or_else(|| panic!("${var} = {source} is not an input"));
        let value = if input == "args" {
            args.to_owned()
        } else {
            action["inputs"][input.as_str()]["default"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        if quoted {
            words.push(value);
        } else {
            words.extend(value.split_whitespace().map(str::to_owned));
        }
    }
    assert_eq!(words.remove(0), "retry-audit");
    words
}

/// On a pull request the action reports only what the pull request changes: `--diff-base`
/// with its base commit (fetched when the checkout is shallow), unless `diff-base` says
/// otherwise; the script, run by bash with a pull request's environment, passes it on.
#[test]
fn the_action_passes_the_pull_request_base_as_diff_base() {
    let action = load("action.yml");
    let step = action["runs"]["steps"]
        .as_vec()
        .and_then(|steps| steps.iter().find(|s| s["id"].as_str() == Some("run")))
        .expect("the run step");
    assert_eq!(
        step["env"]["PULL_REQUEST_BASE"].as_str(),
        Some("${{ github.event.pull_request.base.sha }}")
    );
    assert_eq!(
        step["env"]["DIFF_BASE"].as_str(),
        Some("${{ inputs.diff-base }}")
    );
    let script = step["run"].as_str().expect("a script");
    // Run the script with `retry-audit` a function that prints its arguments, one per line.
    let arguments = |diff_base: &str, pull_request_base: &str| -> Vec<String> {
        let dir = temp();
        let output = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "retry-audit() {{ printf '%s\\n' \"$@\"; }}\ngit() {{ :; }}\n\
                 GITHUB_OUTPUT=/dev/null\n{script}"
            ))
            .env("PATHS", ".")
            .env("ARGS", "")
            .env("SARIF_FILE", "out.sarif")
            .env("DIFF_BASE", diff_base)
            .env("PULL_REQUEST_BASE", pull_request_base)
            .current_dir(dir.path())
            .output()
            .expect("bash runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let on_pull_request = arguments("", "abc123");
    assert!(
        on_pull_request
            .windows(2)
            .any(|w| w == ["--diff-base", "abc123"]),
        "{on_pull_request:?}"
    );
    assert!(!arguments("", "").contains(&"--diff-base".to_owned()));
    assert!(!arguments("none", "abc123").contains(&"--diff-base".to_owned()));
    let chosen = arguments("v1.2", "abc123");
    assert!(
        chosen.windows(2).any(|w| w == ["--diff-base", "v1.2"]),
        "{chosen:?}"
    );
}

#[test]
fn the_action_runs_a_command_line_of_ours_that_writes_sarif() {
    for args in ["", "--select RA00 --deny warnings"] {
        let command = action_command(args);
        assert!(
            command.windows(2).any(|w| w == ["--format", "sarif"]),
            "{command:?}"
        );
        let dir = temp();
        write(dir.path(), "src/retry.rs", UNBOUNDED_FIXED);
        let run = retry_audit(dir.path(), &command);
        assert_eq!(
            run.code,
            Some(1),
            "{command:?} is accepted (not a usage error, 2) and finds RA001: {}",
            run.stderr
        );
        assert_eq!(run.stdout, "", "the log goes to --output-file");
        let sarif_file = action_command("")
            .windows(2)
            .find(|w| w[0] == "--output-file")
            .map(|w| w[1].clone())
            .expect("--output-file");
        let log: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(&sarif_file)).expect("the SARIF log"),
        )
        .expect("SARIF is JSON");
        assert_eq!(log["version"], "2.1.0");
        let results = log["runs"][0]["results"].as_array().expect("results");
        assert!(results.iter().any(|r| r["ruleId"] == "RA001"), "{log}");
    }
}
