"""The memory inspector in a real browser (Debian's Chromium driven by Playwright) against a real server
and a real SQLite database filled as the demo fills it, plus stored script, other tenants' ids, a key
revoked mid-session and a huge record. Screenshots go to build/ui-screenshots/."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect
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
    assert row.locator("rect.valid.open").count() == 0 and row.locator("rect.believed.open").count() == 0
    current = page.locator("tr.fact.active", has_text="Vila Nova de Gaia")
    assert current.locator("rect.valid.open").count() == 1
    shot(page, "facts")


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
    page.click("#as-of-form button")
    expect(page.locator("#as-of-banner")).to_contain_text(when(between))
    expect(facts).to_contain_text("Sam drinks green tea every morning")
    expect(facts).not_to_contain_text("oolong")
    assert facts.locator("line.marker").count() == facts.locator("tbody tr.fact").count() > 0
    shot(page, "facts-as-of")
    page.fill("#as-of", datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    page.click("#as-of-form button")
    expect(facts).to_contain_text("Sam drinks oolong tea every morning")
    expect(facts).not_to_contain_text("green tea")
    page.locator("svg.axis").first.click(position={"x": 1, "y": 3})  # the script: the axis's start
    expect(page.locator("#as-of-banner")).to_contain_text(": 0 facts")


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
    expect(graph.locator("a.node")).to_have_count(3)
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
