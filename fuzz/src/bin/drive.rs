//! A random-input driver for the fuzz targets that builds with stable Rust: no coverage
//! feedback, but the same harness, the same invariants and the same seeds as `cargo fuzz`.
//!
//! ```text
//! drive check_bytes   [--seconds N] [--seed S] [--timeout SECS] [--crashes DIR]
//! drive check_mutated [--seconds N] [--seed S] [--timeout SECS] [--crashes DIR]
//! drive replay TARGET FILE...
//! drive mutant FILE
//! ```
//!
//! `check_bytes` inputs are seed files (fixtures/, tests/adversarial/) with 1 to 8 byte-level
//! mutations (bit flips, random bytes, Rust tokens inserted, ranges deleted, duplicated, spliced
//! from another seed, the file cut short), or plain random bytes; `check_mutated` inputs are
//! random mutation programs. Each input runs on a worker thread; a panic (a crash or a broken
//! invariant) is saved under `--crashes` (default `fuzz/crashes/`) and the run goes on; an
//! input that runs longer than `--timeout` (default 20 s) is saved and stops the run. Exit
//! status: 0 when nothing was found, 1 otherwise. `replay` re-runs saved inputs (libFuzzer's
//! artifacts too); `mutant` prints the source a `check_mutated` input builds.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{mpsc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use retry_audit_fuzz::{
    mutate, on_big_stack, repo_root, run_bytes, run_mutated, rust_files, seeds,
};

/// Tokens inserted by the byte-level mutator (also the libFuzzer dictionary's).
const TOKENS: &[&str] = &[
    "loop",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "|| ",
    "async move ",
    ".await",
    "?",
    "r#\"",
    "\"#",
    "\"",
    "'",
    "b'",
    "/*",
    "*/",
    "//",
    "///",
    "//!",
    "#[",
    "#![",
    "!",
    "::",
    "=>",
    "..=",
    "'a",
    "1u32",
    "0x",
    "1e",
    "\\u{",
    "\r\n",
    "\u{feff}",
    "é",
    "🦀",
    "sleep(",
    "Duration::from_secs(",
    "break",
    "continue",
    "return",
    "Err(",
    "Ok(",
    "match ",
    "macro_rules! ",
    "retry-audit: allow(",
    "RA001",
    "impl ",
    "fn ",
    "where ",
    "dyn ",
    "<",
    ">",
    ">>",
    "<<=",
];

/// Where the last panic happened (set by the panic hook; the checker runs one input at a time).
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Bytes,
    Mutated,
}

impl Target {
    fn parse(name: &str) -> Option<Target> {
        match name {
            "check_bytes" => Some(Target::Bytes),
            "check_mutated" => Some(Target::Mutated),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Target::Bytes => "check_bytes",
            Target::Mutated => "check_mutated",
        }
    }

    /// Runs one input; `Some(parsed)` for `check_mutated`.
    fn run(self, data: &[u8]) -> Option<bool> {
        match self {
            Target::Bytes => {
                run_bytes(data);
                None
            }
            Target::Mutated => Some(run_mutated(data)),
        }
    }
}

struct Options {
    target: Target,
    seconds: u64,
    seed: u64,
    timeout: Duration,
    crashes: PathBuf,
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: drive check_bytes|check_mutated [--seconds N] [--seed S] [--timeout SECS] [--crashes DIR]\n       drive replay check_bytes|check_mutated FILE...\n       drive mutant FILE   (the source a check_mutated input builds)"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("mutant") {
        // The file a `check_mutated` input builds, for reading and reducing.
        let Some(Ok(data)) = args.get(1).map(std::fs::read) else {
            return usage();
        };
        print!(
            "{}",
            on_big_stack(|| mutate::Mutant::build(&data, seeds())).text
        );
        return ExitCode::SUCCESS;
    }
    if args.first().map(String::as_str) == Some("replay") {
        let Some(target) = args.get(1).and_then(|t| Target::parse(t)) else {
            return usage();
        };
        return replay(target, &args[2..]);
    }
    let Some(target) = args.first().and_then(|t| Target::parse(t)) else {
        return usage();
    };
    let mut options = Options {
        target,
        seconds: 60,
        seed: fastrand::u64(..),
        timeout: Duration::from_secs(20),
        crashes: repo_root().join("fuzz/crashes"),
    };
    let mut rest = args[1..].iter();
    while let Some(flag) = rest.next() {
        let Some(value) = rest.next() else {
            return usage();
        };
        let number = value.parse::<u64>();
        match (flag.as_str(), number) {
            ("--seconds", Ok(n)) => options.seconds = n,
            ("--seed", Ok(n)) => options.seed = n,
            ("--timeout", Ok(n)) => options.timeout = Duration::from_secs(n),
            ("--crashes", _) => options.crashes = PathBuf::from(value),
            _ => return usage(),
        }
    }
    drive(&options)
}

fn replay(target: Target, files: &[String]) -> ExitCode {
    let mut failed = 0;
    for file in files {
        let data = match std::fs::read(file) {
            Ok(data) => data,
            Err(e) => {
                eprintln!("{file}: {e}");
                failed += 1;
                continue;
            }
        };
        if panic::catch_unwind(AssertUnwindSafe(|| target.run(&data))).is_ok() {
            println!("{file}: ok");
        } else {
            println!("{file}: CRASH");
            failed += 1;
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What the worker sends back for one input.
struct Outcome {
    parsed: Option<bool>,
    panic: Option<String>,
    took: Duration,
}

fn drive(options: &Options) -> ExitCode {
    let target = options.target;
    let seed_bytes = seed_files();
    let mut rng = fastrand::Rng::with_seed(options.seed);
    let (to_worker, inputs) = mpsc::sync_channel::<Vec<u8>>(0);
    let (to_main, outcomes) = mpsc::channel::<Outcome>();
    // Panics are caught and reported by the main loop, with where they happened; the default
    // hook (with a backtrace, maybe) would print each one and slow the run down.
    panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        *LAST_PANIC.lock().unwrap_or_else(PoisonError::into_inner) = location;
    }));
    std::thread::Builder::new()
        .name("drive-worker".to_owned())
        .spawn(move || {
            for data in inputs {
                let start = Instant::now();
                let result = panic::catch_unwind(AssertUnwindSafe(|| target.run(&data)));
                let outcome = match result {
                    Ok(parsed) => Outcome {
                        parsed,
                        panic: None,
                        took: start.elapsed(),
                    },
                    Err(payload) => Outcome {
                        parsed: None,
                        panic: Some(format!(
                            "{}: {}",
                            LAST_PANIC.lock().unwrap_or_else(PoisonError::into_inner),
                            panic_message(&*payload)
                        )),
                        took: start.elapsed(),
                    },
                };
                if to_main.send(outcome).is_err() {
                    return;
                }
            }
        })
        .expect("spawn the worker");

    let started = Instant::now();
    let until = started + Duration::from_secs(options.seconds);
    let (mut execs, mut parsed, mut slowest) = (0u64, 0u64, Duration::ZERO);
    let mut crashes: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut next_report = started + Duration::from_secs(30);
    eprintln!(
        "drive {}: seed {}, {} s, {} seed files",
        target.name(),
        options.seed,
        options.seconds,
        seed_bytes.len()
    );
    while Instant::now() < until {
        let data = match target {
            Target::Bytes => mutate_bytes(&mut rng, &seed_bytes),
            Target::Mutated => {
                let len = rng.usize(1..=256);
                (0..len).map(|_| rng.u8(..)).collect()
            }
        };
        to_worker.send(data.clone()).expect("the worker is alive");
        let Ok(outcome) = outcomes.recv_timeout(options.timeout) else {
            let path = save(&options.crashes, target, "timeout", &data);
            eprintln!(
                "TIMEOUT: an input ran longer than {:?}; saved to {}",
                options.timeout,
                path.display()
            );
            return ExitCode::from(1);
        };
        execs += 1;
        parsed += u64::from(outcome.parsed == Some(true));
        slowest = slowest.max(outcome.took);
        if let Some(message) = outcome.panic {
            let key = message.lines().next().unwrap_or_default().to_owned();
            if let std::collections::btree_map::Entry::Vacant(entry) = crashes.entry(key) {
                let path = save(&options.crashes, target, "crash", &data);
                eprintln!("CRASH: {message}\n  input saved to {}", path.display());
                entry.insert(path);
            }
        }
        if Instant::now() >= next_report {
            report(target, execs, parsed, slowest, crashes.len(), started);
            next_report += Duration::from_secs(30);
        }
    }
    report(target, execs, parsed, slowest, crashes.len(), started);
    if crashes.is_empty() {
        ExitCode::SUCCESS
    } else {
        for (message, path) in &crashes {
            eprintln!("  {}: {message}", path.display());
        }
        ExitCode::from(1)
    }
}

fn report(
    target: Target,
    execs: u64,
    parsed: u64,
    slowest: Duration,
    crashes: usize,
    started: Instant,
) {
    let secs = started.elapsed().as_secs_f64();
    let parse_rate = if target == Target::Mutated && execs > 0 {
        format!(", {:.0}% parsed", 100.0 * parsed as f64 / execs as f64)
    } else {
        String::new()
    };
    eprintln!(
        "#{execs} in {secs:.0} s ({:.0} exec/s{parse_rate}), slowest input {slowest:?}, peak RSS {}, {crashes} crash(es)",
        execs as f64 / secs.max(0.001),
        peak_rss()
    );
}

/// The process's peak resident memory, from `/proc/self/status` where there is one.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l["VmHWM:".len()..].trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

fn save(dir: &Path, target: Target, kind: &str, data: &[u8]) -> PathBuf {
    let _ = std::fs::create_dir_all(dir);
    let mut hasher = DefaultHasher::new();
    data.hash(&mut hasher);
    let path = dir.join(format!("{}-{kind}-{:016x}", target.name(), hasher.finish()));
    let _ = std::fs::write(&path, data);
    if target == Target::Mutated {
        // The mutated file itself, for reading and for a regression test.
        let mutant = on_big_stack(|| mutate::Mutant::build(data, seeds()));
        let _ = std::fs::write(path.with_extension("rs"), mutant.text);
    }
    path
}

fn seed_files() -> Vec<Vec<u8>> {
    let root = repo_root();
    let mut paths = Vec::new();
    for dir in ["fixtures", "tests/adversarial"] {
        rust_files(&root.join(dir), &mut paths);
    }
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// A seed with 1 to 8 byte-level mutations, or (one time in 20) random bytes.
fn mutate_bytes(rng: &mut fastrand::Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    if rng.u8(0..20) == 0 {
        let len = rng.usize(0..4096);
        return (0..len).map(|_| rng.u8(..)).collect();
    }
    let mut data = seeds[rng.usize(0..seeds.len())].clone();
    for _ in 0..rng.usize(1..=8) {
        let len = data.len();
        match rng.u8(0..8) {
            0 if len > 0 => {
                let i = rng.usize(0..len);
                data[i] ^= 1 << rng.u8(0..8);
            }
            1 if len > 0 => {
                let i = rng.usize(0..len);
                data[i] = rng.u8(..);
            }
            2 => {
                let token = TOKENS[rng.usize(0..TOKENS.len())].as_bytes();
                let i = rng.usize(0..=len);
                data.splice(i..i, token.iter().copied());
            }
            3 if len > 0 => {
                let start = rng.usize(0..len);
                let end = (start + rng.usize(1..=256)).min(len);
                data.drain(start..end);
            }
            4 if len > 0 => {
                let start = rng.usize(0..len);
                let end = (start + rng.usize(1..=512)).min(len);
                let copy = data[start..end].to_vec();
                let at = rng.usize(0..=len);
                data.splice(at..at, copy);
            }
            5 => {
                let donor = &seeds[rng.usize(0..seeds.len())];
                if !donor.is_empty() {
                    let start = rng.usize(0..donor.len());
                    let end = (start + rng.usize(1..=1024)).min(donor.len());
                    let at = rng.usize(0..=len);
                    data.splice(at..at, donor[start..end].iter().copied());
                }
            }
            6 => data.truncate(rng.usize(0..=len)),
            _ => {
                // A run of one bracket kind: nesting near and past the engine's limit.
                let bracket = [b'(', b'{', b'[', b')', b'}', b']'][rng.usize(0..6)];
                let i = rng.usize(0..=len);
                let count = rng.usize(1..=3000);
                data.splice(i..i, std::iter::repeat_n(bracket, count));
            }
        }
    }
    data
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
