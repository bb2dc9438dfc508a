"""Every route of the HTTP API under generated requests (schemathesis, from the checked-in OpenAPI document):
never a 5xx, and every answer has a documented status, content type and shape."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from live_server import running
from mnemonite import SyncMemory
from mnemonite.server import create_app, openapi_document

schema = schemathesis.openapi.from_dict(openapi_document())


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'm.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        secret = mem.keys.create("fuzz", can="read,write,admin").secret
    with running(create_app(url)) as base:
        # The first query loads the model (seconds on a busy machine): not what a 10-second client timeout measures.
        warm = httpx.post(f"{base}/v1/search", json={"query": "warm up"}, headers={"Authorization": f"Bearer {secret}"},
                          timeout=600)  # fmt: skip
        assert warm.status_code == 200, warm.text
        yield base, secret


@schema.parametrize()
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_route_fails_or_answers_off_its_schema(case: schemathesis.Case, fuzzed: tuple[str, str]) -> None:
    base, secret = fuzzed
    case.call_and_validate(
        base_url=base,
        headers={"Authorization": f"Bearer {secret}"},
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )
