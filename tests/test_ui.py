"""The memory inspector in a real browser (Debian's Chromium driven by Playwright) against a real server
and a real SQLite database filled as the demo fills it, plus stored script, other tenants' ids, a key
revoked mid-session and a huge record. Screenshots go to build/ui-screenshots/."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page, StorageState, expect
from rich.console import Console

from live_server import running
from mnemonite import Scope, SyncMemory
from mnemonite.demo import run_demo
from mnemonite.models import Episode
from mnemonite.models.concepts import EventNode
from mnemonite.models.messages import Message
from mnemonite.server import create_app
from mnemonite.server.ui.access import REVOKED
from mnemonite.server.ui.render import when
from ui_browser import chromium

SHOTS = Path(__file__).resolve().parents[1] / "build" / "ui-screenshots"
SCRIPT = "<script>window.__pwned = 1</script>"
IMG = '"><img src=x onerror="window.__pwned = 1">'
HOSTILE = f"{SCRIPT}{IMG}"
SAM = Scope(user="sam", agent="assistant")
BOB = Scope(user="bob", agent="assistant")


@dataclass
class Site:
    url: str
    db: str
    keys: dict[str, str]
    ids: dict[str, str] = field(default_factory=dict)
    key_ids: dict[str, str] = field(default_factory=dict)

    def memory(self) -> SyncMemory:
        return SyncMemory.open(self.db)


def _hostile_and_extra(mem: SyncMemory, ids: dict[str, str]) -> None:
    """What the demo does not hold: script in every kind of stored text, a pending fact, a supersede a
    second apart, a concept graph, working blocks, session messages, a huge episode, another user."""
    mem.episodic.put(Episode(id="hostile-1", content=f"note {HOSTILE}"), user="sam", session="hostile",
                     agent="assistant")  # fmt: skip
    mem.episodic.put(Episode(id="huge-1", content="lorem ipsum " * 25_000 + "TAILMARK"), user="sam",
                     session="huge", agent="assistant")  # fmt: skip
    ids["hostile_fact"] = mem.semantic.remember(SAM, f"Sam pasted {HOSTILE} into the chat").id
    sam = mem.graph.entity(SAM, "Sam")
    mallory = mem.graph.create_entity(SAM, name=f"Mallory {IMG}", entity_type="person")
    mem.graph.relate(SAM, source=sam.id, target=mallory.id, relation="KNOWS")
    ids["sam_entity"] = sam.id
    mem.working.define(SAM, "notes", HOSTILE)
    mem.working.define(SAM, "persona", "Sam prefers short answers")
    mem.session.push(Scope(user="sam", session="chat-1", agent="assistant"),
                     Message("user", f"Can you remind me about the dentist? {SCRIPT}"))  # fmt: skip
    tea = mem.semantic.remember(SAM, "Sam drinks green tea every morning")
    time.sleep(1.2)  # the as-of control has one-second steps: the two beliefs must lie in different seconds
    ids["tea_old"], ids["tea_new"] = tea.id, mem.semantic.supersede(tea.id, "Sam drinks oolong tea every morning").id
    for name, text in (("approve", "The risotto Sam cooks uses mushrooms"),
                       ("reject", "The new Figma job Sam started pays well"),
                       ("read_only", "The mushroom risotto recipe Sam uses comes from Milan")):  # fmt: skip
        decision = mem.semantic.remember_with_decision(SAM, text)
        assert decision.kind == "pending", decision
        ids[name] = decision.fact_id
    mem.concepts.consolidate(Scope(user="sam", agent="assistant", session="cooking"),
                             [EventNode(text="Sam cooks risotto with mushrooms"),
                              EventNode(text="Sam loves Italian cooking and risotto")])  # fmt: skip
    mem.semantic.remember(BOB, "Bob keeps a secret diary")
    bob_pending = mem.semantic.remember_with_decision(BOB, "The diary Bob keeps is blue")
    assert bob_pending.kind == "pending"
    ids["bob_pending"] = bob_pending.fact_id
    ids["bob_entity"] = mem.graph.create_entity(BOB, name="Bob's diary", entity_type="thing").id


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    db = str(tmp_path_factory.mktemp("ui") / "demo.db")
    run_demo(db, Console(file=io.StringIO()))
    ids: dict[str, str] = {}
    with SyncMemory.open(db) as mem:
        _hostile_and_extra(mem, ids)
        made = {
            "sam": mem.keys.create("sam", can="read,write,admin"),
            "sam_ro": mem.keys.create("sam", agent="assistant", can="read"),
            "bob": mem.keys.create("bob", can="read,write"),
            "doomed": mem.keys.create("sam", can="read"),
        }
    SHOTS.mkdir(parents=True, exist_ok=True)
    with running(create_app(db, mcp=False)) as url:
        yield Site(url, db, {n: i.secret for n, i in made.items()}, ids, {n: i.key.id for n, i in made.items()})


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as opened:
        yield opened


@pytest.fixture
def dialogs() -> list[str]:
    return []


@pytest.fixture(scope="module")
def sam_cookie(browser: Browser, site: Site) -> StorageState:
    """The login of Sam's full key, done once: the tests of what a page draws start from it."""
    page = open_as(browser, site, "sam", [])
    state = page.context.storage_state()
    page.context.close()
    return state


def as_sam(browser: Browser, site: Site, cookie: StorageState, **options: object) -> Page:
    """A fresh browser context already logged in with Sam's full key."""
    return browser.new_context(base_url=site.url, storage_state=cookie, **options).new_page()  # type: ignore[arg-type]


def open_as(browser: Browser, site: Site, key: str, dialogs: list[str], **options: object) -> Page:
    """A fresh browser context, logged in through the form with ``key``."""
    context = browser.new_context(base_url=site.url, **options)  # type: ignore[arg-type]
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto("/ui/timeline")
    expect(page).to_have_url(f"{site.url}/ui/login")
    page.fill("input[name=key]", site.keys[key])
    page.click("button[type=submit]")
    expect(page.locator("#user")).to_have_text("bob" if key == "bob" else "sam")
    return page


def inert(page: Page, dialogs: list[str]) -> None:
    """No stored markup became markup: no script ran, no element was injected."""
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    assert page.locator("script").count() == 1  # the inspector's own
    assert page.locator("img").count() == 0


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_timeline_shows_episodes_and_messages_and_filters(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    timeline = page.locator("#timeline")
    expect(timeline).to_contain_text("Big news: I moved to Porto last week.")
    expect(timeline).to_contain_text("Can you remind me about the dentist?")
    shot(page, "timeline")
    page.fill("input[name=session]", "2026-03-02")
    page.click("form.filters button")
    expect(timeline.locator("li.entry")).to_have_count(4)
    expect(timeline).not_to_contain_text("Porto")
    page.goto("/ui/timeline?q=Porto&until=2026-05-18T09:01")
    expect(timeline.locator("li.entry")).to_have_count(1)
    expect(timeline).to_contain_text("I moved to Porto")


def test_superseded_fact_is_drawn_closed_at_the_right_time(browser: Browser, site: Site, dialogs: list[str]) -> None:
    with site.memory() as mem:
        [lisbon] = [f for f in mem.semantic.facts(SAM, status="superseded") if f.object == "Lisbon"]
    page = open_as(browser, site, "sam", dialogs)
    page.click("nav >> text=Facts over time")
    row = page.locator(f"tr[data-id='{lisbon.id}']")
    expect(row.locator(".status")).to_have_text("superseded")
    expect(row.locator(".valid-text")).to_have_text(f"{when(lisbon.valid_from)} → {when(lisbon.valid_to)}")
    expect(row.locator(".believed-text")).to_have_text(f"{when(lisbon.recorded_at)} → {when(lisbon.superseded_at)}")
    assert lisbon.valid_to is not None and lisbon.valid_to.date().isoformat() == "2026-05-18"
    assert row.locator("g.valid.open").count() == 0 and row.locator("g.believed.open").count() == 0
    current = page.locator("tr.fact.active", has_text="Vila Nova de Gaia")
    assert current.locator("g.valid.open").count() == 1
    shot(page, "facts")


CLOCKS = {"valid": "valid_at", "believed": "as_of"}  # the query parameter each axis replays


def _moment_of(page: Page, name: str) -> datetime:
    value = parse_qs(urlsplit(page.url).query)[name][0]
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def _click_at(page: Page, kind: str, moment: datetime) -> None:
    """Click the ``kind`` axis ("valid" or "believed") of "Facts over time" where ``moment`` lies."""
    head = page.locator(f"#facts th[data-axis={kind}]")
    start, end = (datetime.fromisoformat(head.get_attribute(f"data-{edge}") or "") for edge in ("start", "end"))
    axis = head.locator("svg.axis")
    box = axis.bounding_box()
    assert box is not None
    axis.click(position={"x": box["width"] * ((moment - start) / (end - start)), "y": 3})
    page.wait_for_url(re.compile(f"[?&]{CLOCKS[kind]}=[^&]"))


def test_as_of_control_replays_what_memory_believed(browser: Browser, site: Site, dialogs: list[str]) -> None:
    with site.memory() as mem:
        old, new = mem.semantic.get(site.ids["tea_old"]), mem.semantic.get(site.ids["tea_new"])
    between = old.recorded_at.replace(microsecond=0) + timedelta(seconds=1)
    assert old.recorded_at < between < new.recorded_at
    page = open_as(browser, site, "sam", dialogs)
    page.goto("/ui/facts")
    facts = page.locator("#facts")
    expect(facts).to_contain_text("green tea")  # every fact, the superseded one too
    page.fill("#as-of", between.strftime("%Y-%m-%dT%H:%M:%S"))
    page.click("#replay-form button")
    expect(page.locator("#replay-banner")).to_contain_text(f"What memory believed at {when(between)} (system time)")
    expect(facts).to_contain_text("Sam drinks green tea every morning")
    expect(facts).not_to_contain_text("oolong")
    assert facts.locator("line.marker").count() == facts.locator("tbody tr.fact").count() > 0
    assert facts.locator("svg[data-axis=valid] line.marker").count() == 0  # the line is on the clock replayed
    shot(page, "facts-as-of")
    page.fill("#as-of", datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    page.click("#replay-form button")
    expect(facts).to_contain_text("Sam drinks oolong tea every morning")
    expect(facts).not_to_contain_text("green tea")
    page.locator("#facts th[data-axis=believed] svg.axis").click(position={"x": 1, "y": 3})  # the script
    expect(page.locator("#replay-banner")).to_contain_text(": 0 facts")  # before the first belief: nothing


def test_a_click_on_the_system_time_axis_shows_what_memory_believed_then(
    browser: Browser, site: Site, sam_cookie: StorageState
) -> None:
    with site.memory() as mem:
        old, new = mem.semantic.get(site.ids["tea_old"]), mem.semantic.get(site.ids["tea_new"])
    page = as_sam(browser, site, sam_cookie)
    page.goto("/ui/facts")
    _click_at(page, "believed", old.recorded_at + (new.recorded_at - old.recorded_at) / 2)
    clicked = _moment_of(page, "as_of")
    assert old.recorded_at < clicked < new.recorded_at and "valid_at=&" in page.url + "&"
    with site.memory() as mem:
        believed = mem.semantic.facts("sam", as_of=clicked, limit=1000)
    banner = page.locator("#replay-banner")
    expect(banner).to_have_attribute("data-clock", "believed")
    expect(banner).to_contain_text(f"What memory believed at {when(clicked)} (system time): {len(believed)} facts")
    expect(page.locator("#facts tbody tr.fact")).to_have_count(len(believed))
    expect(page.locator("#facts")).to_contain_text("Sam drinks green tea every morning")
    expect(page.locator("#facts")).not_to_contain_text("oolong")


def test_a_click_on_the_world_time_axis_shows_what_was_true_then(
    browser: Browser, site: Site, sam_cookie: StorageState
) -> None:
    """Valid from March to May in the demo's world, recorded today: a world-time click in April (replayed as
    system time, it was 0 facts) shows what was true in April as memory holds it now."""
    page = as_sam(browser, site, sam_cookie)
    page.goto("/ui/facts")
    _click_at(page, "valid", datetime(2026, 4, 10, tzinfo=UTC))  # a pixel is most of a day here
    clicked = _moment_of(page, "valid_at")
    assert datetime(2026, 3, 3, tzinfo=UTC) < clicked < datetime(2026, 5, 17, tzinfo=UTC)
    assert "as_of=&" in page.url + "&"
    with site.memory() as mem:
        true_then = mem.semantic.facts("sam", valid_at=clicked, limit=1000)
    assert len(true_then) == 3  # Lisbon, vegetarian, the job at Acme
    banner = page.locator("#replay-banner")
    expect(banner).to_have_attribute("data-clock", "valid")
    expect(banner).to_contain_text(f"What was true at {when(clicked)} (world time), as memory holds it now: 3 facts")
    rows = page.locator("#facts tbody tr.fact")
    expect(rows).to_have_count(3)
    for fact in true_then:
        expect(page.locator(f"tr[data-id='{fact.id}']")).to_contain_text(fact.text)
    expect(page.locator("#facts")).not_to_contain_text("Figma")  # that job began in July
    assert page.locator("#facts svg[data-axis=valid] line.marker").count() == 3
    assert page.locator("#facts svg[data-axis=believed] line.marker").count() == 0
    shot(page, "facts-valid-at")


def test_belief_bars_are_never_slivers(browser: Browser, site: Site, sam_cookie: StorageState) -> None:
    """Beliefs held a second among months of world time were drawn under 1 px wide."""
    page = as_sam(browser, site, sam_cookie)
    page.goto("/ui/facts")
    widths = page.evaluate(
        """kind => [...document.querySelectorAll(`#facts td svg[data-axis=${kind}]`)].map(svg => {
             const boxes = [...svg.querySelectorAll("rect")].map(rect => rect.getBoundingClientRect());
             return Math.max(...boxes.map(b => b.right)) - Math.min(...boxes.map(b => b.left));
           })""",
        "believed",
    )
    assert len(widths) == page.locator("#facts tbody tr.fact").count() > 10
    assert min(widths) >= 6, widths
    green = page.locator(f"tr[data-id='{site.ids['tea_old']}'] svg[data-axis=believed] rect").first.bounding_box()
    assert green is not None and green["width"] > 6  # held for a second: more than the floor on a seconds axis


def test_ticks_of_a_short_span_tell_the_time_of_day(browser: Browser, site: Site, sam_cookie: StorageState) -> None:
    """The tea fact's chain lies within a few seconds: its ticks were six times the same date."""
    page = as_sam(browser, site, sam_cookie)
    page.goto(f"/ui/facts/{site.ids['tea_new']}")
    for kind in ("valid", "believed"):
        labels = page.locator(f"#chain th[data-axis={kind}] .tick").all_inner_texts()
        assert len(labels) == len(set(labels)) == 5, labels
        assert all(":" in label for label in labels), labels  # a time of day on each
        assert sum(label.count("-") for label in labels) == 2, labels  # the date once, where it starts
    page.goto("/ui/facts")  # the demo's world time spans months: dates, each once
    labels = page.locator("#facts th[data-axis=valid] .tick").all_inner_texts()
    assert len(set(labels)) == 5 and not any(":" in label for label in labels), labels


def test_lineage_names_facts_by_their_text(browser: Browser, site: Site, sam_cookie: StorageState) -> None:
    with site.memory() as mem:
        home = mem.semantic.facts(SAM, predicate="lives in")[0]
        [edge] = [e for e in mem.semantic.lineage(home.id) if e.new_id == home.id]
        replaced = mem.semantic.get(edge.old_id)
    page = as_sam(browser, site, sam_cookie)
    page.goto(f"/ui/facts/{home.id}")
    lineage = page.locator("#lineage")
    expect(lineage).to_contain_text(f"{home.text} (this fact) SUPERSEDES {replaced.text}")
    older = lineage.locator(f"a.named[data-id='{replaced.id}']")
    expect(older).to_have_text(replaced.text)
    expect(older).to_have_attribute("title", f"fact {replaced.id}")
    assert re.search(r"[0-9a-f]{32}", lineage.inner_text()) is None  # no bare id shown in place of a text
    older.click()
    expect(page.locator("#statement")).to_have_text(replaced.text)


# Each stage and zone cell of the decisions: its text, its lines as drawn (the bottoms of its text's boxes), its title.
IDENTIFIERS = """() => [...document.querySelectorAll("#decisions td[data-label=stage], #decisions td[data-label=zone]")]
  .map(cell => {
    const lines = new Set();
    const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = texts.nextNode(); node; node = texts.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const box of range.getClientRects()) if (box.width > 0) lines.add(Math.round(box.bottom));
    }
    return [cell.innerText, lines.size, cell.querySelector("[title]")?.title ?? null];
  })"""


@pytest.mark.parametrize("width", [1280, 390])
def test_identifiers_in_the_conflict_table_are_never_broken(
    browser: Browser, site: Site, sam_cookie: StorageState, width: int
) -> None:
    """``subject_predicate`` and ``CONFLICT_CHECK`` broke mid-word (overflow-wrap: anywhere on every cell)."""
    page = as_sam(browser, site, sam_cookie, viewport={"width": width, "height": 900})
    page.goto("/ui/conflicts")
    cells = page.evaluate(IDENTIFIERS)
    assert len(cells) > 10 and {"subject_predicate", "CONFLICT_CHECK"} <= {text for text, _, _ in cells}
    assert [(text, lines) for text, lines, _ in cells] == [(text, 1) for text, _, _ in cells]
    assert all(title == text for text, _, title in cells if text.isidentifier())  # the whole id, when cut
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_fact_page_shows_chain_lineage_and_sources(browser: Browser, site: Site, dialogs: list[str]) -> None:
    with site.memory() as mem:
        home = mem.semantic.facts(SAM, predicate="lives in")[0]
    page = open_as(browser, site, "sam", dialogs)
    page.goto(f"/ui/facts/{home.id}")
    chain = page.locator("#chain tbody tr")
    expect(chain).to_have_count(3)
    expect(chain.nth(0)).to_contain_text("superseded")
    expect(chain.nth(2)).to_contain_text("Vila Nova de Gaia")
    expect(page.locator("#lineage")).to_contain_text("SUPERSEDES")
    expect(page.locator("#sources")).to_contain_text("just across the river from Porto")
    shot(page, "fact")


def test_pending_facts_approved_and_rejected_from_the_page(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    page.goto("/ui/conflicts")
    expect(page.locator("#decisions")).to_contain_text("subject_predicate")
    shot(page, "conflicts")
    page.locator(f"li[data-id='{site.ids['approve']}'] button.approve").click()
    expect(page.locator("#done")).to_contain_text("approved")
    page.locator(f"li[data-id='{site.ids['reject']}'] button.reject").click()
    expect(page.locator("#done")).to_contain_text("rejected")
    expect(page.locator(f"li[data-id='{site.ids['approve']}']")).to_have_count(0)
    expect(page.locator(f"li[data-id='{site.ids['reject']}']")).to_have_count(0)
    with site.memory() as mem:
        assert mem.semantic.get(site.ids["approve"]).status == "active"
        [audit] = [d for d in mem.semantic.conflicts(SAM, fact_id=site.ids["approve"]) if d.stage == "judge"]
        assert audit.kind == "admit" and site.key_ids["sam"] in audit.reason
        assert mem.semantic.get(site.ids["reject"]).status == "forgotten"
        deletes = [r for r in mem.semantic.deltas(limit=10_000) if r.kind == "delete"]
        assert any(site.ids["reject"] in r.delta.replaces for r in deletes)  # type: ignore[union-attr]
    expect(page.locator("#decisions")).to_contain_text("approved in the inspector")


def test_a_read_only_key_cannot_approve(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam_ro", dialogs)
    page.goto("/ui/conflicts")
    expect(page.locator(f"li[data-id='{site.ids['read_only']}']")).to_contain_text("comes from Milan")
    assert page.locator("button.approve").count() == 0
    headers = {"Authorization": f"Bearer {site.keys['sam_ro']}"}
    answer = httpx.post(f"{site.url}/ui/facts/{site.ids['read_only']}/approve", headers=headers)
    assert answer.status_code == 403 and "cannot write" in answer.text
    with site.memory() as mem:
        assert mem.semantic.get(site.ids["read_only"]).status == "pending"


def test_graph_neighbourhood_and_concept_graph(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    page.click("nav >> text=Graph")  # a key of the whole user: a graph is one agent's, the page offers them
    expect(page.locator(".banner")).to_contain_text("A graph belongs to one agent")
    page.locator("#agents a", has_text="assistant").click()
    page.locator("#entities a", has_text="Sam").first.click()
    graph = page.locator("#neighbourhood")
    expect(graph).to_contain_text("Vila Nova de Gaia")
    expect(graph).to_contain_text("LIVES_IN")
    expect(graph).to_contain_text("SIBLING_OF")  # learned from "Sam's sister Ana lives in Porto"
    expect(graph.locator("a.node")).to_have_count(4)
    page.locator(".depths a", has_text="2").click()
    expect(page.locator(".depths a[aria-current]")).to_have_text("2")
    page.locator("#neighbourhood a.node", has_text="Vila Nova de Gaia").click()  # a node moves the centre
    expect(page.locator("#center")).to_have_text("Vila Nova de Gaia")
    expect(page.locator("#concepts")).to_contain_text("risotto")
    inert(page, dialogs)
    shot(page, "graph")


def test_search_explains_every_hit(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    page.goto("/ui/search")
    page.fill("input[name=q]", "Where does Sam live now?")
    page.click("form.filters button")
    expect(page.locator("#route")).to_contain_text("Route")
    expect(page.locator("#hits")).to_contain_text("Vila Nova de Gaia")
    first = page.locator("#hits tr.hit").first
    assert first.locator("td[data-label=cosine]").inner_text() != "-"
    assert float(first.locator("td[data-label=fused]").inner_text()) > 0
    shot(page, "search")


def test_blocks_and_consolidator_status(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    page.click("nav >> text=Blocks & consolidator")
    expect(page.locator("#blocks")).to_contain_text("Sam prefers short answers")
    expect(page.locator("#consolidator")).to_contain_text("rule-based")
    expect(page.locator("#rules")).to_contain_text("nightly")  # an admin key sees the rules' runs
    inert(page, dialogs)
    shot(page, "status")


@pytest.mark.parametrize(
    "path", ["timeline", "timeline?session=hostile", "facts", "conflicts", "graph", "status", "search?q=pasted"]
)
def test_stored_script_is_shown_as_text(browser: Browser, site: Site, dialogs: list[str], path: str) -> None:
    page = open_as(browser, site, "sam", dialogs)
    if path == "graph":
        path = f"graph?entity={site.ids['sam_entity']}"
    page.goto(f"/ui/{path}")
    expect(page.locator("main")).to_contain_text(IMG if path.startswith("graph") else SCRIPT)
    inert(page, dialogs)


def test_fact_page_of_hostile_text(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    page.goto(f"/ui/facts/{site.ids['hostile_fact']}")
    expect(page.locator("#statement")).to_contain_text(IMG)
    inert(page, dialogs)


def test_other_tenants_ids_show_nothing(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    for path in (f"facts/{site.ids['bob_pending']}", f"graph?agent=assistant&entity={site.ids['bob_entity']}"):
        answer = page.goto(f"/ui/{path}")
        assert answer is not None and answer.status == 404
        expect(page.locator("#message")).to_contain_text("no ")
        expect(page.locator("body")).not_to_contain_text("diary")
    posted = httpx.post(f"{site.url}/ui/facts/{site.ids['bob_pending']}/approve",
                        headers={"Authorization": f"Bearer {site.keys['sam']}"})  # fmt: skip
    assert posted.status_code == 404 and "diary" not in posted.text
    with site.memory() as mem:
        assert mem.semantic.get(site.ids["bob_pending"]).status == "pending"
    agent_bound = open_as(browser, site, "sam_ro", dialogs)
    answer = agent_bound.goto("/ui/facts?agent=someone-else")
    assert answer is not None and answer.status == 403
    expect(agent_bound.locator("#message")).to_contain_text("bound to agent")


def test_a_key_revoked_mid_session_gets_a_clear_message(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "doomed", dialogs)
    expect(page.locator("#timeline")).to_contain_text("Porto")
    with site.memory() as mem:
        mem.keys.revoke(site.key_ids["doomed"])
    with page.expect_response(lambda r: "/ui/facts" in r.url) as caught:
        page.click("nav >> text=Facts over time")
    assert caught.value.status == 401
    expect(page.locator("#message")).to_have_text(REVOKED)
    expect(page.locator("body")).not_to_contain_text("Vila Nova de Gaia")
    shot(page, "revoked")
    page.reload()  # the cookie is gone: the plain login form
    expect(page.locator("input[name=key]")).to_be_visible()


def test_a_huge_record_is_clipped_in_lists(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs)
    started = time.monotonic()
    page.goto("/ui/timeline?session=huge")
    entry = page.locator("#timeline li.entry")
    expect(entry).to_contain_text("more characters")
    expect(entry).not_to_contain_text("TAILMARK")
    assert time.monotonic() - started < 10


def test_pages_fit_a_phone(browser: Browser, site: Site, dialogs: list[str]) -> None:
    page = open_as(browser, site, "sam", dialogs, viewport={"width": 390, "height": 844}, is_mobile=True)
    for view in ("timeline", "facts", "conflicts", f"graph?entity={site.ids['sam_entity']}", "search?q=tea", "status"):
        page.goto(f"/ui/{view}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 391, view
    page.goto("/ui/facts")
    shot(page, "facts-phone")


def test_a_wrong_key_is_refused_at_login(browser: Browser, site: Site) -> None:
    page = browser.new_context(base_url=site.url).new_page()
    page.goto("/ui/login")
    page.fill("input[name=key]", "mnm_not-a-key")
    page.click("button[type=submit]")
    expect(page.locator("#message")).to_contain_text("unknown or revoked")
    assert page.context.cookies() == []
