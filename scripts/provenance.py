"""Where and when a measurement was taken, for the blessed outputs of the benchmarks
(benches/results/): the date, the commit of the build measured, the machine and its load.
"""
import datetime
import os
import platform
import subprocess
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


# What does not go into the programs measured: documentation, tests, scripts, CI, outputs.
NOT_BUILT = [":!*.md", ":!docs", ":!tests", ":!scripts", ":!.ci", ":!benches/*.py",
             ":!benches/*.sh", ":!benches/results"]


def commit():
    """The commit checked out, and whether the files that are built differ from it."""
    head = git("rev-parse", "--short=10", "HEAD") or "unknown"
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", ".", *NOT_BUILT],
                           cwd=ROOT).returncode != 0
    return head + (" with uncommitted changes to what is built" if dirty else "")


def cpu():
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def rustc():
    return subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()


def about():
    """`on DATE at commit X on MACHINE (...)`: said in each blessed output."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"on {datetime.date.today().isoformat()} at commit {commit()} on {platform.system()} "
            f"{platform.machine()}, {cpu()}, {os.cpu_count()} cores (load average {load:.1f} "
            f"when it started), {rustc()}")


def wrap(text, width=100):
    """Wraps the prose paragraphs of `text` at `width`; tables, lists and headings are kept."""
    out = []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith(("|", "-", "#", "```", "*")):
            out.append(paragraph)
        else:
            out.append("\n".join(textwrap.wrap(" ".join(paragraph.split("\n")), width=width,
                                               break_on_hyphens=False, break_long_words=False)))
    return "\n\n".join(out)
