//! The harness itself, on stable (`cargo test --no-default-features` in `fuzz/`): the seeds pass
//! both targets, the mutator mostly yields Rust the parser accepts, and the invariants do reject
//! a wrong answer (they are not vacuous).

use retry_audit::analysis::limits;
use retry_audit::pipeline::engine::check_source;
use retry_audit::report::FileError;
use retry_audit::{Diagnostic, Label, Level, Position, Rule, Span};
use retry_audit_fuzz::{
    all_rules, invariants, mutate, on_big_stack, run_bytes, run_mutated, seeds,
};

#[test]
fn every_seed_passes_both_targets() {
    for (i, seed) in seeds().iter().enumerate() {
        run_bytes(seed.text.as_bytes());
        // A one-byte program: this seed, default levels, no mutation.
        let index = u8::try_from(i % 256).expect("fits");
        assert!(run_mutated(&[index]), "{} does not parse", seed.name);
    }
}

/// Panic messages of bugs the fuzzer found that are not fixed yet (their inputs wait in
/// `tests/adversarial/known/`); remove an entry with its fix. None at the moment.
const KNOWN_BUGS: &[&str] = &[];

#[test]
fn random_mutation_programs_pass_and_most_still_parse() {
    let mut rng = fastrand::Rng::with_seed(7);
    let (mut parsed, mut known, total) = (0, 0, 300);
    for _ in 0..total {
        let len = rng.usize(1..=64);
        let program: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
        match std::panic::catch_unwind(|| run_mutated(&program)) {
            Ok(ok) => parsed += usize::from(ok),
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                assert!(
                    KNOWN_BUGS.iter().any(|bug| message.contains(bug)),
                    "a new crash: {message}"
                );
                known += 1;
            }
        }
    }
    eprintln!("{known} of {total} programs hit a known bug");
    // Those parsed too: the bug is in the analysis after the parse.
    parsed += known;
    // Structure-aware fuzzing is worth it only if the analysis runs on most inputs.
    assert!(
        parsed * 4 >= total * 3,
        "only {parsed} of {total} mutants parsed"
    );
}

#[test]
fn mutations_change_the_text() {
    let seeds = seeds();
    let mut rng = fastrand::Rng::with_seed(11);
    let changed = (0..100)
        .filter(|_| {
            let program: Vec<u8> = (0..32).map(|_| rng.u8(..)).collect();
            let mutant = on_big_stack(|| mutate::Mutant::build(&program, seeds));
            let original = seeds
                .iter()
                .find(|s| s.name == mutant.seed)
                .expect("the mutant names its seed");
            mutant.text != original.text
        })
        .count();
    assert!(
        changed >= 80,
        "only {changed} of 100 programs changed their seed"
    );
}

fn diagnostic_at(span: Span) -> Diagnostic {
    Diagnostic {
        rule: Rule::ALL[0],
        level: all_rules().level(Rule::ALL[0]),
        message: "a finding".to_owned(),
        primary: Label {
            span,
            message: String::new(),
        },
        secondary: Vec::new(),
        help: None,
        notes: Vec::new(),
        fix: None,
        elsewhere: Vec::new(),
    }
}

#[test]
fn the_invariants_reject_wrong_answers() {
    let text = "fn f() {\n    loop {}\n}\n";
    let settings = all_rules();
    let loop_at = text.find("loop").expect("loop");
    let good = Span {
        start: loop_at,
        end: loop_at + 4,
        start_pos: Position { line: 2, column: 5 },
        end_pos: Position { line: 2, column: 9 },
    };
    invariants::check(text.as_bytes(), &settings, &Ok(vec![diagnostic_at(good)]));

    let wrong_answers = [
        Ok(vec![diagnostic_at(Span {
            start_pos: Position { line: 1, column: 5 },
            ..good
        })]),
        Ok(vec![diagnostic_at(Span {
            end: text.len() + 1,
            ..good
        })]),
        Ok(vec![diagnostic_at(good), diagnostic_at(good)]),
        Ok(vec![Diagnostic {
            level: Level::Allow,
            ..diagnostic_at(good)
        }]),
        Err(FileError::TooDeep),
        Err(FileError::TooComplex(limits::Exhausted(
            limits::Limit::Depth,
        ))),
        Err(FileError::NotUtf8 { offset: 0 }),
        Err(FileError::Parse {
            position: Position { line: 9, column: 1 },
            message: "expected `;`".to_owned(),
        }),
    ];
    for wrong in wrong_answers {
        let caught = std::panic::catch_unwind(|| {
            invariants::check(text.as_bytes(), &settings, &wrong);
        });
        assert!(caught.is_err(), "accepted {wrong:?}");
    }
}

#[test]
fn positions_skip_the_bom_and_count_characters() {
    let text = "\u{feff}fn é() {}\r\nfn g() {}\n";
    assert_eq!(
        invariants::position(text, 3, text.find("()").expect("parens")),
        Position { line: 1, column: 5 }
    );
    assert_eq!(
        invariants::position(text, 3, text.find("fn g").expect("g")),
        Position { line: 2, column: 1 }
    );
    // And the engine agrees on a real finding in such a file.
    let source = "\u{feff}fn é() -> u32 {\r\n    loop {\r\n        match op() {\r\n            Ok(v) => return v,\r\n            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),\r\n        }\r\n    }\r\n}\r\n";
    let found = check_source(source, &all_rules()).expect("parses");
    invariants::check(source.as_bytes(), &all_rules(), &Ok(found.clone()));
    assert!(!found.is_empty(), "the unbounded loop is reported");
}
