"""Retrieval quality on LoCoMo (development split): mnemonite's default search vs plain BM25 and dense.

    python bench/locomo.py [--data ../shared/bench/locomo/locomo-dev.json] [--routing-only] [--conversations IDS]

Every dialog turn is stored as one episode, text ``[<session date>] <speaker>: <text>``,
source node = the speaker, one user per conversation, one session per LoCoMo session.
For each question of categories 1-4 the question's conversation is searched, and the
ranks of its evidence turns give recall@1/5/10/20 (fraction of evidence turns in the top
k) and MRR (reciprocal rank of the first evidence turn, 0 beyond rank 100). Baselines in
the same run over the same turns: plain BM25 (lowercase ``[a-z0-9]+`` tokens, stop
words removed, no stemming, k1 = 1.2, b = 0.75), plain dense cosine with the same
embedding model, and equal-weight RRF of the two. Ablations switch off one part of the
default at a time. Nothing reads the answers; every question uses the same settings.

Two rows measure search while the indexer lags, each on a memory of its own: "searched right
after ingest" stores every conversation and searches at once with the defaults (no ``index()``
call: the background indexer, the scope's pending records embedded inline and the full-text
candidates' vectors are what a user gets); "half the records embedded" embeds every other turn
of each conversation and searches with inline embedding off, so records without a vector are
ranked by the fusion alone. "vectors and queries by the model as shipped" stores and searches the
turns with ``OnnxEmbedder(precision="model")`` instead of the default int8 copy, on a memory of its own.
The concept-graph rows feed each LoCoMo session's turns (their text, without the date and speaker
prefix) to ``mem.concepts.observe_many`` as message events under an agent of the conversation, flush
at the session's end, then search with ``mem.retrieve``: "router" routes each question by the spec's
keywords (``route="auto"``), "concept graph first" takes the GRAPH route for every question; the
graph is built once at the spec's shift threshold 0.30 and once at 0.60 (with a stronger graph
boost). The concept graph's own figures (nodes, schematic nodes, versions, shifts per session,
consolidation time) are printed after the table. "multi-hop route" takes the MULTIHOP route for every question
(a second search from the best first hit's distinctive words, fused under a guard); the router sends there the
questions that ask for a set of things. ``--routing-only`` runs only the default and the routed rows (built on the
0.30 graph), ``--conversations conv-26,conv-30`` a subset, for shorter runs.
LoCoMo is CC BY-NC 4.0, used here as test data only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.concepts import ConceptConfig, ConceptMemory, EventNode
from mnemonite.embedding import OnnxEmbedder
from mnemonite.models.search import SearchFilter
from mnemonite.search import SearchOptions
from mnemonite.search.fusion import rrf_fusion
from mnemonite.search.query import STOP_WORDS

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
EVIDENCE = re.compile(r"D(\d+):(\d+)")
DEPTH = 100
# Routed rows: (route, graph variant). Variant "" is the spec's shift threshold 0.30; "-t0.6" is 0.60 and boost 0.3.
ROUTED = {
    "router: route auto (spec keywords; graph at shift 0.30)": ("auto", ""),
    "concept graph first: GRAPH route for every question (shift 0.30)": ("graph", ""),
    "concept graph first: shift 0.60, graph boost 0.3": ("graph", "-t0.6"),
    "multi-hop route for every question (second hop from the best hit, guard 3)": ("multihop", ""),
}
VARIANTS = {"": (0.30, None), "-t0.6": (0.60, 0.3)}


def session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turns_of(sample: dict[str, Any]) -> list[Episode]:
    conversation, episodes, n = sample["conversation"], [], 1
    while f"session_{n}" in conversation:
        date_text = conversation[f"session_{n}_date_time"]
        start = session_time(date_text)
        for i, turn in enumerate(conversation[f"session_{n}"]):
            text = turn["text"] + (f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else "")
            episodes.append(
                Episode(
                    id=f"{sample['sample_id']}/{turn['dia_id']}",
                    content=f"[{date_text}] {turn['speaker']}: {text}",
                    timestamp=start + timedelta(seconds=i),
                    source_node=turn["speaker"],
                    session=f"session_{n}",
                    user=sample["sample_id"],
                    agent="locomo",
                )
            )
        n += 1
    return episodes


class Evidence:
    """Evidence ids parsed robustly: several ids in one string, malformed and dangling ids counted."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def parse(self, raw: Sequence[str], known: set[str]) -> set[str]:
        found: set[str] = set()
        for item in raw:
            ids = [f"D{a}:{b}" for a, b in EVIDENCE.findall(item)]
            self.counts["evidence strings"] += 1
            if len(ids) > 1:
                self.counts["strings holding several ids"] += 1
            if not ids or not re.fullmatch(r"D\d+:\d+(\s*;\s*D\d+:\d+)*", item.strip()):
                self.counts["malformed strings"] += 1
            for evidence_id in ids:
                if evidence_id in known:
                    found.add(evidence_id)
                else:
                    self.counts["ids not in the conversation"] += 1
        return found


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP_WORDS]


class PlainBM25:
    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(tokens(d)) for d in docs]
        self.lengths = np.array([sum(d.values()) for d in self.docs], dtype=np.float64)
        self.avg = float(self.lengths.mean())
        df: Counter[str] = Counter(t for d in self.docs for t in d)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def rank(self, query: str) -> list[int]:
        scores = np.zeros(len(self.docs))
        for term in set(tokens(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            tf = np.array([d.get(term, 0) for d in self.docs], dtype=np.float64)
            scores += idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * self.lengths / self.avg))
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order[:DEPTH] if scores[i] > 0]


def metrics(ranked: Sequence[str], evidence: set[str]) -> list[float]:
    recalls = [len(evidence & set(ranked[:k])) / len(evidence) for k in (1, 5, 10, 20)]
    first = next((rank for rank, item in enumerate(ranked[:DEPTH], start=1) if item in evidence), None)
    return [*recalls, 1 / first if first else 0.0]


Method = Callable[[str, str, int], "asyncio.Future[list[str]] | Any"]


async def evaluate(
    data: list[dict[str, Any]], routing_only: bool = False, rows: list[str] | None = None
) -> tuple[dict[str, dict[int, list[list[float]]]], Evidence, dict[str, float]]:
    evidence = Evidence()
    results: dict[str, dict[int, list[list[float]]]] = {}
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        mem = await Memory.open(config=MemoryConfig(url=f"sqlite:///{Path(tmp) / 'locomo.db'}"))
        started = time.perf_counter()
        conversations = []
        for sample in data:
            episodes = turns_of(sample)
            await mem.episodic.put_many(episodes)
            conversations.append((sample, episodes))
        embedded = await mem.index()
        timings["store + embed turns (s)"] = time.perf_counter() - started
        timings["turns"] = embedded
        methods = _methods()
        variants = list(VARIANTS)
        if rows:  # only these rows of plain search: no graphs, no routes, no lagging memories
            methods = {name: methods[name] for name in rows}
            variants = []
            ROUTED.clear()
        elif routing_only:  # the default beside the routed rows that need only the spec's graph
            methods = {"mnemonite default": methods["mnemonite default"]}
            variants = [""]
            for name in [n for n, (_, v) in ROUTED.items() if v not in variants]:
                del ROUTED[name]
        graphs = {variant: await _concept_graphs(mem, data, variant) for variant in variants}
        for sample, episodes in conversations:
            await _conversation(mem, sample, episodes, methods, evidence, results, timings, routed=True)
        await mem.close()
    GRAPH_STATS.update(graphs)
    if not routing_only and not rows:
        await _lagging(data, results, timings)
        await _shipped(data, results, timings)
    return results, evidence, timings


GRAPH_STATS: dict[str, dict[str, Any]] = {}
ROUTES: dict[str, Counter[str]] = {}


def graph_agent(sample: dict[str, Any], variant: str) -> str:
    return f"locomo-{sample['sample_id']}{variant}"


async def _concept_graphs(mem: Memory, data: list[dict[str, Any]], variant: str) -> dict[str, Any]:
    """Every session's turns observed as message events, flushed at the session's end; the graph's figures."""
    threshold, _ = VARIANTS[variant]
    concepts = ConceptMemory(mem._store, mem._engine.active, ConceptConfig(shift_threshold=threshold))
    stats: dict[str, Any] = {"shift threshold": threshold, "sessions": 0, "shifts": 0, "seconds": 0.0, "per": {}}
    for sample in data:
        conversation, n = sample["conversation"], 1
        agent = graph_agent(sample, variant)
        started = time.perf_counter()
        while f"session_{n}" in conversation:
            scope = Scope(user=sample["sample_id"], session=f"session_{n}", agent=agent)
            events = [
                EventNode(text=turn["text"], record_id=f"{sample['sample_id']}/{turn['dia_id']}")
                for turn in conversation[f"session_{n}"]
            ]
            shifts = await concepts.observe_many(scope, events)
            await concepts.flush(scope)
            stats["shifts"] += sum(shift is not None for shift in shifts)
            stats["sessions"] += 1
            n += 1
        stats["seconds"] += time.perf_counter() - started
        graph = await concepts.load_graph(Scope(user=sample["sample_id"], agent=agent))
        schematic = sum(node.category == "schematic" for node in graph.nodes.values())
        stats["per"][sample["sample_id"]] = (len(graph.nodes), schematic, len(graph.edges), graph.version)
    return stats


async def _routed(mem: Memory, sample: dict[str, Any], question: str, name: str, prefix: str) -> list[str]:
    route, variant = ROUTED[name]
    _, boost = VARIANTS[variant]
    default_boost = mem._router.boost
    mem._router.boost = boost if boost is not None else default_boost
    try:
        found = await mem.retrieve(
            Scope(user=sample["sample_id"]), question, DEPTH, route=route, agent=graph_agent(sample, variant)
        )
    finally:
        mem._router.boost = default_boost
    ROUTES.setdefault(name, Counter())[f"{found.route}{' (fell back)' if found.fell_back else ''}"] += 1
    return [h.record.id.removeprefix(prefix) for h in found.hits]


async def _lagging(
    data: list[dict[str, Any]], results: dict[str, dict[int, list[list[float]]]], timings: dict[str, float]
) -> None:
    """The rows searched while records wait for their vectors (see the module docstring)."""
    default = SearchOptions()
    no_inline = default.model_copy(update={"embed_pending": 0, "embed_head": 0})
    for name, half, options in (
        ("lagging: searched right after ingest, no index() call", False, default),
        ("lagging: half the records embedded, no inline embedding", True, no_inline),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'lagging.db'}"
            mem = await Memory.open(config=MemoryConfig(url=url, index_in_background=not half, index_on_close=False))
            conversations = [(sample, turns_of(sample)) for sample in data]
            for _, episodes in conversations:
                await mem.episodic.put_many(episodes)
            if half:
                await _embed_every_other(mem, [sample["sample_id"] for sample in data])
            started = time.perf_counter()
            for sample, episodes in conversations:
                await _conversation(mem, sample, episodes, {name: options}, Evidence(), results, timings)
            timings[f"{name} (s)"] = time.perf_counter() - started
            await mem.close()


SHIPPED = "- vectors and queries by the model as shipped, not its int8 copy"


async def _shipped(
    data: list[dict[str, Any]], results: dict[str, dict[int, list[list[float]]]], timings: dict[str, float]
) -> None:
    """The default search over a store whose vectors (and queries) come from the model as shipped."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'shipped.db'}"
        mem = await Memory.open(config=MemoryConfig(url=url), embedder=OnnxEmbedder(precision="model"))
        started = time.perf_counter()
        conversations = [(sample, turns_of(sample)) for sample in data]
        for _, episodes in conversations:
            await mem.episodic.put_many(episodes)
        await mem.index()
        timings["store + embed turns, model as shipped (s)"] = time.perf_counter() - started
        for sample, episodes in conversations:
            await _conversation(mem, sample, episodes, {SHIPPED: SearchOptions()}, Evidence(), results, timings)
        await mem.close()


async def _embed_every_other(mem: Memory, users: list[str]) -> None:
    """Store the vectors of every other turn of each conversation, as an indexer halfway through would."""
    embedder = mem._engine._readers[0]
    for user in users:
        rows = await mem._store.unembedded("episode", [embedder.model], SearchFilter(scope=Scope(user=user)), 10**6)
        half = rows[::2]
        matrix = await embedder.embed_batch([text for _, text in half])
        await mem._store.save_vectors("episode", embedder.model, [seq for seq, _ in half], matrix, upto=0)


def _methods() -> dict[str, SearchOptions | None]:
    default = SearchOptions()
    return {
        "mnemonite default": default,
        "+ newer first for turns too": default.model_copy(update={"newer_first": "all"}),
        "- without source boost": default.model_copy(update={"source_boost": 0.0}),
        "- without neighbour spread": default.model_copy(update={"neighbour_weight": 0.0}),
        "- without query feedback": default.model_copy(update={"feedback": 0.0}),
        "- without the episodes' prior (specificity, asking)": default.model_copy(
            update={"specificity_weight": 0.0, "asking_penalty": 0.0}
        ),
        "- without the asking penalty": default.model_copy(update={"asking_penalty": 0.0}),
        "- RRF k=60 (2:1) instead of linear": default.model_copy(update={"fusion": "rrf"}),
        "- full text only (BM25, porter)": default.model_copy(update={"use_vectors": False}),
        "- SQLite FTS5 queries instead of the in-memory BM25": default.model_copy(update={"lexical": "fts5"}),
        "- exact vectors: never the HNSW index": default.model_copy(update={"ann_min_rows": None}),
        "+ HNSW index for every user (approximate)": default.model_copy(update={"ann_min_rows": 1}),
        "- vectors only": default.model_copy(update={"use_fulltext": False}),
        "+ salience weight 0.3": default.model_copy(update={"salience_weight": 0.3}),
        "baseline: plain BM25": None,
        "baseline: plain dense cosine": None,
        "baseline: plain RRF (BM25 + dense, k=60)": None,
    }


async def _conversation(
    mem: Memory,
    sample: dict[str, Any],
    episodes: list[Episode],
    methods: dict[str, SearchOptions | None],
    evidence: Evidence,
    results: dict[str, dict[int, list[list[float]]]],
    timings: dict[str, float],
    *,
    routed: bool = False,
) -> None:
    prefix = f"{sample['sample_id']}/"
    ids = [e.id.removeprefix(prefix) for e in episodes]
    known = set(ids)
    bm25 = PlainBM25([e.content for e in episodes])
    embedder = mem._engine._readers[0]  # the same model mnemonite stored, for the dense baseline
    matrix = (
        await embedder.embed_batch([e.content for e in episodes]) if any(v is None for v in methods.values()) else None
    )
    scope = Scope(user=sample["sample_id"])
    for qa in sample["qa"]:
        if qa["category"] not in CATEGORIES:
            continue
        wanted = evidence.parse(qa.get("evidence", []), known)
        if not wanted:
            evidence.counts["questions without usable evidence (skipped)"] += 1
            continue
        evidence.counts["questions scored"] += 1
        question = qa["question"]
        lexical = bm25.rank(question)
        dense = (
            [] if matrix is None else [int(i) for i in np.argsort(-(matrix @ await embedder.embed(question)))[:DEPTH]]
        )
        for name, options in methods.items():
            if options is not None:
                started = time.perf_counter()
                hits = await mem.episodic.search(scope, question, k=DEPTH, options=options)
                timings[name] = timings.get(name, 0.0) + time.perf_counter() - started
                ranked = [h.record.id.removeprefix(prefix) for h in hits]
            elif name.endswith("BM25"):
                ranked = [ids[i] for i in lexical]
            elif name.endswith("cosine"):
                ranked = [ids[i] for i in dense]
            else:
                fused = rrf_fusion([lexical, dense], [1.0, 1.0], 60)
                ranked = [ids[i] for i in sorted(fused, key=lambda i: -fused[i])]
            results.setdefault(name, {}).setdefault(qa["category"], []).append(metrics(ranked, wanted))
        if routed:  # the main memory's run (the lagging rows have memories of their own)
            for name in ROUTED:
                started = time.perf_counter()
                ranked = await _routed(mem, sample, question, name, prefix)
                timings[name] = timings.get(name, 0.0) + time.perf_counter() - started
                results.setdefault(name, {}).setdefault(qa["category"], []).append(metrics(ranked, wanted))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--conversations", help="comma-separated sample ids (e.g. conv-26,conv-30); default: all")
    parser.add_argument(
        "--routing-only", action="store_true", help="only the default and the routed rows (no ablations or baselines)"
    )
    parser.add_argument("--rows", help="comma-separated rows of plain search only (e.g. 'mnemonite default')")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    if args.conversations:
        wanted = set(args.conversations.split(","))
        data = [sample for sample in data if sample["sample_id"] in wanted]
    rows = args.rows.split(",") if args.rows else None
    results, evidence, timings = asyncio.run(evaluate(data, args.routing_only, rows))
    print(f"LoCoMo {args.data.name}: {len(data)} conversations, {int(timings['turns'])} turns embedded")
    print(
        "\n| method | R@1 | R@5 | R@10 | R@20 | MRR | "
        + " | ".join(f"c{c} {n} R@10 / MRR" for c, n in CATEGORIES.items())
        + " |"
    )
    print("|---" * (6 + len(CATEGORIES)) + "|")
    for name, by_category in results.items():
        rows = [m for ms in by_category.values() for m in ms]
        overall = np.mean(rows, axis=0)
        per = [np.mean(by_category[c], axis=0) if c in by_category else None for c in CATEGORIES]
        cells = [f"{v:.3f}" for v in overall] + [f"{p[2]:.3f} / {p[4]:.3f}" if p is not None else "-" for p in per]
        print(f"| {name} | " + " | ".join(cells) + " |")
    counts = {c: len(results["mnemonite default"].get(c, [])) for c in CATEGORIES}
    print(f"\nquestions per category: {counts}")
    print("evidence parsing: " + ", ".join(f"{k}: {v}" for k, v in sorted(evidence.counts.items())))
    scored = evidence.counts["questions scored"]
    latency = {k: f"{1000 * v / scored:.1f} ms" for k, v in timings.items() if k in results}
    print(f"store + embed: {timings['store + embed turns (s)']:.1f} s; mean search latency (k=100): {latency}")
    if "store + embed turns, model as shipped (s)" in timings:
        print(f"store + embed with the model as shipped: {timings['store + embed turns, model as shipped (s)']:.1f} s")
    _compare(results, "mnemonite default", SHIPPED, "target: within 0.005 of it")
    _compare(results, "lagging: searched right after ingest, no index() call", "mnemonite default", "target >= 0.98")
    _compare(results, "lagging: half the records embedded, no inline embedding", "- full text only (BM25, porter)",
             "target >= 1.00")  # fmt: skip
    for name in ROUTED:
        _compare(results, name, "mnemonite default", "target >= 1.00 overall")
    _concept_report()


def _concept_report() -> None:
    """The concept graphs' figures and the routes the router took (nothing when none was built: ``--rows``)."""
    if not GRAPH_STATS:
        return
    print("\n| concept graph | shift threshold | nodes | schematic | edges | versions | shifts / session |"
          " consolidation (s) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for variant, stats in GRAPH_STATS.items():
        per = stats["per"].values()
        nodes, schematic, edges, versions = (sum(p[i] for p in per) for i in range(4))
        shifts = stats["shifts"] / max(stats["sessions"], 1)
        print(f"| all conversations{variant or ''} | {stats['shift threshold']:.2f} | {nodes} | {schematic} | {edges} |"
              f" {versions} | {shifts:.1f} | {stats['seconds']:.1f} |")  # fmt: skip
    for name, routes in ROUTES.items():
        print(f"routes of {name!r}: " + ", ".join(f"{r}: {n}" for r, n in sorted(routes.items())))


def _compare(results: dict[str, dict[int, list[list[float]]]], name: str, baseline: str, target: str) -> None:
    """One row's R@10 and MRR as ratios of another row's, measured in the same run."""
    if name not in results or baseline not in results:
        return
    mine, base = ([m for ms in results[n].values() for m in ms] for n in (name, baseline))
    r10, mrr = (float(np.mean([m[i] for m in mine]) / np.mean([m[i] for m in base])) for i in (2, 4))
    print(f"{name} / {baseline}: R@10 x{r10:.3f}, MRR x{mrr:.3f} ({target})")


if __name__ == "__main__":
    main()
