"""The records the doors send as JSON spell their fields in camelCase, in their order."""

from __future__ import annotations

from harness.systems.chain.vectors import VectorHit
from harness.systems.service.status import ChainStatus


def test_a_chain_status_is_sent_with_its_fields_in_camel_case() -> None:
    status = ChainStatus("p1", "am7://acme/tool.plan/p1", "failed", 2, 3, True, "boom")
    assert status.as_json() == {
        "planId": "p1",
        "planUri": "am7://acme/tool.plan/p1",
        "status": "failed",
        "stepNumber": 2,
        "totalSteps": 3,
        "executed": True,
        "error": "boom",
    }


def test_a_vector_hit_adds_the_object_id_of_its_document() -> None:
    hit = VectorHit("am7://acme/data.data/d1", "text", 0.5, 1, "data")
    assert list(hit.as_json().items()) == [
        ("uri", "am7://acme/data.data/d1"),
        ("content", "text"),
        ("score", 0.5),
        ("chunk", 1),
        ("sourceType", "data"),
        ("vectorReferenceObjectId", "d1"),
    ]
