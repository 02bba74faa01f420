"""The report's Markdown as HTML, for the browsable report (experiments/analysis/html_page.py).

The lab writes its own Markdown (experiments/analysis/markdown.py), so this reads exactly the
subset it writes: headings, pipe tables, block quotes, bullet lists, images, paragraphs, and
inline code, links, bold and _emphasis_. Converting findings.md itself, rather than rendering the
tables a second way, keeps the page and the Markdown showing the same numbers. Every piece of
text is escaped; a table cell holding a row id becomes a link to the texts behind that row."""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterator

_INLINE = re.compile(
    r"`(?P<code>[^`]*)`"
    r"|!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)"
    r"|\[(?P<label>[^\]]*)\]\((?P<href>[^)\s]+)\)"
    r"|\*\*(?P<bold>.+?)\*\*"
    r"|(?<![\w])_(?P<em>[^_\n]+?)_(?![\w])"
)
_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")
# Only relative paths, in-page anchors and web addresses are linked: model-written or
# user-written text must never become a javascript: URL.
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")


def slug(text: str) -> str:
    """A heading's anchor: lower case words joined by '-'."""
    return re.sub(r"[^\w]+", "-", text.lower()).strip("-") or "section"


def _url(url: str) -> str | None:
    """The URL escaped for an attribute, or None for a scheme other than http(s)."""
    scheme = _SCHEME.match(url)
    if scheme and scheme[1].lower() not in ("http", "https"):
        return None
    return html.escape(url, quote=True)


def inline(text: str) -> str:
    """One line of Markdown as escaped HTML."""
    out: list[str] = []
    at = 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[at : m.start()], quote=False))
        at = m.end()
        if m["code"] is not None:
            out.append(f"<code>{html.escape(m['code'], quote=False)}</code>")
        elif m["src"] is not None:
            src = _url(m["src"])
            alt = html.escape(m["alt"], quote=True)
            out.append(f'<img src="{src}" alt="{alt}">' if src else html.escape(m[0]))
        elif m["href"] is not None:
            href = _url(m["href"])
            label = inline(m["label"])
            out.append(f'<a href="{href}">{label}</a>' if href else html.escape(m[0]))
        elif m["bold"] is not None:
            out.append(f"<strong>{inline(m['bold'])}</strong>")
        else:
            out.append(f"<em>{inline(m['em'])}</em>")
    out.append(html.escape(text[at:], quote=False))
    return "".join(out)


def _cells(line: str) -> list[str]:
    """A table line's cells; markdown.cell writes a pipe inside a cell as '\\|'."""
    body = line.strip().removeprefix("|").removesuffix("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def row_link(row_id: str) -> str:
    safe = html.escape(row_id, quote=True)
    return f'<a class="row-link" href="#row-{safe}" data-row="{safe}">{safe}</a>'


def _table(lines: list[str], row_ids: Collection[str]) -> str:
    head, body = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    out = ['<div class="table-wrap"><table>', "<thead><tr>"]
    out += [f"<th>{inline(c)}</th>" for c in head]
    out.append("</tr></thead><tbody>")
    for cells in body:
        shown = [row_link(c) if c in row_ids else inline(c) for c in cells]
        # a cell of several words of prose may wrap; numbers and ids never do
        kinds = [' class="prose"' if len(c.split()) > 6 else "" for c in cells]
        out.append(
            "<tr>"
            + "".join(f"<td{k}>{c}</td>" for k, c in zip(kinds, shown, strict=True))
            + "</tr>"
        )
    out.append("</tbody></table></div>")
    return "".join(out)


def _blocks(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """(kind, lines) for each block: heading, table, quote, list, image, paragraph."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _HEADING.match(line):
            yield "heading", [line]
            i += 1
            continue
        kinds = (
            ("table", lambda s: s.startswith("|")),
            ("quote", lambda s: s.startswith(">")),
            ("list", lambda s: s.startswith("- ")),
        )
        for kind, belongs in kinds:
            if belongs(line):
                j = i
                while j < len(lines) and belongs(lines[j]):
                    j += 1
                yield kind, lines[i:j]
                i = j
                break
        else:
            j = i
            while (
                j < len(lines)
                and lines[j].strip()
                and not _HEADING.match(lines[j])
                and not lines[j].startswith(("|", ">", "- "))
            ):
                j += 1
            yield "paragraph", lines[i:j]
            i = j


def to_html(markdown: str, row_ids: Collection[str] = ()) -> str:
    """The lab's Markdown as an HTML fragment; cells equal to a row id link to its texts."""
    out: list[str] = []
    for kind, lines in _blocks(markdown.splitlines()):
        if kind == "heading":
            m = _HEADING.match(lines[0])
            assert m is not None
            level, text = len(m[1]), m[2]
            out.append(f'<h{level} id="{slug(text)}">{inline(text)}</h{level}>')
        elif kind == "table" and len(lines) >= 2 and _SEPARATOR.match(lines[1]):
            out.append(_table(lines, row_ids))
        elif kind == "quote":
            text = "\n".join(line.removeprefix(">").removeprefix(" ") for line in lines)
            out.append(f"<blockquote>{html.escape(text, quote=False)}</blockquote>")
        elif kind == "list":
            items = "".join(f"<li>{inline(line[2:])}</li>" for line in lines)
            out.append(f"<ul>{items}</ul>")
        else:
            out.append(f"<p>{'<br>'.join(inline(line) for line in lines)}</p>")
    return "\n".join(out)
