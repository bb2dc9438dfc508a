"""Secrets nobody tagged: recognised at every tier's write, masked before anything is stored, embedded or
indexed, shown as [secret: kind], kept for a Reveal only when asked, and found in an older memory by scan."""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mnemonite import (
    Episode,
    Fact,
    Memory,
    MemoryConfig,
    Message,
    Reveal,
    Scope,
    SecretPattern,
    SecretScanError,
    SecretScanner,
    SecretSpan,
    reveal_text,
)
from mnemonite.cli import app
from mnemonite.conflicts import ENGLISH, LocalePack, define_locale_pack
from mnemonite.embedding import Embedder
from mnemonite.privacy import MARKER, SecretGuard, redact_record
from mnemonite.recognisers import DEFAULT_RECOGNISERS, Recogniser, checks
from mnemonite.recognisers.base import Gated
from mnemonite.transfer import export_memory

CARD = "4111 1111 1111 1111"
KEY = "sk-proj-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"
SAID = Scope(user="sam", session="s1", agent="assistant")
FACTS = Scope(user="sam", agent="assistant")


def found(text: str) -> list[tuple[str, str]]:
    return [(span.kind, text[span.start : span.end]) for span in SecretScanner().scan(text)]


# -- recognition ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        (f"my card number is {CARD}, expiry 04/29", "card number", CARD),
        ("amex 3782-822463-10005 on file", "card number", "3782-822463-10005"),
        ("wire it to DE89 3704 0044 0532 0130 00 please", "IBAN", "DE89 3704 0044 0532 0130 00"),
        ("iban: gb29nwbk60161331926819", "IBAN", "gb29nwbk60161331926819"),
        (f"the openai key is {KEY}", "API key", KEY),
        ("export GITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "API key",
         "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
        ("aws key AKIAQ3EGR7XZ5NWK2M4P", "API key", "AKIAQ3EGR7XZ5NWK2M4P"),
        ("my password for the bank is Tr0ub4dor&3.", "password", "Tr0ub4dor&3"),
        ('{"user": "ana", "password": "mango-Tree-77"}', "password", "mango-Tree-77"),
        ("postgres://app:Zq8wLp2x@db.internal:5432/prod", "password", "Zq8wLp2x"),
        ("la contraseña es Gato_Negro7", "password", "Gato_Negro7"),
        ("my pin is 4821", "PIN", "4821"),
        ("the code for the front door is 7731", "PIN", "7731"),
        ("my pin is four five nine one", "PIN", "four five nine one"),
        ("the password I set yesterday was Gl4cier!Bay", "password", "Gl4cier!Bay"),
        ("my passphrase is correct horse battery staple", "password", "correct horse battery staple"),
        ("密码是 Panda8899", "password", "Panda8899"),
        ("el código de la puerta es 4826", "PIN", "4826"),
        ("ssn 123-45-6789", "government id", "123-45-6789"),
        ("BSN 111222333 voor de gemeente", "government id", "111222333"),
        ("mail me at jo.ana@example.org", "email address", "jo.ana@example.org"),
        ("call me on +44 20 7946 0958", "phone number", "+44 20 7946 0958"),
        # said by what is done with it, no word naming it
        ("had to log back in with OrangeCat!42 this morning", "password", "OrangeCat!42"),
        ("reset the wifi and set it to bluebirdhouse77 for the kids", "password", "bluebirdhouse77"),
        ("the office laptop unlocks with Banana1!!, don't tell", "password", "Banana1!!"),
        ("you can unlock the vault with 'tall giraffe eats cloudy pancakes'", "password",
         "tall giraffe eats cloudy pancakes"),
        ("hosting account, user: bob_harlan / Qz7!vrT8", "password", "Qz7!vrT8"),
        ("amazon - Tr33house!", "password", "Tr33house!"),
        ("is Fluffy123 a strong password?", "password", "Fluffy123"),
        ("the safe in the closet opens with 1-9-8-4", "PIN", "1-9-8-4"),
        ("punch in 3141 at the side door", "PIN", "3141"),
        ("die pin von meiner ec karte ist 7702", "PIN", "7702"),
        ("the code to the lockbox by the back door is one one five nine", "PIN", "one one five nine"),
        ("the garage wifi passcode is lemonade", "password", "lemonade"),
        ("my phone passcode is 482913", "PIN", "482913"),
        ("wifi is BlueHouse_2019 btw", "password", "BlueHouse_2019"),
        ("Amazon - lemontree77\nPaypal - Lemon!Tree77", "password", "lemontree77"),
        ("Steam: xXdarkwolfXx / wolfpack1337 dont change it", "password", "wolfpack1337"),
        ("office printer web admin: admin / printmaster", "password", "printmaster"),
        ("Emma's minecraft: username EmmaCraft08 password diamondsword", "password", "diamondsword"),
        ("Ctrl-alt-del then type P@ssw0rd99 and hit enter", "password", "P@ssw0rd99"),
        ("password is the dog's name then the year we moved in, so biscuit2016", "password", "biscuit2016"),
        ("Mum your phone pin is 1 9 5 4", "PIN", "1 9 5 4"),
        ("school gate keypad 1066 then the green button", "PIN", "1066"),
        ("its all one word lowercase: bananabread", "password", "bananabread"),
        ("do you think 'ilovemydog' is too easy?", "password", "ilovemydog"),
        ("the new one is Otter-Lagoon-Pebble", "password", "Otter-Lagoon-Pebble"),
        ("Router: Virgin Media Hub. Key: ghtR7kwpXq2m", "password", "ghtR7kwpXq2m"),
        ("j'ai mis chaton2018 comme mot de passe sur l'ordi de papa", "password", "chaton2018"),
        ("Mum your phone unlock is 1 9 5 4", "PIN", "1 9 5 4"),
        ("safe combination in the back office is 36-24-12", "PIN", "36-24-12"),
        ("parking gate keypad at the new office: 1966, ask reception", "PIN", "1966"),
        ("le digicode de l'immeuble c'est le 7391, puis porte B", "PIN", "7391"),
        ("Tresorcode im B\u00fcro: 558031", "PIN", "558031"),
        ("Sent you the pdf, it's locked with Orwell1984", "password", "Orwell1984"),
        ("the admin panel login changed: it's now G7!mountain!G7", "password", "G7!mountain!G7"),
        ("work laptop: Brambleberry!2 (don't tell IT)", "password", "Brambleberry!2"),
        ("the library password is my late dog's name and the year, Biscuit1998", "password", "Biscuit1998"),
        ("the code word for the alarm company is 'pineapple'", "password", "pineapple"),
    ],
)  # fmt: skip
def test_each_kind_is_recognised_in_the_words_people_use(text: str, kind: str, value: str) -> None:
    assert (kind, value) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "order 4539148803436467 has shipped",  # passes Luhn, but an order number
        "IMEI 356938035643809",
        "uuid 123e4567-e89b-12d3-a456-426614174000 and commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "version 2.14.1 released on 2024-05-12 at 14:30",
        "ISBN 978-0-306-40615-7, the total was $1,299.99",
        "I forgot my password again, the password is on a sticky note",
        "my password is too short apparently",
        "set DB_PASSWORD=${DB_PASSWORD} in the compose file",
        "my api key is sk-... and YOUR_API_KEY goes here",
        "the pin on the map shows 1200 meters away",
        "card ending 4242, **** **** **** 1234 is on file",
        "my password manager is 1Password; pw hint: first pet",
        "Password-protected PDF attached (report_Q3.pdf), password for user jsmith2 expired",
        "reset your password at portal.example.com/reset, the code review is at 1500",
        "my passphrase is long and hard to remember",
        "I chose Windows11 for the laptop and use Ubuntu22.04 on my pc",
        "login: jane_doe88, account: savings-2024; use jsmith2 as the username",
        "Melanie: Thanks! That's amazing. Jon: Congrats!",
        "use code SAVE20 at checkout, set it to 72 degrees, the gate opens at 7, try Route66 next time",
        "the door wants 20 minutes to close; punch in 9 to 5; the safe is 200 years old",
        "wifi name: HomeNet_5G. the wifi network is BT-Hub6-2291 and the wifi is down again",
        "Wi-Fi: Smith_Family_5G, the password is on the fridge",
        "it's Route66 all the way, it's covid19 again",
        "the keypad 2000 series is great; the gate is 214 at terminal 5; the locker is 214",
        "ratio 16 / 9, sizes: S / M / L, London / Paris2024 trip",
        "the game is too easy, Python3 is too slow, his plan is weak; all lowercase please, it's one name",
        "Melanie: Thanks! That's amazing, someone's dog ran off",
        "Order number: A12345 shipped; Meeting room: B2-04; Model: XPS-13-9310; it's now 5pm",
        "Usuario: lmartinez78, the pdf is locked with a password, the note in the drawer is 2 pages",
    ],
)
def test_look_alikes_are_not_secrets(text: str) -> None:
    assert [kind for kind, _ in found(text) if kind not in ("email address", "phone number")] == []


@given(st.lists(st.integers(0, 9), min_size=12, max_size=18), st.integers(0, 17))
def test_luhn_accepts_its_check_digit_and_refuses_one_digit_changed(digits: list[int], at: int) -> None:
    body = "".join(map(str, digits))
    check = next(str(d) for d in range(10) if checks.luhn(body + str(d)))
    number = body + check
    assert checks.luhn(number)
    where = at % len(number)
    changed = number[:where] + str((int(number[where]) + 5) % 10) + number[where + 1 :]
    assert not checks.luhn(changed)


def test_the_published_checks() -> None:
    assert checks.iban("GB82 WEST 1234 5698 7654 32") and not checks.iban("GB82 WEST 1234 5698 7654 33")
    body = "23634784342"
    valid = [d for d in "0123456789" if checks.verhoeff(body + d)]  # exactly one check digit, and a typo breaks it
    assert len(valid) == 1 and not checks.verhoeff("3" + body[1:] + valid[0])
    assert checks.mod11("111222333") and not checks.mod11("111222334")
    assert checks.dni("12345678Z") and not checks.dni("12345678A")
    assert checks.cpf("529.982.247-25") and not checks.cpf("111.111.111-11")


@pytest.mark.parametrize(
    "text",
    ["1" * 8000, "pw " * 2700, "pin 1234 " * 900, "4111 1111 1111 1111 " * 400, 'password "' * 800, "@" * 8000],
)
def test_recognition_is_bounded_on_hostile_text(text: str) -> None:
    started = time.perf_counter()
    SecretScanner().scan(text)
    assert time.perf_counter() - started < 2.0


class _Ungated(Gated):
    """A recogniser without the gate of digits written as one number (`SecretPattern.grouped`); its other gates kept
    (a pattern's ``min_digits`` counts the digits of the whole text, and is the pattern's own choice)."""

    def __init__(self, inner: Recogniser) -> None:
        self.find = inner.find  # type: ignore[method-assign]
        self.hints = tuple(getattr(inner, "hints", ()))
        self.min_digits = getattr(inner, "min_digits", 0)
        self.min_run = getattr(inner, "min_run", 0)


_NUMBERISH = st.text(alphabet=st.sampled_from(list("0123456789 .-()+/:x")), min_size=1, max_size=40)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(_NUMBERISH, st.sampled_from(["card", "call", "iban", "ssn", "pin", "my ", "DE", "GB82"])),
                max_size=6))  # fmt: skip
def test_the_gates_never_change_what_is_found(parts: list[str]) -> None:
    """A recogniser skipped because the text holds no number of its length would have found nothing."""
    text = " ".join(parts)
    gated = SecretScanner(DEFAULT_RECOGNISERS)
    ungated = SecretScanner([_Ungated(r) for r in DEFAULT_RECOGNISERS])
    assert gated.scan(text) == ungated.scan(text)


@pytest.mark.parametrize(
    "text",
    [f"card {CARD}", "call (415) 555-0100 or +1 (415) 555-0199", "ssn 123-45-6789", "4111-1111-1111-1111 visa",
     "dni 12345678Z", "cpf 529.982.247-25", "aadhaar 2345 6789 0124", "the pin is 4821", "ring (41) 55 501"],
)  # fmt: skip
def test_numbers_written_in_groups_pass_the_gate(text: str) -> None:
    ungated = SecretScanner([_Ungated(r) for r in DEFAULT_RECOGNISERS]).scan(text)
    assert ungated and SecretScanner().scan(text) == ungated


def test_overlapping_candidates_keep_one_span_each() -> None:
    spans = SecretScanner().scan(f"card {CARD} card {CARD} and {KEY}")
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    assert [s.kind for s in spans] == ["card number", "card number", "API key"]


def test_a_value_already_masked_is_not_found_again() -> None:
    assert found("my password is [secret: password] and my pin is [secret: PIN]") == []


# -- the write boundary -----------------------------------------------------------------------------


async def test_every_tier_masks_what_it_stores(mem_on_both: Memory) -> None:
    mem = mem_on_both
    episode = await mem.episodic.put(Episode(content=f"my card is {CARD}"), user="sam", session="s1",
                                     agent="assistant")  # fmt: skip
    await mem.episodic.put_many([Episode(id="bulk", content="my pin is 4821")], user="sam", session="s1",
                                agent="assistant")  # fmt: skip
    message = await mem.session.push(SAID, Message("user", f"the openai key is {KEY}"))
    fact = await mem.semantic.remember(FACTS, "my bank password is Hunter22!")
    newer = await mem.semantic.supersede(fact.id, "my bank password is Ocelot-99x")
    block = await mem.working.define(FACTS, "creds", "wifi password: bluefish42", description=f"card {CARD}")
    appended = await mem.working.append(FACTS, "creds", "door code 7731")
    procedure = await mem.procedural.define(FACTS, "pay", [f"use card {CARD}", "confirm"], trigger="pay the rent")
    stored = [
        (await mem.episodic.get(episode.id)).content, (await mem.episodic.get("bulk")).content, message.content,
        (await mem.semantic.get(fact.id)).text, (await mem.semantic.get(newer.id)).text, block.description,
        appended.value, " ".join(procedure.steps),
    ]  # fmt: skip
    held = " ".join(stored)
    for value in ("4111", "4821", KEY, "Hunter22!", "Ocelot-99x", "bluefish42", "7731"):
        assert value not in held
    assert "[secret: card number]" in stored[0] and "[secret: API key]" in stored[2]
    records = [episode, message, newer, block, appended, procedure]
    assert {record.sensitivity for record in records} == {"secret"}
    assert episode.metadata["secrets"] == {"raised": True, "spans": [{"kind": "card number", "at": 11}]}


async def test_deltas_and_tool_arguments_are_masked(mem: Memory) -> None:
    await mem.semantic.apply_delta({
        "kind": "add", "source_episode_ids": [], "promotion_ts": "2026-01-01T00:00:00Z", "rule_id": "import",
        "confidence": 1.0, "fact_payload": {"text": f"card on file: {CARD}", "user": "sam", "agent": "assistant"},
    })  # fmt: skip
    assert [f.text for f in await mem.semantic.facts(FACTS)] == ["card on file: [secret: card number]"]
    tools = mem.tools.for_scope(SAID)
    result = await tools.call("fact_remember", {"text": f"my github token is {KEY}"})
    assert result.ok
    call = (await mem.tools.calls(SAID))[-1]
    assert KEY not in json.dumps(call.model_dump(mode="json")) and "[secret: API key]" in call.arguments["text"]
    searched = await tools.call("fact_search", {"query": "github token"})
    assert "my github token is [secret: API key]" in [f["text"] for f in searched.output["facts"]]


async def test_sensitivity_rises_and_never_falls(mem: Memory) -> None:
    public = await mem.episodic.put(Episode(content="write to jo@example.org", sensitivity="public"), user="sam",
                                    session="s1", agent="assistant")  # fmt: skip
    assert (public.sensitivity, public.content) == ("internal", "write to jo@example.org")
    tagged = await mem.episodic.put(Episode(content=f"card {CARD}, diagnosis: asthma", sensitivity="secret"),
                                    user="sam", session="s1", agent="assistant")  # fmt: skip
    assert tagged.metadata["secrets"]["raised"] is False
    assert redact_record(tagged).content == MARKER  # tagged by the caller: the whole text stays hidden
    raised = await mem.episodic.put(Episode(content=f"card {CARD}"), user="sam", session="s1", agent="assistant")
    assert redact_record(raised).content == "card [secret: card number]"  # secret only by what was found


async def test_a_caller_cannot_forge_the_note(mem: Memory) -> None:
    forged = {"secrets": {"raised": True, "spans": []}}
    tagged = await mem.episodic.put(Episode(content="diagnosis: asthma", sensitivity="secret", metadata=forged),
                                    user="sam", session="s1", agent="assistant")  # fmt: skip
    said = await mem.session.push(SAID, Message("user", "diagnosis: asthma", sensitivity="secret", metadata=forged))
    fact = await mem.semantic.remember(FACTS, "my diagnosis is asthma", sensitivity="secret", payload=forged)
    await mem.semantic.apply_delta({
        "kind": "add", "source_episode_ids": [], "promotion_ts": "2026-01-01T00:00:00Z", "rule_id": "import",
        "confidence": 1.0, "fact_payload": {"text": "my allergy is penicillin", "user": "sam", "agent": "assistant",
                                            "sensitivity": "secret", "payload": forged},
    })  # fmt: skip
    imported = next(f for f in await mem.semantic.facts(FACTS) if "allergy" in f.text)
    for record in (tagged, said, fact, imported):
        held = record.payload if isinstance(record, Fact) else record.metadata
        assert "secrets" not in held
        assert MARKER in str(redact_record(record).model_dump())


async def test_the_value_is_never_embedded_nor_indexed(tmp_path: Path) -> None:
    seen: list[str] = []

    class Recording:
        """The packaged model, noting every text it is asked to embed."""

        def __init__(self, inner: Embedder) -> None:
            self.inner, self.model, self.dimensions = inner, inner.model, inner.dimensions

        async def embed(self, text: str) -> Any:
            seen.append(text)
            return await self.inner.embed(text)

        async def embed_batch(self, texts: Sequence[str]) -> Any:
            seen.extend(texts)
            return await self.inner.embed_batch(texts)

    from mnemonite.embedding import OnnxEmbedder

    async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", embedder=Recording(OnnxEmbedder())) as mem:
        await mem.episodic.put(Episode(content=f"my card number is {CARD}"), user="sam", session="s1",
                               agent="assistant")  # fmt: skip
        await mem.semantic.remember(FACTS, f"my visa is {CARD}")
        await mem.index()
        stored = list(seen)  # what was embedded of what memory holds (a query is embedded too, then dropped)
        hits = await mem.search(Scope(user="sam"), "4111 1111 1111 1111")
        by_meaning = await mem.search(Scope(user="sam"), "which card number do I have")
    assert stored and not any("4111" in text for text in stored)
    assert all("4111 1111" not in str(hit.record) for hit in hits)  # (a random hex id may hold "4111")
    assert any("[secret: card number]" in str(hit.record) for hit in by_meaning)


async def test_a_failing_recogniser_writes_nothing(tmp_path: Path) -> None:
    class Broken:
        def find(self, text: str) -> Iterable[SecretSpan]:
            raise RuntimeError("boom")

    async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", embedder=None, recognisers=[Broken()]) as mem:
        with pytest.raises(SecretScanError, match="nothing written"):
            await mem.episodic.put(Episode(content="hello"), user="sam", session="s1", agent="assistant")
        with pytest.raises(SecretScanError):
            await mem.semantic.remember(FACTS, "I like tea")
        assert await mem.episodic.recent("sam") == [] and await mem.semantic.facts(FACTS) == []


async def test_a_locale_pack_and_the_caller_add_recognisers(tmp_path: Path) -> None:
    member = SecretPattern(kind="member number", pattern=r"\bMBR-\d{6}\b", hints=["mbr-"])
    define_locale_pack(LocalePack.model_validate({**ENGLISH.model_dump(), "name": "en-club", "secrets": [member]}))

    class Vault:
        def find(self, text: str) -> Iterable[SecretSpan]:
            at = text.find("vault-")
            return [SecretSpan(at, at + 10, "vault code")] if at >= 0 else []

    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", locale="en-club", embedder="none")
    async with await Memory.open(config=config, recognisers=[Vault()]) as mem:
        stored = await mem.episodic.put(Episode(content="I am MBR-123456, open vault-9911"), user="sam",
                                        session="s1", agent="assistant")  # fmt: skip
    assert stored.content == "I am [secret: member number], open [secret: vault code]"
    with pytest.raises(Exception, match="compile"):
        SecretPattern(kind="bad", pattern="(")


# -- keep for a Reveal ------------------------------------------------------------------------------


async def test_keep_holds_the_value_for_a_reveal_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    config = MemoryConfig(url=url, embedder="none", secrets_at_rest="keep")
    async with await Memory.open(config=config) as mem:
        episode = await mem.episodic.put(Episode(content=f"card {CARD} and pin 4821"), user="sam", session="s1",
                                         agent="assistant")  # fmt: skip
        fact = await mem.semantic.remember(FACTS, f"my visa is {CARD}")
        tools = mem.tools.for_scope(SAID)
        hidden = await tools.call("recall_episodes", {"query": "card"})
        shown = await tools.call("recall_episodes", {"query": "card"}, reveal=Reveal("the user asked"))
    assert episode.content == "card [secret: card number] and pin [secret: PIN]"
    assert reveal_text(episode, Reveal("paying")) == f"card {CARD} and pin 4821"
    assert reveal_text(fact, Reveal("paying")) == f"my visa is {CARD}"
    assert CARD not in episode.model_dump_json() and CARD not in fact.model_dump_json()
    assert CARD in episode.model_dump_json(context={"reveal": True})
    assert CARD not in json.dumps(hidden.output) and CARD in json.dumps(shown.output)
    with pytest.raises(Exception, match="Reveal"):
        reveal_text(episode, True)  # type: ignore[arg-type]
    await export_memory(url, tmp_path / "shared.jsonl")
    assert CARD not in (tmp_path / "shared.jsonl").read_text()


async def test_mask_keeps_nothing_of_the_value(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(url, embedder=None) as mem:
        episode = await mem.episodic.put(Episode(content=f"card {CARD}"), user="sam", session="s1", agent="a")
    assert reveal_text(episode, Reveal("why")) == "card [secret: card number]"
    assert b"4111 1111" not in (tmp_path / "m.db").read_bytes()  # (a random hex id may hold "4111")


def test_the_guard_refuses_an_unknown_mode() -> None:
    with pytest.raises(Exception, match="mask"):
        SecretGuard(at_rest="plain")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="secrets_at_rest"):
        MemoryConfig(secrets_at_rest="plain")  # type: ignore[arg-type]


# -- an older memory: scan and mask in place --------------------------------------------------------


async def _older_memory(url: str, path: Path) -> None:
    """A memory whose rows hold secrets in clear, as one written before recognition would."""
    async with await Memory.open(url) as mem:
        await mem.episodic.put(Episode(id="e1", content="my card number is on file"), user="sam", session="s1",
                               agent="assistant")  # fmt: skip
        await mem.session.push(SAID, Message("user", "hello there"))
        await mem.semantic.remember(FACTS, "I like tea")
    db = sqlite3.connect(path)
    db.execute(f"UPDATE episodes SET content = 'my card number is {CARD}' WHERE id = 'e1'")
    db.execute("UPDATE session_messages SET content = 'my password is Hunter22!'")
    db.execute("UPDATE session_events SET payload = replace(payload, 'hello there', 'my password is Hunter22!')")
    db.commit()
    db.close()


async def test_scan_reports_and_masks_an_older_memory_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    await _older_memory(url, path)
    async with await Memory.open(url) as mem:
        report = await mem.scan_secrets()
        assert report.kinds == {"card number": 1, "password": 2}
        assert report.rows == {"episodes": 1, "session_messages": 1, "session_events": 1} and report.masked == 0
        steps: list[tuple[str, int, int]] = []
        masked = await mem.scan_secrets(mask=True, progress=lambda *step: steps.append(step))
        assert masked.masked == 3 and ("episodes", 1, 1) in steps
        episode = await mem.episodic.get("e1")
        assert (episode.content, episode.sensitivity) == ("my card number is [secret: card number]", "secret")
        hits = await mem.search(Scope(user="sam"), "what is my card number")  # embedded again, masked
        assert hits[0].record.id == "e1"
        assert (await mem.scan_secrets()).rows == {}  # nothing left: a second run finds nothing
        assert any("secrets masked in place in episodes e1" in p.reason for p in await mem.semantic.purges("sam"))
    assert b"4111 1111" not in path.read_bytes() or _only_in_free_pages(path)


def _only_in_free_pages(path: Path) -> bool:
    """SQLite may keep an overwritten page until it is reused: the live rows must not hold it."""
    db = sqlite3.connect(path)
    rows = db.execute("SELECT content FROM episodes UNION ALL SELECT content FROM session_messages").fetchall()
    db.close()
    return not any("4111" in row[0] for row in rows)


def test_the_cli_scans_and_masks(tmp_path: Path) -> None:
    import asyncio

    path = tmp_path / "old.db"
    asyncio.run(_older_memory(f"sqlite:///{path}", path))
    runner = CliRunner()
    found = runner.invoke(app, ["--db", str(path), "scan"])
    assert found.exit_code == 0 and "card number" in found.output and "scan --mask" in found.output
    done = runner.invoke(app, ["--db", str(path), "scan", "--mask", "--json"])
    assert done.exit_code == 0 and json.loads(done.output)["masked"] == 3
    again = runner.invoke(app, ["--db", str(path), "scan"])
    assert "no secret found in clear" in again.output
