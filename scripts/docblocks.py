"""Generated blocks of the documentation, and the release binary the measuring scripts run.

A block is the text between `<!-- NAME:start -->` and `<!-- NAME:end -->`, in README.md or in
any docs/**/*.md file: it is found by its markers, wherever it is (a block may move from the
README to a page of docs/). Its body is a line break and then the generated text, which ends
with a line break. The tests in tests/ find their blocks the same way (tests/blocks/mod.rs).

Imported by scripts/accuracy, scripts/judged and the benchmark scripts of benches/.
"""
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shown(path):
    return os.path.relpath(path, ROOT)


def doc_files():
    """README.md, CONTRIBUTING.md, then every docs/**/*.md, sorted."""
    files = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CONTRIBUTING.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return [f for f in files if os.path.isfile(f)]


def find(name):
    """(path, text, start, end) of block NAME: the file that holds it, its text, and the range of
    the body. Exits when no file or more than one holds the block."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    hits = []
    for path in doc_files():
        text = open(path, encoding="utf-8").read()
        if start not in text:
            continue
        a = text.index(start) + len(start)
        b = text.find(end, a)
        if b < 0:
            sys.exit(f"{shown(path)}: {start} without {end}")
        hits.append((path, text, a, b))
    if not hits:
        sys.exit(f"no {start} ... {end} block in README.md, CONTRIBUTING.md or docs/**/*.md")
    if len(hits) > 1:
        sys.exit(f"{start} is in several files: " + ", ".join(shown(h[0]) for h in hits))
    return hits[0]


def current(name):
    """The generated text now in block NAME (without the line break after the start marker)."""
    _, text, a, b = find(name)
    return text[a:b].removeprefix("\n")


def write(name, generated):
    """Writes `generated` (ending with a line break) into block NAME; returns the file written,
    or None when the block already held it."""
    path, text, a, b = find(name)
    new = text[:a] + "\n" + generated + text[b:]
    if new == text:
        return None
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return path


def release_binary(name="retry-audit", extra=()):
    """Builds `name` (a bin, or an example with extra=("--example", NAME)) in release and returns
    the executable cargo reports for it: the path of the build just made, wherever the target
    directory is (CARGO_TARGET_DIR, a configured target-dir)."""
    target = list(extra) or ["--bin", name]
    build = subprocess.run(["cargo", "build", "--release", "--message-format=json-render-diagnostics",
                            *target], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if build.returncode != 0:
        sys.exit(f"cargo build --release {' '.join(target)} failed")
    found = None
    for line in build.stdout.splitlines():
        if not line.startswith("{"):
            continue
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") and \
                message["target"]["name"] == name:
            found = message["executable"]
    if not found:
        sys.exit(f"cargo reported no executable for {name}")
    return found


def target_dir():
    """Cargo's target directory for this workspace (honours CARGO_TARGET_DIR)."""
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout
    return json.loads(meta)["target_directory"]
