#!/usr/bin/env bash
# The scan benchmark (issue 6): retry-audit with every rule, against
#   (b) the parse-only floor: benches/parse_floor.rs walks, reads and syn-parses the same files
#       on the same number of threads, and does nothing else;
#   (c) ast-grep running three comparable rules (benches/ast-grep: a sleep, `Uuid::new_v4()` and
#       `.is_client_error()` inside a loop);
#   (d) retry-audit without its pre-filter (`--full-parse`).
# All get the same corpus and the same thread count; benches/measure.py times each.
#
# usage: benches/scan.sh [CORPUS_DIR]
#   CORPUS_DIR  default target/bench-corpus, fetched with ../shared/corpus/fetch.sh --all
#               (~14 000 files, ~5.9 M lines) when missing or empty
#   JOBS=N      threads for every tool (default: every core)
#   RUNS=N      timed runs per tool after one warm-up (default: 5)
#   BLESS=1     write the output, with the date, the commit and the machine, to
#               benches/results/scan.md and the documentation's block `bench` from it
# The binaries run are the ones cargo reports for its build (wherever the target directory is).
# Needs cargo and python3 (ast-grep is installed with pip into target/bench-venv).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus=${1:-$root/target/bench-corpus}
jobs=${JOBS:-$(nproc)}
runs=${RUNS:-5}
ast_grep_version=0.51.1

if [[ ! -d $corpus || -z $(ls -A "$corpus" 2>/dev/null) ]]; then
    echo "fetching the corpus into $corpus" >&2
    "$root/../shared/corpus/fetch.sh" "$corpus" --all
fi

echo "building retry-audit and the parse-only floor (release)" >&2
built=$(cargo build --release --quiet --message-format=json --manifest-path "$root/Cargo.toml" \
    --bin retry-audit --example parse-floor |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])')
retry_audit=$(awk '$1 == "retry-audit" { print $2 }' <<<"$built")
parse_floor=$(awk '$1 == "parse-floor" { print $2 }' <<<"$built")

venv=$root/target/bench-venv
if [[ ! -x $venv/bin/ast-grep ]]; then
    echo "installing ast-grep-cli $ast_grep_version into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "ast-grep-cli==$ast_grep_version"
fi

files=$(find "$corpus" -name '*.rs' -type f | wc -l)
lines=$(find "$corpus" -name '*.rs' -type f -print0 | xargs -0 cat | wc -l)
bytes=$(find "$corpus" -name '*.rs' -type f -print0 | xargs -0 cat | wc -c)
shown_corpus=${corpus#"$root/"}
if [[ -z ${1:-} ]]; then
    shown_corpus="$shown_corpus (../shared/corpus/fetch.sh DIR --all)"
fi
about="Corpus $shown_corpus: $files .rs files, $lines lines, $bytes bytes; $jobs threads for every \
tool; RUNS=$runs: medians of $runs rounds after a warm-up. $("$retry_audit" --version), ast-grep \
$("$venv/bin/ast-grep" --version | cut -d' ' -f2)."
echo "$about"
echo

# Two more figures of the same corpus: how many files the cross-file pass checked again
# (retry-audit --stats), and what the pre-filter blanks there while its findings stay identical
# (the ignored corpus test of tests/prefilter.rs).
echo "retry-audit --stats, and the pre-filter's corpus test (cargo test --release --test prefilter)" >&2
said=$(mktemp)
# Exit status 1: findings were reported.
"$retry_audit" --stats --isolated --jobs "$jobs" --format json "$corpus" >/dev/null 2>"$said" ||
    [[ $? == 1 ]]
stats=$(grep -E '^ +(files|cross-file) ' "$said" | sed -E 's/^ +//; s/ +/ /g' | paste -sd ';' - |
    sed 's/;/; /g')
rm -f "$said"
prefilter=$(RETRY_AUDIT_CORPUS=$corpus cargo test --release --quiet --manifest-path "$root/Cargo.toml" \
    --test prefilter -- --ignored --nocapture 2>/dev/null | grep 'identical findings')

bless=()
if [[ ${BLESS:-} == 1 ]]; then
    bless=(--bless)
fi
python3 "$root/benches/measure.py" "${bless[@]}" --about "$about" \
    --fact "retry-audit --stats (once, $jobs threads): $stats" \
    --fact "the pre-filter's corpus test (tests/prefilter.rs, ignored; blanked against full parses): $prefilter" \
    "$runs" \
    "retry-audit=$retry_audit --jobs $jobs --format json --isolated $corpus" \
    "parse-only floor=$parse_floor --jobs $jobs $corpus" \
    "ast-grep (3 rules)=$venv/bin/ast-grep scan --threads $jobs --json=stream -c $root/benches/ast-grep/sgconfig.yml $corpus" \
    "retry-audit --full-parse=$retry_audit --jobs $jobs --format json --isolated --full-parse $corpus"
