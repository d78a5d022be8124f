"""The identity store and adapter without HTTP: organization scoping, uniqueness,
memberships that follow deletions, references by am7:// URI, and scenario seeding."""

from __future__ import annotations

from pathlib import Path

import pytest
from scim2_models import InvalidValueException, NotFoundException, UniquenessException

from harness.scenarios.model import ScenarioError, load_scenario
from harness.systems.identity import DuplicateName, Member, ScimAdapter, SQLiteIdentityStore
from harness.systems.identity.seeding import OrganizationSeed, scenario_identity_store, seeded_identity_tools
from harness.systems.identity.tools import IdentityToolError


@pytest.fixture
def store() -> SQLiteIdentityStore:
    with SQLiteIdentityStore() as store:
        yield store


def test_each_organization_sees_only_its_own(store: SQLiteIdentityStore) -> None:
    acme, globex = ScimAdapter(store, "acme"), ScimAdapter(store, "globex")
    ada = acme.create("User", {"userName": "ada"})
    assert ada.id is not None
    with pytest.raises(NotFoundException) as missing:
        globex.get("User", ada.id)
    with pytest.raises(NotFoundException) as unknown:
        globex.get("User", "no-such-id")
    assert str(missing.value).replace(ada.id, "X") == str(unknown.value).replace("no-such-id", "X")
    assert globex.search("User", {})[0].total_results == 0
    globex.create("User", {"userName": "ada"})  # names are unique per organization only
    with pytest.raises(UniquenessException):
        acme.create("User", {"userName": "ADA"})


def test_a_deleted_user_leaves_its_groups(store: SQLiteIdentityStore) -> None:
    acme = ScimAdapter(store, "acme")
    ada = acme.create("User", {"userName": "ada"})
    group = acme.create("Group", {"displayName": "eng", "members": [{"value": ada.id}]})
    assert group.id is not None and ada.id is not None
    assert [m.value for m in acme.get("Group", group.id).members or []] == [ada.id]
    acme.delete("User", ada.id)
    after = acme.get("Group", group.id)
    assert after.members is None
    assert after.meta is not None and after.meta.version == 'W/"2"'


def test_a_member_must_be_of_the_organization(store: SQLiteIdentityStore) -> None:
    theirs = ScimAdapter(store, "globex").create("User", {"userName": "eve"})
    with pytest.raises(InvalidValueException, match="no user or group"):
        ScimAdapter(store, "acme").create("Group", {"displayName": "eng", "members": [{"value": theirs.id}]})


def test_references_by_am7_uri(store: SQLiteIdentityStore) -> None:
    acme = ScimAdapter(store, "acme")
    ada = acme.create("User", {"userName": "ada"})
    assert ada.id is not None
    assert acme.get_uri(acme.uri("User", ada.id)).user_name == "ada"
    with pytest.raises(NotFoundException, match="not found: am7://globex/system.user/"):
        acme.resolve("User", f"am7://globex/system.user/{ada.id}")
    with pytest.raises(NotFoundException):
        acme.resolve("User", f"am7://acme/auth.group/{ada.id}")  # not a group


def test_scenario_seeds_are_deterministic_and_named_members_resolve() -> None:
    seed = {
        "default": OrganizationSeed(
            users=[{"userName": "ada"}, {"userName": "cy"}],
            groups=[{"displayName": "eng", "members": [{"value": "cy"}]}],
        )
    }
    first, second = scenario_identity_store(seed), scenario_identity_store(seed)
    group = ScimAdapter(first, "default").get("Group", "group-1")
    assert [m.value for m in group.members or []] == ["user-2"]
    assert ScimAdapter.dump(group) == ScimAdapter.dump(ScimAdapter(second, "default").get("Group", "group-1"))
    first.close()
    second.close()


def test_a_bad_seed_is_refused_when_the_scenario_loads(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "runner: chain\nprompt: p\nidentity:\n  acme:\n    users:\n      - {userName: ada}\n      - {displayName: x}\n",
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError, match=r"bad\.yaml:5: identity\.acme: .*users\[1\]: .*userName"):
        load_scenario(path)


def test_tools_say_the_status_of_a_refusal() -> None:
    tools = seeded_identity_tools({"default": OrganizationSeed(users=[{"userName": "ada"}])})
    with pytest.raises(IdentityToolError, match=r"already taken .*\(status 409, uniqueness\)"):
        tools["createUser"]("ada")
    with pytest.raises(IdentityToolError, match=r"not found: nobody .*\(status 404\)"):
        tools["updateUser"]("nobody", {"title": "x"})
    updated = tools["updateUser"]("user-1", {"title": "engineer"})
    assert updated["title"] == "engineer"
    assert tools["findUsers"]('title eq "engineer"')["totalResults"] == 1


def test_the_same_ids_in_two_organizations_stay_apart(store: SQLiteIdentityStore) -> None:
    """Every read, change and deletion is scoped: each organization holds a user ``u1``,
    a group ``g1`` and ``u1`` in ``g1``, under the very same ids."""
    for org in ("acme", "globex"):
        inserted = store.insert(org, "User", "u1", {"userName": f"{org}-ada"})
        assert inserted == store.get(org, "User", "u1") and inserted.version == 1
        store.insert(org, "Group", "g1", {"displayName": f"{org}-eng"})
        store.set_members(org, "g1", [Member("u1", "User", f"{org}-ada")])
    acme = store.get("acme", "User", "u1")
    assert acme is not None and acme.attributes == {"userName": "acme-ada"}
    assert [r.attributes["userName"] for r in store.list("globex", "User")] == ["globex-ada"]
    assert store.kind_of("acme", "g1") == "Group" and store.kind_of("acme", "u2") is None
    assert [m.display for m in store.members("globex", "g1")] == ["globex-ada"]
    assert store.groups_of("acme", "u1") == ["g1"]

    updated = store.update("acme", "User", "u1", {"userName": "acme-ada2"})
    assert updated is not None and (updated.id, updated.attributes, updated.version) == (
        "u1",
        {"userName": "acme-ada2"},
        2,
    )
    store.touch("acme", "Group", "g1")
    assert store.get("globex", "User", "u1").attributes == {"userName": "globex-ada"}  # type: ignore[union-attr]
    assert store.get("globex", "User", "u1").version == 1  # type: ignore[union-attr]
    assert store.get("globex", "Group", "g1").version == 1  # type: ignore[union-attr]
    assert store.update("globex", "User", "u9", {}) is None
    store.insert("acme", "User", "u3", {"userName": "acme-ada"})  # the renamed user's old name is free
    with pytest.raises(DuplicateName):  # and its new one is taken
        store.insert("acme", "User", "u4", {"userName": "ACME-ada2"})

    assert store.delete("acme", "User", "u1")
    assert store.get("acme", "User", "u1") is None and store.members("acme", "g1") == []
    assert store.get("globex", "User", "u1") is not None
    assert [m.id for m in store.members("globex", "g1")] == ["u1"] and store.groups_of("globex", "u1") == ["g1"]
    assert store.get("globex", "Group", "g1").version == 1  # type: ignore[union-attr]
    store.set_members("acme", "g1", [])
    assert [m.id for m in store.members("globex", "g1")] == ["u1"]

    acme_scim, globex_scim = ScimAdapter(store, "acme"), ScimAdapter(store, "globex")
    assert globex_scim.get("User", "u1").user_name == "globex-ada"
    with pytest.raises(NotFoundException):
        acme_scim.get("User", "u1")
    assert [g.display for g in globex_scim.get("User", "u1").groups or []] == ["globex-eng"]
