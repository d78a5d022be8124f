"""Writing one ``## `` section of a Markdown file (``docs/performance.md``) in place."""

from __future__ import annotations

from pathlib import Path

__all__ = ["replace_section"]


def replace_section(doc: Path, heading: str, section: str) -> None:
    """Put ``section`` (which starts with ``heading``) where ``heading``'s section is in
    ``doc``, or at its end; the other sections stay as they are."""
    # Re-read right before writing: another section may have been written meanwhile.
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Performance\n"
    start = text.find(heading + "\n")
    if start < 0 and text.endswith(heading):
        start = len(text) - len(heading)
    if start >= 0:
        following = text.find("\n## ", start + len(heading))
        end = len(text) if following < 0 else following + 1
        text = text[:start] + section + ("\n" + text[end:] if end < len(text) else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
