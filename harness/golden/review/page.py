"""The review page: one HTML file. Static (``--static``): no script, no request to
anything. Served (``python -m harness review``): the same page with accept / reject on
each golden and each changed row, and one script of the server's own (``server``).

Each changed golden is a section: its header lines, then its events as a timeline,
the HEAD version on the left and the working tree's on the right, aligned by a line
diff. A row shows its sequence number, type, persistence state (a coloured badge) and
key fields; changed rows are highlighted and their changed fields marked; a
call row links to the result row carrying the same normalised id (of whatever id field
the events have), and back. The SEQ and PERSISTENCE columns show only for goldens whose
events have them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from harness.golden.review.changes import GoldenChange
from harness.golden.review.decisions import GoldenDecisions
from harness.golden.review.rows import GoldenRow, Pair, pair_rows, parse_golden
from harness.golden.review.wording import goldens_differ

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
table.headers{font:12px ui-monospace,monospace;color:#5a6475} table.headers td{font:inherit;width:50%}
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
.hide-seq .seq,.hide-state .state{display:none}
td.decide{white-space:nowrap;width:150px} col.decide{width:150px}
button{font:12px system-ui;margin:0 2px;padding:2px 8px;border:1px solid #8a94a6;border-radius:4px;background:#fff}
button.accept{border-color:#2f9e44} button.reject{border-color:#c92a2a}
[data-decision=accept]>td.decide button.accept,h2[data-decision=accept] button.accept{background:#c9f2d0}
[data-decision=reject]>td.decide button.reject,h2[data-decision=reject] button.reject{background:#f9c9c9}
#status{margin:4px 0 0;min-height:1.4em;color:#ffd45c}
"""
_SCRIPT_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'"
_STATIC_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_FALLBACK_TITLE = "records the mock's fallback reply: refused"


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")


def _named(row: GoldenRow) -> str:
    seq = f" (seq {html.escape(row.seq)})" if row.seq not in ("", "-", "*") else ""
    return html.escape(row.type) + seq


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
            out[use] = f'<a class="link to-result" href="#{slug}-{side}-{result}">→ {_named(rows[result])}</a>'
            out[result] = f'<a class="link to-use" href="#{slug}-{side}-{use}">← {_named(rows[use])}</a>'
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


def _buttons(review: GoldenDecisions | None, key: str) -> str:
    if review is None:
        return ""
    hunk = next((h for h in review.hunks if h.key == key), None)
    refused = hunk.records_fallback if hunk else any(h.records_fallback for h in review.hunks)
    accept = f' disabled title="{_FALLBACK_TITLE}"' if refused else ""
    return (
        f'<button type="button" class="accept" data-decision="accept"{accept}>accept</button>'
        '<button type="button" class="reject" data-decision="reject">reject</button>'
    )


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


def _section(change: GoldenChange, review: GoldenDecisions | None) -> str:
    slug = _slug(change.path)
    before_header, before = parse_golden(change.before)
    after_header, after = parse_golden(change.after)
    index = {"before": {id(r): i for i, r in enumerate(before)}, "after": {id(r): i for i, r in enumerate(after)}}
    links = {"before": _links(before, slug, "before"), "after": _links(after, slug, "after")}
    pairs = pair_rows(before, after)  # the order GoldenDecisions keys its hunks by
    rowwise = review is not None and all(h.key != "golden" for h in review.hunks)
    body = []
    for i, pair in enumerate(pairs):
        left = _cells(
            pair.before, pair.after, pair, "before", slug, index["before"].get(id(pair.before)), links["before"]
        )
        right = _cells(pair.after, pair.before, pair, "after", slug, index["after"].get(id(pair.after)), links["after"])
        decide, key = "", ""
        if review is not None:
            changed = rowwise and pair.state != "same"
            decide = f'<td class="decide">{_buttons(review, f"row-{i}") if changed else ""}</td>'
            key = f' data-key="row-{i}"' if changed else ""
        body.append(f'<tr class="timeline {pair.state}" data-state="{pair.state}"{key}>{left}{right}{decide}</tr>')
    headers = ""
    if before_header != after_header:
        decide = f'<td class="decide">{_buttons(review, "header")}</td>' if rowwise else ""
        headers = (
            '<table class="headers"><tr data-key="header">'
            f"<td><pre>{html.escape(chr(10).join(before_header))}</pre></td>"
            f"<td><pre>{html.escape(chr(10).join(after_header))}</pre></td>{decide}</tr></table>"
        )
    rows = before + after
    hidden = [
        name
        for name, attr in (("seq", "seq"), ("state", "persistence"))
        if all(getattr(r, attr) in ("", "-") for r in rows) and rows
    ]
    classes = "".join(f" hide-{name}" for name in hidden)
    proposed = review is not None and review.change.file is not None and review.undecided_side == "before"
    sides = ("golden", "proposed") if proposed else ("HEAD", "working tree")
    extra_col = '<col class="decide">' if review is not None else ""
    extra_th = "<th></th>" if review is not None else ""
    whole = f'<span class="decide">{_buttons(review, "golden")}</span>' if review is not None else ""
    return (
        f'<section class="golden{classes}" id="{slug}" data-path="{html.escape(change.path)}" '
        f'data-status="{change.status}"><h2 data-key="golden">{html.escape(change.path)}'
        f'<span class="status {change.status}">{change.status}</span>{whole}</h2>{headers}'
        "<table><colgroup>"
        + '<col class="seq"><col class="type"><col class="state"><col>' * 2
        + extra_col
        + f'</colgroup><thead><tr><th colspan="4">{sides[0]}</th><th colspan="4">{sides[1]}</th>{extra_th}</tr>'
        '<tr><th class="seq">SEQ</th><th class="type">EVENT TYPE</th><th class="state">PERSISTENCE</th>'
        '<th>KEY FIELDS</th><th class="seq">SEQ</th><th class="type">EVENT TYPE</th>'
        f'<th class="state">PERSISTENCE</th><th>KEY FIELDS</th>{extra_th}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></section>"
    )


def render_review_page(
    changes: Sequence[GoldenChange] | Sequence[GoldenDecisions],
    *,
    title: str = "Golden review",
    against: str = " from git HEAD",
    script: str | None = None,
) -> str:
    """The page for ``changes`` (see the module docstring). Given ``GoldenDecisions``
    and the URL of the review ``script``, each golden and changed row gets accept /
    reject buttons; otherwise the page is static."""
    reviews = [c if isinstance(c, GoldenDecisions) else None for c in changes]
    plain = [c.change if isinstance(c, GoldenDecisions) else c for c in changes]
    interactive = script is not None and all(r is not None for r in reviews)
    if not interactive:
        reviews = [None] * len(plain)
    if plain:
        summary = f"{goldens_differ(len(plain), against)}."
        listing = "".join(f'<li><a href="#{_slug(c.path)}">{html.escape(c.path)}</a> ({c.status})</li>' for c in plain)
        content = "".join(_section(c, r) for c, r in zip(plain, reviews, strict=True))
        nav = f"<nav><ol>{listing}</ol></nav>"
    else:
        summary, nav, content = f"{goldens_differ(0, against)}.", "", '<p class="none">Nothing to review.</p>'
    csp, tail = _STATIC_CSP, ""
    if interactive:
        csp = _SCRIPT_CSP
        tail = f'<script src="{html.escape(script or "")}"></script>'
        nav += '<p id="status" role="status"></p><p><button type="button" id="finish">Finish the review</button></p>'
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{summary}</p>{nav}</header>{content}{tail}</body></html>\n"
    )
