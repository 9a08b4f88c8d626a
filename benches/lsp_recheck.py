#!/usr/bin/env python3
"""How long the language server takes to re-check an edited file.

usage: benches/lsp_recheck.py FILE [RUNS]

Starts `retry-audit lsp` (target/release, built first), opens FILE with its text from disk,
then RUNS times (default 30) sends a `didChange` with the whole text and a trailing comment
that differs each time, and measures the time from sending it to receiving the
`publishDiagnostics` for that version. Prints the median, the 90th percentile and the slowest,
in milliseconds, and how many diagnostics the last answer had.

Pick a file with retry sites in a large crate: a file whose sites look for definitions it does
not have makes the server read its crate (the worst case).
"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def send(proc, message):
    body = json.dumps(message).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit("the server closed its output")
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(proc.stdout.read(length))


def wait_diagnostics(proc, uri, version):
    while True:
        message = receive(proc)
        if message.get("method") != "textDocument/publishDiagnostics":
            continue
        params = message["params"]
        if params["uri"] == uri and params.get("version") in (version, None):
            return params["diagnostics"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "retry-audit"], cwd=ROOT,
                   check=True)
    binary = os.path.join(ROOT, "target", "release", "retry-audit")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    uri = "file://" + path
    proc = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"capabilities": {}, "processId": None, "rootUri": None}})
    while receive(proc).get("id") != 1:
        pass
    send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "rust", "version": 1,
                                            "text": text}}})
    wait_diagnostics(proc, uri, 1)
    times = []
    found = []
    for i in range(runs):
        version = i + 2
        changed = text + f"\n// edit {i}\n"
        started = time.perf_counter()
        send(proc, {"jsonrpc": "2.0", "method": "textDocument/didChange",
                    "params": {"textDocument": {"uri": uri, "version": version},
                               "contentChanges": [{"text": changed}]}})
        found = wait_diagnostics(proc, uri, version)
        times.append((time.perf_counter() - started) * 1000)
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
    send(proc, {"jsonrpc": "2.0", "method": "exit", "params": None})
    proc.wait(timeout=10)
    times.sort()
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    print(f"{path}: {len(text.splitlines())} lines, {runs} edits")
    print(f"re-check: median {statistics.median(times):.1f} ms, p90 {p90:.1f} ms, "
          f"slowest {times[-1]:.1f} ms; {len(found)} diagnostics")


if __name__ == "__main__":
    main()
