//! RA005's fix: moving the key's creation above the loop. Applying the edits gives a file that
//! parses and no longer has the finding; where the move is not mechanical, no fix is offered.

#![cfg(feature = "analysis")]

use retry_audit::{check_source, Diagnostic, Rule, Settings};

mod support;

use support::KEY_IN_LOOP;

fn findings(src: &str) -> Vec<Diagnostic> {
    check_source(src, &Settings::preview()).expect("parses")
}

/// RA005 is reported, and offers no fix.
fn assert_key_without_fix(found: &[Diagnostic]) {
    let key = found
        .iter()
        .find(|d| d.rule == Rule::KeyInLoop)
        .expect("RA005 reported");
    assert!(key.fix.is_none(), "{key:?}");
}

/// Applies every edit of every fix (edits of one file never overlap).
fn apply(src: &str, diags: &[Diagnostic]) -> String {
    let mut edits: Vec<_> = diags
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .flat_map(|f| f.edits.iter())
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut out = src.to_owned();
    for e in edits {
        out.replace_range(e.start..e.end, &e.replacement);
    }
    out
}

#[test]
fn the_key_moves_above_the_loop() {
    let before = findings(KEY_IN_LOOP);
    let ra005: Vec<_> = before
        .iter()
        .filter(|d| d.rule == Rule::KeyInLoop)
        .collect();
    assert_eq!(ra005.len(), 1);
    assert!(
        ra005[0].fix.is_some(),
        "a plain `let` in the loop is fixable"
    );
    let fixed = apply(KEY_IN_LOOP, &before);
    assert!(
        fixed.contains(
            "    let idempotency_key = Uuid::new_v4().to_string();\n    for attempt in 0..3u32 {"
        ),
        "the let now stands before the loop:\n{fixed}"
    );
    let after = findings(&fixed);
    assert!(
        after.iter().all(|d| d.rule != Rule::KeyInLoop),
        "no RA005 after the fix:\n{fixed}"
    );
}

#[test]
fn a_key_computed_from_the_attempt_is_not_moved() {
    let src = KEY_IN_LOOP.replace(
        "Uuid::new_v4().to_string();",
        "format!(\"{}-{attempt}\", Uuid::new_v4());",
    );
    let diags = findings(&src);
    let ra005: Vec<_> = diags.iter().filter(|d| d.rule == Rule::KeyInLoop).collect();
    assert_eq!(ra005.len(), 1);
    assert!(
        ra005[0].fix.is_none(),
        "it uses the loop variable `attempt`"
    );
}

#[test]
fn a_loop_in_a_let_takes_the_key_above_the_let() {
    let src = r"fn send(client: &Client) -> Result<(), Error> {
    let result = loop {
        let dedup_id = Ulid::new().to_string();
        match client.publish(&dedup_id) {
            Ok(()) => break Ok(()),
            Err(e) if e.is_transient() => std::thread::sleep(jittered()),
            Err(e) => break Err(e),
        }
    };
    result
}
";
    let before = findings(src);
    let fixed = apply(src, &before);
    assert!(fixed.contains("    let dedup_id = Ulid::new().to_string();\n    let result = loop {"));
    assert!(syn::parse_file(&fixed).is_ok());
    assert!(findings(&fixed).iter().all(|d| d.rule != Rule::KeyInLoop));
}

#[test]
fn an_inline_key_has_no_mechanical_fix() {
    let src = KEY_IN_LOOP
        .replace(
            "        let idempotency_key = Uuid::new_v4().to_string();\n",
            "",
        )
        .replace("&idempotency_key", "Uuid::new_v4().to_string()");
    let diags = findings(&src);
    let ra005: Vec<_> = diags.iter().filter(|d| d.rule == Rule::KeyInLoop).collect();
    assert_eq!(ra005.len(), 1);
    assert!(ra005[0].fix.is_none());
}

/// Found by the fuzzer: a loop inside a function that also retries by calling itself. Hoisting
/// the key out of the loop leaves it made once per recursive attempt, so no fix is offered.
#[test]
fn a_key_made_per_attempt_of_two_retries_has_no_fix() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/adversarial/key_in_loop_inside_recursion.rs"
    ))
    .expect("the regression input");
    let found = findings(&src);
    assert_key_without_fix(&found);
    // The recursion is a retry of its own: both sites make the key per attempt.
    assert!(found.iter().any(|d| d.rule == Rule::UnboundedRetry));
}

/// Found by the fuzzer: the key's `let` repeated, the second shadowing the first. Hoisting the
/// reported one would leave the first in the loop, still made per attempt: no fix is offered.
#[test]
fn a_key_that_shadows_an_earlier_binding_of_the_loop_has_no_fix() {
    let line = "        let idempotency_key = Uuid::new_v4().to_string();\n";
    let src = KEY_IN_LOOP.replace(line, &line.repeat(2));
    let found = findings(&src);
    assert_key_without_fix(&found);
    // Shadowing the loop's own variable: the same.
    let src = KEY_IN_LOOP.replace(
        "for attempt in 0..3u32 {\n        let idempotency_key",
        "for idempotency_key in 0..3u32 {\n        let attempt = 0;\n        let idempotency_key",
    );
    let found = findings(&src);
    assert_key_without_fix(&found);
}

/// Found by compiling `fixtures/key-in-loop/helpers.fixed`: the key is made one call away, in a
/// local function that builds the request. The `let` binds the request, not the key; moved
/// above the loop, the first `request.send()` consumes it (E0382): no fix is offered.
#[test]
fn a_key_made_by_a_local_builder_has_no_fix() {
    let src = r#"fn charge_request(client: &Client, charge: &Charge) -> RequestBuilder {
    client.post(URL).header("Idempotency-Key", Uuid::new_v4().to_string()).json(charge)
}

async fn charge_card(client: &Client, charge: &Charge) -> Result<ChargeId, Error> {
    let mut attempt = 0;
    loop {
        let request = charge_request(client, charge);
        match request.send().await {
            Ok(resp) => return Ok(resp.json().await?),
            Err(err) if attempt + 1 < 3 => {
                attempt += 1;
                tokio::time::sleep(jittered(attempt)).await;
            }
            Err(err) => return Err(err.into()),
        }
    }
}
"#;
    assert_key_without_fix(&findings(src));
}

/// Found in `fixtures/key-in-loop/constructors.fixed`: an integer key is copied, not moved, so
/// it takes no `.clone()` where it is passed by value (`clippy::clone_on_copy`); a string does.
#[test]
fn an_integer_key_passed_by_value_takes_no_clone() {
    let by_value = KEY_IN_LOOP.replace("&idempotency_key", "idempotency_key");
    let fixed = apply(&by_value, &findings(&by_value));
    assert!(
        fixed.contains(".header(\"Idempotency-Key\", idempotency_key.clone())"),
        "a string moved by the header is cloned:\n{fixed}"
    );
    for (line, made) in [
        ("let idempotency_key = fastrand::u64(..);", true),
        ("let idempotency_key = rng.next_u64();", true),
        ("let idempotency_key = rand::random::<u128>();", true),
        ("let idempotency_key = rng.gen::<u64>();", true),
        ("let idempotency_key: u64 = rng.random();", true),
        (
            "let idempotency_key = rand::random::<u64>().to_string();",
            false,
        ),
    ] {
        let src = by_value.replace("let idempotency_key = Uuid::new_v4().to_string();", line);
        let found = findings(&src);
        let key = found
            .iter()
            .find(|d| d.rule == Rule::KeyInLoop)
            .unwrap_or_else(|| panic!("RA005 reported for `{line}`"));
        assert!(key.fix.is_some(), "`{line}` is fixable");
        let fixed = apply(&src, &found);
        assert!(
            fixed.contains(&format!("    {line}\n    for attempt in 0..3u32 {{")),
            "`{line}` moves above the loop:\n{fixed}"
        );
        assert_eq!(
            !fixed.contains("idempotency_key.clone()"),
            made,
            "`{line}`: a clone only for a string:\n{fixed}"
        );
    }
}

/// Found in `fixtures/key-in-loop/other_generators.fixed`: a `let` written on several lines
/// keeps its shape above the loop, its continuation lines indented one level less with it.
#[test]
fn a_key_on_several_lines_is_reindented_above_the_loop() {
    let key = "        let idempotency_key: String = rand::thread_rng()\n            .sample_iter(&Alphanumeric)\n            .take(24)\n            .map(char::from)\n            .collect();\n";
    let src = KEY_IN_LOOP.replace(
        "        let idempotency_key = Uuid::new_v4().to_string();\n",
        key,
    );
    let fixed = apply(&src, &findings(&src));
    assert!(
        fixed.contains("    let idempotency_key: String = rand::thread_rng()\n        .sample_iter(&Alphanumeric)\n        .take(24)\n        .map(char::from)\n        .collect();\n    for attempt in 0..3u32 {\n"),
        "{fixed}"
    );
    // A literal written on two lines keeps its text: the statement is moved as written.
    let src = KEY_IN_LOOP.replace(
        "        let idempotency_key = Uuid::new_v4().to_string();\n",
        "        let idempotency_key = format!(\"order\n            -{}\", Uuid::new_v4());\n",
    );
    let fixed = apply(&src, &findings(&src));
    assert!(
        fixed.contains("    let idempotency_key = format!(\"order\n            -{}\", Uuid::new_v4());\n    for attempt"),
        "{fixed}"
    );
}
