#!/usr/bin/env bash
# Runs one fuzz target for SECONDS (default 600): with cargo-fuzz (libFuzzer, coverage-guided)
# when a nightly toolchain and cargo-fuzz are installed, otherwise with the stable random-input
# driver. Crashes are kept (fork mode: one crash does not end the run) under fuzz/artifacts/
# (libFuzzer) or fuzz/crashes/ (driver). Usage: fuzz/fuzz.sh check_bytes|check_mutated [SECONDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
target=${1:?usage: fuzz/fuzz.sh check_bytes|check_mutated [SECONDS]}
seconds=${2:-600}
case $target in
check_bytes | check_mutated) ;;
*) echo "unknown target $target" >&2; exit 2 ;;
esac

if rustup run nightly cargo fuzz --version >/dev/null 2>&1; then
    mkdir -p "corpus/$target"
    seeds=()
    if [[ $target == check_bytes ]]; then
        # libFuzzer reads every file under these directories as a seed; new inputs go to the first.
        # The fixed regression inputs too (not tests/adversarial/known/: those still crash).
        seeds=(../fixtures)
        cp ../tests/adversarial/*.rs "corpus/$target/" 2>/dev/null || true
    else
        # A one-byte program picks a fixture, unchanged.
        for i in $(seq 0 63); do printf "\\x$(printf %02x "$i")" >"corpus/$target/seed-$i"; done
    fi
    # --no-cfg-fuzzing: under `--cfg fuzzing`, proc-macro2 records no source positions (every
    # span would be 0..0), and the position checks would check nothing.
    exec cargo +nightly fuzz run "$target" --sanitizer none --debug-assertions --no-cfg-fuzzing \
        "corpus/$target" "${seeds[@]}" -- \
        -dict=rust.dict -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
        -max_len=262144 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
else
    echo "no nightly cargo-fuzz here: running the stable driver" >&2
    cargo run --release --no-default-features --features driver --bin drive -- "$target" --seconds "$seconds"
fi
