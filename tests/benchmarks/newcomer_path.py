"""A newcomer's path, timed: a fresh clone, the README's quick-start commands as written, an
empty Numba cache (a fresh clone has none: the cache lives in the clone's
``src/dprl/__pycache__/numba``), and the first figure the README points to checked on disk.

    python tests/benchmarks/newcomer_path.py [--repo .] [--out paper_figures/benchmarks/newcomer.json]

Clones the repository's checked-out commit into a temporary directory, runs the first
```bash block under README.md's "## Quick start" in one shell (``set -e``: the virtual
environment it activates stays active), with a clean environment (no ``PYTHONPATH``,
``VIRTUAL_ENV``, ``NUMBA_CACHE_DIR``; pip without its download cache), timing each command, and writes the times, the
commit and the machine as JSON (atomically). Exits non-zero when a command fails or the
named figure is missing. Run it on an otherwise idle machine: it measures wall time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# the figure a newcomer looks at first (README's quick start names it), relative to the clone
FIRST_FIGURE = "results/smoke/figures/tabular_regret_loglog.png"


def quick_start_commands(readme: str) -> list[str]:
    """The commands of the first ```bash block under ``## Quick start`` (comments dropped)."""
    section = readme.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    if block is None:
        raise SystemExit("README.md: no ```bash block under '## Quick start'")
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def run(repo: Path, workdir: Path, keep_report: bool = True) -> dict:
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    clone = workdir / "dprl"
    t0 = time.perf_counter()
    subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True)
    clone_s = time.perf_counter() - t0
    commands = quick_start_commands((clone / "README.md").read_text())
    numba_cache = clone / "src" / "dprl" / "__pycache__" / "numba"
    assert not numba_cache.exists(), "a fresh clone holds no Numba cache"
    marks = workdir / "marks.txt"
    script = ["set -e"]
    for i, c in enumerate(commands):
        script.append(f"echo {i} start $(date +%s.%N) >> {shlex.quote(str(marks))}")
        script.append(c)
        script.append(f"echo {i} end $(date +%s.%N) >> {shlex.quote(str(marks))}")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NUMBA_CACHE_DIR",
                                                             "_DPRL_NUMBA_CACHE_DIR", "_DPRL_NUMBA_CACHE_BASE")}
    env["PIP_NO_CACHE_DIR"] = "1"  # a newcomer's pip has downloaded nothing yet
    log = workdir / "newcomer.log"
    with log.open("w") as out:
        proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT)
    times: dict[int, dict[str, float]] = {}
    for line in marks.read_text().splitlines() if marks.exists() else []:
        i, what, t = line.split()
        times.setdefault(int(i), {})[what] = float(t)
    steps = [{"command": c, "seconds": round(times[i]["end"] - times[i]["start"], 1) if "end" in times.get(i, {}) else None}
             for i, c in enumerate(commands)]
    figure = clone / FIRST_FIGURE
    return {
        "commit": commit, "date_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs", "clone_s": round(clone_s, 1),
        "steps": steps, "total_s": round(sum(s["seconds"] or 0.0 for s in steps), 1), "returncode": proc.returncode,
        "numba_cache_empty_at_start": True, "pip_cache": False, "first_figure": FIRST_FIGURE, "first_figure_exists": figure.is_file(),
        "log_tail": log.read_text().splitlines()[-5:],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=str(REPO))
    ap.add_argument("--out", default=str(REPO / "paper_figures" / "benchmarks" / "newcomer.json"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dprl-newcomer-") as tmp:
        record = run(Path(args.repo), Path(tmp))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_suffix(".json.part")
    part.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(part, out)
    for s in record["steps"]:
        print(f"{s['seconds']!s:>8} s  {s['command']}")
    print(f"total {record['total_s']} s at {record['commit'][:7]}; {record['first_figure']}: "
          f"{'present' if record['first_figure_exists'] else 'MISSING'}")
    return 0 if record["returncode"] == 0 and record["first_figure_exists"] else 1


if __name__ == "__main__":
    sys.exit(main())
