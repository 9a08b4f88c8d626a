#!/usr/bin/env python3
"""Runs the commands of the scan benchmark (benches/scan.sh) and prints one table.

Each command is run once to warm the page cache, then RUNS rounds: each round runs every command
once, starting with a different one each round, so that a machine getting slower or faster
during the benchmark (a shared host) weighs on every tool alike rather than on whichever ran
last. Every run is timed on its own with os.wait4, which gives that child's CPU time (user +
system) and peak resident memory. The table shows medians of wall and CPU time, the largest peak
memory, and each tool's ratio to the first row (retry-audit); below it, the median of the
per-round ratios of the first row to each other tool (runs of one round ran side by side in
time, so that figure is the least disturbed by drift). Standard output of the tools is
discarded; a tool that fails stops the benchmark with its standard error.

usage: measure.py [--bless] [--about TEXT]... [--fact TEXT]... RUNS NAME=COMMAND...
  COMMAND is split on spaces; paths must not hold any.
  --about TEXT  a sentence on what was run (the corpus, the threads), said in the output after
                the date, the commit and the machine (benches/scan.sh passes them)
  --fact TEXT   a line another program printed about the same corpus, listed after the table
                (benches/scan.sh passes retry-audit --stats and the pre-filter's corpus test)
  --bless       write the output to benches/results/scan.md, and the documentation's block
                `bench` (README.md or docs/**/*.md) from that file; tests/generated_docs.rs
                checks that the block is the file
"""

import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import docblocks  # noqa: E402
import provenance  # noqa: E402

RESULT = os.path.join(docblocks.ROOT, "benches", "results", "scan.md")
BLOCK = "bench"


def run_once(argv):
    """(wall seconds, cpu seconds, peak RSS in MiB, stdout) of one run of argv."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Read the pipes while the child runs (a full pipe would block it), then reap it with
    # wait4 for its own resource usage.
    out, err = child.stdout.read(), child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    # retry-audit exits 1 when it finds something; anything above is a failure.
    if child.returncode not in (0, 1):
        sys.exit(f"{argv[0]} failed with status {child.returncode}:\n{err.decode(errors='replace')}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, out, err


def main():
    args = sys.argv[1:]
    bless, about, facts = False, [], []
    while args and args[0].startswith("--"):
        option = args.pop(0)
        if option == "--bless":
            bless = True
        elif option == "--about":
            about.append(args.pop(0))
        elif option == "--fact":
            facts.append(args.pop(0))
        else:
            sys.exit(f"unknown option {option}")
    runs = int(args[0])
    tools = []
    for spec in args[1:]:
        name, _, command = spec.partition("=")
        tools.append((name, command.split()))
    when = provenance.about()  # before the runs: the load they start under

    warm = []
    for _, argv in tools:
        warm.append(run_once(argv))  # warm-up: file cache, lazy loading
    walls = [[] for _ in tools]
    cpus = [[] for _ in tools]
    peaks = [[] for _ in tools]
    for r in range(runs):
        for k in range(len(tools)):
            i = (r + k) % len(tools)
            wall, cpu, peak, _, _ = run_once(tools[i][1])
            walls[i].append(wall)
            cpus[i].append(cpu)
            peaks[i].append(peak)

    results = []
    for i, (name, _) in enumerate(tools):
        _, _, _, out, err = warm[i]
        # What the tool said it did: its last line on standard error (retry-audit's summary),
        # else its one line of output (the floor's count), else the number of lines it printed
        # (ast-grep's --json=stream prints one match per line).
        said = err.decode(errors="replace").strip().splitlines()
        lines = out.count(b"\n")
        if not said and lines == 1:
            said = out.decode(errors="replace").strip().splitlines()
        summary = said[-1] if said else f"{lines} matches"
        results.append((name, statistics.median(walls[i]), statistics.median(cpus[i]),
                        max(peaks[i]), min(walls[i]), max(walls[i]), summary))
        print(f"  {name}: walls {', '.join(f'{w:.2f}' for w in walls[i])} s", file=sys.stderr)

    base_name, base_wall, base_cpu, base_peak = results[0][0], results[0][1], results[0][2], \
        results[0][3]
    text = [f"One run of `benches/scan.sh` {when}. " + " ".join(about), ""]
    text.append(f"| tool | wall (median of {runs}) | range | CPU (user+sys) | peak memory "
                f"| {base_name} ÷ tool (wall) | {base_name} ÷ tool (CPU) |")
    text.append("|---|---:|---:|---:|---:|---:|---:|")
    for name, wall, cpu, peak, lo, hi, _ in results:
        text.append(f"| {name} | {wall:.2f} s | {lo:.2f}–{hi:.2f} s | {cpu:.2f} s | {peak:.0f} MiB "
                    f"| {base_wall / wall:.2f} | {base_cpu / cpu:.2f} |")
    text.append("")
    rounds = []
    for i, (name, *_) in enumerate(results[1:], start=1):
        per_round = [a / b for a, b in zip(walls[0], walls[i])]
        rounds.append(statistics.median(per_round))
        text.append(f"- {base_name} ÷ {name}, wall, round by round: "
                    f"{', '.join(f'{x:.2f}' for x in per_round)} (median {rounds[-1]:.2f})")
    text.append("")
    for name, *_, said in results:
        text.append(f"- {name}: {said}")
    text.append("")
    if facts:
        text += [f"- {fact}" for fact in facts] + [""]
    # The table again in words, and nothing it does not show.
    compared = [f"{base_wall / wall:.2f} times the wall time of {name} ({ratio:.2f} round by round) "
                f"and {base_cpu / cpu:.2f} times its CPU time, with a peak memory of "
                f"{base_peak:.0f} MiB against its {peak:.0f} MiB"
                for (name, wall, cpu, peak, *_), ratio in zip(results[1:], rounds)]
    text.append(f"In this run {base_name} took " + "; ".join(compared) + ". Only ratios taken "
                "in one run compare: a shared machine's speed drifts between runs, and the range "
                "column shows the spread within this one.")
    output = provenance.wrap("\n".join(text)) + "\n"
    print(output, end="")
    if bless:
        os.makedirs(os.path.dirname(RESULT), exist_ok=True)
        with open(RESULT, "w", encoding="utf-8") as f:
            f.write(output)
        print(f"{docblocks.shown(RESULT)}: written", file=sys.stderr)
        written = docblocks.write(BLOCK, output)
        print(f"{docblocks.shown(written)}: block {BLOCK} written" if written else
              f"block {BLOCK} unchanged", file=sys.stderr)


if __name__ == "__main__":
    main()
