#!/usr/bin/env python3
"""The `#[retryable]` overhead table: runs `cargo bench --bench macro_overhead` (criterion), reads
the median of each benchmark from criterion's output (TARGET/criterion/**/new/estimates.json, with
the benchmark's name from the benchmark.json beside it), and prints the documentation's table with
the date, the commit and the machine it was measured on.

usage: benches/overhead.py [--bless] [-- CRITERION-ARGS...]
  --bless   write the output to benches/results/macro_overhead.md, and the documentation's block
            `overhead` (README.md or docs/**/*.md) from that file; tests/generated_docs.rs checks
            that the block is the file
  CRITERION-ARGS  passed to the benchmark (e.g. `--measurement-time 2`); named in the output
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import docblocks  # noqa: E402
import provenance  # noqa: E402

ROOT = docblocks.ROOT
RESULT = os.path.join(ROOT, "benches", "results", "macro_overhead.md")
BLOCK = "overhead"
# (row, benchmark without the attribute, benchmark with it)
ROWS = [
    ("sync, default policy", "sync/plain", "sync/retryable"),
    ("sync, `budget = API` (a shared `static RetryBudget`)", "sync/plain", "sync/retryable+budget"),
    ("sync, `idempotency_key = key = \"order:42\"`", "sync/plain", "sync/retryable+key"),
    ("async, default policy (`sleep = no_wait`, never called)", "async/plain", "async/retryable"),
    ("async, `budget = API`", "async/plain", "async/retryable+budget"),
]
CLOCK = "sync/Instant::now"


def medians(criterion_dir):
    """Median in ns of each benchmark, by `group/function`."""
    out = {}
    for bench in glob.glob(os.path.join(criterion_dir, "**", "new", "benchmark.json"),
                           recursive=True):
        meta = json.load(open(bench, encoding="utf-8"))
        estimates = json.load(open(os.path.join(os.path.dirname(bench), "estimates.json"),
                                   encoding="utf-8"))
        out[f"{meta['group_id']}/{meta['function_id']}"] = estimates["median"]["point_estimate"]
    return out


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    about = provenance.about()  # before the run: the load the benchmark starts under
    criterion_dir = os.path.join(docblocks.target_dir(), "criterion")
    # Only this run's estimates are read.
    for old in glob.glob(os.path.join(criterion_dir, "*")):
        if os.path.basename(old) in ("sync", "async"):
            subprocess.run(["rm", "-rf", old], check=True)
    subprocess.run(["cargo", "bench", "--bench", "macro_overhead", "--", *extra], cwd=ROOT,
                   check=True)
    ns = medians(criterion_dir)
    missing = [name for _, a, b in ROWS for name in (a, b) if name not in ns]
    if missing or CLOCK not in ns:
        sys.exit(f"criterion gave no estimate for {missing or [CLOCK]} in {criterion_dir}")
    run = "`cargo bench --bench macro_overhead`" + (f" (`-- {' '.join(extra)}`)" if extra else "")
    lines = [
        f"Medians of criterion's samples from {run}, run {about}.",
        "",
        "| variant | without | with `#[retryable]` | added |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, without, with_ in ROWS:
        lines.append(f"| {name} | {ns[without]:.1f} ns | {ns[with_]:.1f} ns "
                     f"| {ns[with_] - ns[without]:.0f} ns |")
    lines += [
        "",
        f"For scale, one read of the clock (`Instant::now()`, which a call makes once, before "
        f"its first attempt, to start its deadline) took {ns[CLOCK]:.1f} ns in the same run "
        f"(`{CLOCK}`).",
    ]
    text = provenance.wrap("\n".join(lines)) + "\n"
    print(text, end="")
    if "--bless" in args:
        os.makedirs(os.path.dirname(RESULT), exist_ok=True)
        with open(RESULT, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{docblocks.shown(RESULT)}: written")
        written = docblocks.write(BLOCK, text)
        print(f"{docblocks.shown(written)}: block {BLOCK} written" if written else
              f"block {BLOCK} unchanged")


if __name__ == "__main__":
    main()
