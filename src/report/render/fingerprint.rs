//! Fingerprints that identify a finding across unrelated edits: they do not depend on line
//! numbers, so code inserted or removed above a finding leaves its fingerprint unchanged.
//!
//! A fingerprint hashes the rule id, the file's path, the text of the primary span's first line
//! with whitespace collapsed, and the name of the enclosing `fn` (the nearest `fn NAME` line
//! above, indented less than the finding, or the finding's own line). Findings that agree on
//! all of these (the same call twice in one function) are told apart by their order, so every
//! fingerprint in a file is unique. The hash is 64-bit FNV-1a, which is specified and does not
//! change between Rust releases (unlike `std`'s `DefaultHasher`).

use crate::checks::diagnostic::Diagnostic;

/// The fingerprints of one file's findings, in the same order. `path` is the file's name as
/// reported (e.g. relative to the repository root); `source` is the file's text.
#[must_use]
pub fn fingerprints(path: &str, source: Option<&str>, diagnostics: &[Diagnostic]) -> Vec<String> {
    let lines: Vec<&str> = source.map(|s| s.lines().collect()).unwrap_or_default();
    let mut seen: Vec<u64> = Vec::with_capacity(diagnostics.len());
    diagnostics
        .iter()
        .map(|diagnostic| {
            let line_index = diagnostic.primary.span.start_pos.line.saturating_sub(1);
            let text = lines
                .get(line_index)
                .map_or_else(|| diagnostic.message.clone(), |line| collapse(line));
            let function = enclosing_fn(&lines, line_index).unwrap_or("");
            let key = fnv1a(&[diagnostic.rule.id(), path, &text, function]);
            let occurrence = seen.iter().filter(|k| **k == key).count();
            seen.push(key);
            let occurrence = occurrence.to_string();
            format!(
                "{:016x}",
                fnv1a(&[diagnostic.rule.id(), path, &text, function, &occurrence])
            )
        })
        .collect()
}

/// The text with every run of whitespace replaced by one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The name of the function around the 0-based line `index`: the nearest line at or above it
/// that declares `fn NAME` and is indented less (or is the line itself).
fn enclosing_fn<'a>(lines: &[&'a str], index: usize) -> Option<&'a str> {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let own_indent = indent(lines.get(index)?);
    (0..=index).rev().find_map(|i| {
        let line = lines[i];
        let name = fn_name(line)?;
        (i == index || indent(line) < own_indent).then_some(name)
    })
}

/// `NAME` when the line contains the keyword `fn` followed by an identifier.
fn fn_name(line: &str) -> Option<&str> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut rest = line;
    while let Some(at) = rest.find("fn") {
        let before_ok = !matches!(rest[..at].chars().next_back(), Some(c) if is_ident(c));
        let after = &rest[at + 2..];
        let name = after.trim_start();
        let name = name.strip_prefix("r#").unwrap_or(name);
        if before_ok && after.starts_with(char::is_whitespace) {
            let end = name.find(|c: char| !is_ident(c)).unwrap_or(name.len());
            if end > 0 && !name.starts_with(|c: char| c.is_ascii_digit()) {
                return Some(&name[..end]);
            }
        }
        rest = after;
    }
    None
}

/// 64-bit FNV-1a over the parts, each followed by a 0 byte so that ("ab", "c") and ("a", "bc")
/// differ. Shared with the baseline's keys (`crate::report::baseline`).
pub(crate) fn fnv1a(parts: &[&str]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for part in parts {
        for &byte in part.as_bytes().iter().chain(&[0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vector() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c; our parts add a 0 byte after each part, and
        // the hash of "a\0" continues from there.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        hash ^= u64::from(b'a');
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        assert_eq!(hash, 0xaf63_dc4c_8601_ec8c);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        assert_eq!(fnv1a(&["a"]), hash);
        assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
    }

    #[test]
    fn the_enclosing_fn_is_the_nearest_less_indented_declaration() {
        let src = "\
pub async fn fetch(client: &Client) {
    let f = |x| x;
    loop {
        sleep(ONE);
    }
}
fn other() {}
";
        let lines: Vec<&str> = src.lines().collect();
        assert_eq!(enclosing_fn(&lines, 3), Some("fetch"));
        assert_eq!(enclosing_fn(&lines, 0), Some("fetch"));
        assert_eq!(enclosing_fn(&lines, 6), Some("other"));
        assert_eq!(fn_name("    fn_call(x); fnord"), None);
        assert_eq!(fn_name("const fn r#try() {}"), Some("try"));
        assert_eq!(fn_name("impl Fn(u8) for X { fn go(&self) {} }"), Some("go"));
    }

    #[test]
    fn whitespace_is_collapsed() {
        assert_eq!(collapse("  sleep( ONE )\t; "), "sleep( ONE ) ;");
    }
}
