"""The review page: one static HTML file, no script, no request to anything.

Each changed golden is a section: its header lines, then its events as a timeline,
the HEAD version on the left and the working tree's on the right, aligned by a line
diff. A row shows its sequence number, type, persistence state (a coloured badge) and
key fields; changed rows are highlighted and their changed fields marked; a
tool_use/tool_call row links to the tool_result with the same normalised id, and back.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from harness.golden.review.changes import GoldenChange
from harness.golden.review.rows import GoldenRow, Pair, pair_rows, parse_golden

__all__ = ["render_review_page"]

_FIELD = re.compile(r'[\w.]+=(?:"(?:[^"\\]|\\.)*"|\S+)')
_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{padding:16px 24px;background:#1d2330;color:#fff}
header h1{margin:0 0 4px;font-size:20px} header a{color:#9cc3ff}
nav ol{margin:8px 0 0;padding-left:20px}
section.golden{margin:20px 24px;background:#fff;border:1px solid #d8dce3;border-radius:6px;overflow:hidden}
section.golden h2{margin:0;padding:10px 14px;font-size:15px;background:#eef1f5;font-family:ui-monospace,monospace}
.status{font:12px system-ui;padding:2px 8px;border-radius:10px;margin-left:8px;background:#d8dce3}
.status.new{background:#c9f2d0}.status.deleted{background:#f9c9c9}.status.changed{background:#fde7b0}
.headers{display:grid;grid-template-columns:1fr 1fr;font:12px ui-monospace,monospace;color:#5a6475}
.headers pre{margin:0;padding:6px 14px;white-space:pre-wrap}
table{width:100%;border-collapse:collapse;table-layout:fixed}
th{font-size:12px;text-align:left;padding:6px 8px;background:#f2f4f7;border-bottom:1px solid #d8dce3}
td{vertical-align:top;padding:4px 8px;font:12px/1.4 ui-monospace,monospace;word-break:break-word}
col.seq{width:44px} col.type{width:150px} col.state{width:100px}
td.seq{text-align:right;color:#5a6475;position:relative;padding-right:14px}
td.seq.side-after{border-left:2px solid #d8dce3}
td.type{font-weight:600}
td.seq.event::after{content:"";position:absolute;right:2px;top:9px;width:8px;height:8px;border-radius:50%;background:#8a94a6}
tr.changed{background:#fff6dc} tr.added td.side-after,tr.added td.after{background:#e3f8e6}
tr.removed td.side-before,tr.removed td.before{background:#fde4e4}
mark{background:#ffd45c;border-radius:2px;padding:0 1px}
.badge{display:inline-block;font:11px system-ui;padding:1px 6px;border-radius:8px;background:#e4e7ec}
.badge.persisted{background:#c9e4ff}.badge.pending{background:#fde7b0}.badge.transient{background:#eceff3;color:#5a6475}
a.link{font:11px system-ui;margin-left:6px;white-space:nowrap}
:target{outline:2px solid #3b82f6}
p.none{margin:24px}
"""


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")


def _links(rows: Sequence[GoldenRow], slug: str, side: str) -> dict[int, str]:
    """Per row index: the link to its partner (tool_use → tool_result and back)."""
    uses: dict[str, int] = {}
    results: dict[str, int] = {}
    for i, row in enumerate(rows):
        for link in row.links:
            (results if row.is_result else uses).setdefault(link, i)
    out: dict[int, str] = {}
    for link, use in uses.items():
        if link in results:
            result = results[link]
            out[use] = (
                f'<a class="link to-result" href="#{slug}-{side}-{result}">'
                f"→ {html.escape(rows[result].type)} (seq {html.escape(rows[result].seq)})</a>"
            )
            out[result] = (
                f'<a class="link to-use" href="#{slug}-{side}-{use}">'
                f"← {html.escape(rows[use].type)} (seq {html.escape(rows[use].seq)})</a>"
            )
    return out


def _fields(row: GoldenRow, other: GoldenRow | None, changed: bool) -> str:
    if not changed or other is None:
        return html.escape(row.fields or row.line)
    theirs = set(_FIELD.findall(other.fields))
    out, last = [], 0
    for match in _FIELD.finditer(row.fields):
        out.append(html.escape(row.fields[last : match.start()]))
        token = html.escape(match.group(0))
        out.append(token if match.group(0) in theirs else f"<mark>{token}</mark>")
        last = match.end()
    out.append(html.escape(row.fields[last:]))
    return "".join(out)


def _cells(
    row: GoldenRow | None,
    other: GoldenRow | None,
    pair: Pair,
    side: str,
    slug: str,
    index: int | None,
    links: dict[int, str],
) -> str:
    if row is None:
        return f'<td class="seq side-{side}"></td><td class="type {side}"></td><td class="state {side}"></td><td class="{side}"></td>'
    anchor = f' id="{slug}-{side}-{index}"' if index is not None else ""
    link = links.get(index, "") if index is not None else ""
    badge = (
        f'<span class="badge {html.escape(row.persistence)}">{html.escape(row.persistence)}</span>'
        if row.persistence
        else ""
    )
    return (
        f'<td class="seq event side-{side}"{anchor}>{html.escape(row.seq)}</td>'
        f'<td class="type {side}">{html.escape(row.type)}</td><td class="state {side}">{badge}</td>'
        f'<td class="fields {side}">{_fields(row, other, pair.state == "changed")}{link}</td>'
    )


def _section(change: GoldenChange) -> str:
    slug = _slug(change.path)
    before_header, before = parse_golden(change.before)
    after_header, after = parse_golden(change.after)
    index = {"before": {id(r): i for i, r in enumerate(before)}, "after": {id(r): i for i, r in enumerate(after)}}
    links = {"before": _links(before, slug, "before"), "after": _links(after, slug, "after")}
    body = []
    for pair in pair_rows(before, after):
        left = _cells(
            pair.before, pair.after, pair, "before", slug, index["before"].get(id(pair.before)), links["before"]
        )
        right = _cells(pair.after, pair.before, pair, "after", slug, index["after"].get(id(pair.after)), links["after"])
        body.append(f'<tr class="timeline {pair.state}" data-state="{pair.state}">{left}{right}</tr>')
    headers = ""
    if before_header != after_header:
        headers = (
            f'<div class="headers"><pre>{html.escape(chr(10).join(before_header))}</pre>'
            f"<pre>{html.escape(chr(10).join(after_header))}</pre></div>"
        )
    return (
        f'<section class="golden" id="{slug}" data-path="{html.escape(change.path)}" data-status="{change.status}">'
        f'<h2>{html.escape(change.path)}<span class="status {change.status}">{change.status}</span></h2>{headers}'
        "<table><colgroup>" + '<col class="seq"><col class="type"><col class="state"><col>' * 2 + "</colgroup>"
        '<thead><tr><th colspan="4">HEAD</th><th colspan="4">working tree</th></tr>'
        "<tr><th>SEQ</th><th>EVENT TYPE</th><th>PERSISTENCE</th><th>KEY FIELDS</th>"
        "<th>SEQ</th><th>EVENT TYPE</th><th>PERSISTENCE</th><th>KEY FIELDS</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></section>"
    )


def render_review_page(changes: Sequence[GoldenChange], *, title: str = "Golden review") -> str:
    """The page for ``changes`` (see the module docstring)."""
    if changes:
        summary = f"{len(changes)} golden{'s' if len(changes) != 1 else ''} differ from git HEAD."
        listing = "".join(
            f'<li><a href="#{_slug(c.path)}">{html.escape(c.path)}</a> ({c.status})</li>' for c in changes
        )
        content = "".join(_section(c) for c in changes)
        nav = f"<nav><ol>{listing}</ol></nav>"
    else:
        summary, nav, content = "No golden differs from git HEAD.", "", '<p class="none">Nothing to review.</p>'
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{summary}</p>{nav}</header>{content}</body></html>\n"
    )
