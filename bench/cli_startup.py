"""Start-up time of the command line: ``mnemonite --help`` against a bare ``python -c pass`` in the same run.

    python bench/cli_startup.py [--runs 21]

Each command runs in a fresh process ``--runs`` times, alternating with the baseline so both see the
same machine load; the table shows the median and the best wall time, and the CLI's median minus the
baseline's (what importing the CLI costs). The budget is 0.3 s for ``--help``: the CLI imports the
model runtime, numpy and the pydantic models only inside the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "mnemonite --help": [sys.executable, "-c", "from mnemonite.cli import main; main()", "--help"],
    "mnemonite --version": [sys.executable, "-c", "from mnemonite.cli import main; main()", "--version"],
}


def wall(command: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="fresh processes per command")
    runs = parser.parse_args().runs
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():
        wall(command)  # warm the file cache once
    for _ in range(runs):
        for name, command in COMMANDS.items():
            times[name].append(wall(command))
    base = statistics.median(times["python -c pass"])
    print(f"| command | median s | best s | median - baseline s | x baseline |  ({runs} runs each)")
    print("|---|---|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| `{name}` | {median:.3f} | {min(values):.3f} | {median - base:.3f} | {median / base:.1f} |")


if __name__ == "__main__":
    main()
