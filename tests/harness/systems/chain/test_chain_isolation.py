"""Organization isolation in the library (seed 001 §6.2; Group M ``testChainOrgScopingEnforced``):
a ``ChainExecutor`` of one organization, given a vector store or a plan store that also
holds another organization's objects — under the same ids — sees its own only.

Each store here holds both organizations' objects, so that dropping any organization
filter fails a test (an object that is not in the store proves nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.systems.chain import (
    ChainPlan,
    InMemoryVectorStore,
    Permissions,
    PlanExecutionError,
    SQLitePlanStore,
    StepStatus,
    parse_context,
)
from harness.systems.chain.isolation import OrganizationVectors, in_organization
from tests.harness.systems.chain.chain_support import Bench, step

ACME, GLOBEX = "am7://acme/data.data/people", "am7://globex/data.data/people"


def shared_store() -> InMemoryVectorStore:
    """acme's and globex's documents under the same id; globex's matches "bread" best."""
    store = InMemoryVectorStore(chunk_words=4)
    store.add_document(ACME, "Cy is a baker who bakes bread. Ada eats bread daily.")
    for i in range(6):
        store.add_document(f"am7://globex/data.data/recipe{i}", "Bread bread bread. Bread and more bread.")
    store.add_document(GLOBEX, "Bread bread: the globex secret bread recipe.")
    store.add_document("notes/bread.txt", "Bread bread bread, in no organization.")
    store.add_document("am7://acme/data.data/menu", "Today: soup and bread.")
    return store


def found(plan: ChainPlan) -> list[dict[str, Any]]:
    (block,) = parse_context(plan.output).blocks
    return block.data["results"]


def rag(**fields: Any) -> ChainPlan:
    return ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="bread", **fields)])


def test_an_unscoped_search_finds_only_the_executors_organizations_documents() -> None:
    store = shared_store()
    assert {h.uri for h in store.search("bread", 20)} >= {ACME, GLOBEX, "notes/bread.txt"}  # all in one store
    acme = found(Bench(vector_store=store, organization="acme", routing=False).run(rag(ragLimit=5)))
    assert acme and {r["uri"] for r in acme} == {ACME, "am7://acme/data.data/menu"}
    globex = found(Bench(vector_store=store, organization="globex", routing=False).run(rag(ragLimit=20)))
    assert {r["uri"] for r in globex} == {GLOBEX, *(f"am7://globex/data.data/recipe{i}" for i in range(6))}


def test_another_organizations_documents_do_not_take_the_room_of_ragLimit() -> None:
    """globex's better hits fill the store's first answers: acme's search asks again."""
    store = shared_store()
    first = store.search("bread", 2)
    assert {h.uri for h in first} <= {
        GLOBEX,
        "notes/bread.txt",
        *(f"am7://globex/data.data/recipe{i}" for i in range(6)),
    }
    acme = found(Bench(vector_store=store, organization="acme", routing=False).run(rag(ragLimit=3)))
    assert sorted((r["uri"], r["chunk"]) for r in acme) == [("am7://acme/data.data/menu", 0), (ACME, 0), (ACME, 1)]


def test_a_search_scoped_to_another_organizations_document_is_not_found_though_it_is_stored() -> None:
    store = shared_store()
    assert store.contains(GLOBEX)
    b = Bench(vector_store=store, organization="acme", routing=False)
    with pytest.raises(PlanExecutionError, match=r"step 1: not found: am7://globex/data.data/people \(status 404"):
        b.run(rag(vectorReferenceUri=GLOBEX))
    mine = found(b.run(rag(vectorReferenceUri=ACME)))  # the scope holds among acme's own too
    assert mine and {r["uri"] for r in mine} == {ACME}


def test_a_store_whose_scoped_search_ignores_the_scope_still_gives_only_the_organizations_hits() -> None:
    """Whatever store it is given: here one that answers every search from all documents."""

    class Careless(InMemoryVectorStore):
        def search(self, query: str, limit: int, scope: str | None = None) -> Any:
            return super().search(query, limit)

    store = Careless(chunk_words=4)
    for uri, text in ((ACME, "Cy bakes bread."), (GLOBEX, "Bread bread bread, globex's.")):
        store.add_document(uri, text)
    acme = found(Bench(vector_store=store, organization="acme", routing=False).run(rag(vectorReferenceUri=ACME)))
    assert [r["uri"] for r in acme] == [ACME]


def test_permissions_narrow_the_organizations_documents_and_never_widen_them() -> None:
    everything_named = Permissions(vectors=("am7://*",))
    vectors = OrganizationVectors(shared_store(), "acme", everything_named.may_search)
    assert vectors.visible(ACME) and not vectors.visible(GLOBEX) and not vectors.visible("notes/bread.txt")
    assert vectors.contains(ACME) and not vectors.contains(GLOBEX)
    none = OrganizationVectors(shared_store(), "acme", Permissions(vectors=()).may_search)
    assert not none.visible(ACME) and none.contains(ACME)  # "forbidden" is the step's to say, not "not found"
    assert in_organization("am7://acme/data.data/x", "acme") and not in_organization("am7://acme2/data.data/x", "acme")
    assert not in_organization("acme/data.data/x", "acme")


def test_plans_of_two_organizations_under_one_id_stay_apart() -> None:
    with SQLitePlanStore() as store:
        store.save(ChainPlan(object_id="p1", name="acme's"), "acme")
        store.save(ChainPlan(object_id="p1", name="globex's"), "globex")
        store.save(ChainPlan(object_id="p2", name="globex's second"), "globex")
        assert store.load("p1", "acme").name == "acme's"  # type: ignore[union-attr]
        assert store.load("p1", "globex").name == "globex's"  # type: ignore[union-attr]
        assert store.load("p2", "acme") is None
        assert store.list_ids("acme") == ["p1"] and store.list_ids("globex") == ["p1", "p2"]
        store.save(ChainPlan(object_id="p1", name="acme's, again"), "acme")  # replaces acme's only
        assert store.load("p1", "globex").name == "globex's"  # type: ignore[union-attr]


def test_an_executor_saves_its_runs_under_its_organization_beside_anothers_plan_of_that_id() -> None:
    with SQLitePlanStore() as store:
        store.save(ChainPlan(object_id="p1", name="globex's"), "globex")
        b = Bench(store=store, vector_store=shared_store(), organization="acme", routing=False)
        done = b.run(ChainPlan(object_id="p1", name="acme's", steps=[step(1, stepType="RAG_QUERY", ragQuery="bread")]))
        assert done.steps[0].step_status is StepStatus.COMPLETED
        assert store.load("p1", "acme").name == "acme's"  # type: ignore[union-attr]
        assert store.load("p1", "globex").name == "globex's"  # type: ignore[union-attr]
        assert {e.mcp_context_uri for e in b.events} == {"am7://acme/tool.plan/p1"}
