"""Attachments: a file store with owners, checked before any model call."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from harness.exceptions import HarnessError

__all__ = ["FileAccessDenied", "FileStore", "FileUsage", "StoredFile"]


class FileAccessDenied(HarnessError, PermissionError):
    """The user may not use this file (it is someone else's, or does not exist)."""


@dataclass(frozen=True)
class StoredFile:
    file_id: str
    name: str
    content: str
    owner: str


@dataclass(frozen=True)
class FileUsage:
    file_id: str
    session_id: str
    message_id: str | None


class FileStore:
    """Files by id, each with an owner; usage is recorded per message."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, StoredFile] = {}
        self._usage: list[FileUsage] = []

    def add(self, file_id: str, name: str, content: str, owner: str) -> StoredFile:
        stored = StoredFile(file_id, name, content, owner)
        with self._lock:
            self._files[file_id] = stored
        return stored

    def open_for(self, file_id: str, user_id: str) -> StoredFile:
        """The file, if ``user_id`` owns it; else ``FileAccessDenied`` (the same for a
        missing file, so that ids of other users' files are not revealed)."""
        with self._lock:
            stored = self._files.get(file_id)
        if stored is None or stored.owner != user_id:
            raise FileAccessDenied(f"Access denied: file {file_id!r} is not available to user {user_id!r}.")
        return stored

    def record_usage(self, file_id: str, session_id: str, message_id: str | None) -> None:
        with self._lock:
            self._usage.append(FileUsage(file_id, session_id, message_id))

    @property
    def usage(self) -> list[FileUsage]:
        with self._lock:
            return list(self._usage)
