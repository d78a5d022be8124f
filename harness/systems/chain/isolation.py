"""Organization isolation of a vector store (seed 001 §6.2, "URI-based object references";
Group M ``testChainOrgScopingEnforced``): what one organization's RAG steps see of a
store that may hold other organizations' documents too.

A document belongs to the organization its ``am7://<organization>/<type>/<id>`` URI
names; a document whose URI names no organization belongs to none, so no RAG step finds
it. ``OrganizationVectors`` is the store as one organization sees it, whatever store it
wraps: ``contains`` is false for another organization's document (a scoped search of it
is "not found", never "forbidden"), and a search returns only the organization's
documents that the caller may search, asking the store again for more when others'
hits took the room.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.events import settled
from harness.systems.chain.uris import Am7Uri
from harness.systems.chain.vectors import VectorHit, VectorStore

__all__ = ["OrganizationVectors", "in_organization"]


def in_organization(uri: str, organization: str) -> bool:
    """Does ``uri`` name an object of ``organization``? (Not an ``am7://`` URI: no.)"""
    try:
        return Am7Uri.parse(uri).organization == organization
    except ValueError:
        return False


class OrganizationVectors:
    """``store`` as ``organization`` sees it, limited to the documents ``may_search`` allows."""

    def __init__(self, store: VectorStore, organization: str, may_search: Callable[[str], bool]) -> None:
        self.store = store
        self.organization = organization
        self.may_search = may_search

    def visible(self, uri: str) -> bool:
        """Is document ``uri`` one of the organization's that the caller may search?"""
        return in_organization(uri, self.organization) and self.may_search(uri)

    def contains(self, uri: str) -> bool:
        """Is ``uri`` a document of the organization in the store (permissions aside)?"""
        return in_organization(uri, self.organization) and self.store.contains(uri)

    async def search(self, query: str, limit: int, scope: str | None = None) -> list[VectorHit]:
        """At most ``limit`` visible hits: when the store's answer holds documents the
        caller may not see, it is asked again for more, until the limit is met or the
        store has no more."""
        wanted = max(limit, 1)
        while True:
            hits = list(await settled(self.store.search(query, wanted, scope)))
            kept = [h for h in hits if self.visible(h.uri)]
            if len(kept) >= limit or len(hits) < wanted:
                return kept[:limit]
            wanted *= 2
