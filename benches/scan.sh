#!/usr/bin/env bash
# The scan benchmark (issue 6): retry-audit with every rule, against
#   (b) the parse-only floor: benches/parse_floor.rs walks, reads and syn-parses the same files
#       on the same number of threads, and does nothing else;
#   (c) ast-grep running three comparable rules (benches/ast-grep: a sleep, `Uuid::new_v4()` and
#       `.is_client_error()` inside a loop).
# All three get the same corpus and the same thread count; benches/measure.py times each.
#
# usage: benches/scan.sh [CORPUS_DIR]
#   CORPUS_DIR  default target/bench-corpus, fetched with ../shared/corpus/fetch.sh --all
#               (~14 000 files, ~5.9 M lines) when missing or empty
#   JOBS=N      threads for every tool (default: every core)
#   RUNS=N      timed runs per tool after one warm-up (default: 5)
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
cargo build --release --quiet --manifest-path "$root/Cargo.toml" --bin retry-audit --example parse-floor

venv=$root/target/bench-venv
if [[ ! -x $venv/bin/ast-grep ]]; then
    echo "installing ast-grep-cli $ast_grep_version into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "ast-grep-cli==$ast_grep_version"
fi

files=$(find "$corpus" -name '*.rs' -type f | wc -l)
lines=$(find "$corpus" -name '*.rs' -type f -print0 | xargs -0 cat | wc -l)
echo "corpus: $corpus, $files .rs files, $lines lines; $jobs threads; $(nproc) cores; $runs runs each"
echo "machine: $(uname -sm), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "versions: $("$root/target/release/retry-audit" --version), ast-grep $("$venv/bin/ast-grep" --version | cut -d' ' -f2)"
echo

python3 "$root/benches/measure.py" "$runs" \
    "retry-audit=$root/target/release/retry-audit --jobs $jobs --format json --isolated $corpus" \
    "parse-only floor=$root/target/release/examples/parse-floor --jobs $jobs $corpus" \
    "ast-grep (3 rules)=$venv/bin/ast-grep scan --threads $jobs --json=stream -c $root/benches/ast-grep/sgconfig.yml $corpus"
