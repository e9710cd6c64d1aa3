"""Word-level diff of an edited summary against its seed summary, as escaped HTML.

Every piece of text goes through html.escape before it is wrapped in a tag, so markup in a summary
is shown, never rendered; the only tags in the output are the <ins>/<del>/<span> written here.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)

INS_STYLE = "background:#d3f5d3;color:#0b4a0b;text-decoration:none;border-radius:3px;padding:0 2px"
DEL_STYLE = (
    "background:#fbd5d5;color:#7a1010;text-decoration:line-through;border-radius:3px;padding:0 2px"
)
BOX_STYLE = (
    "font-family:inherit;font-size:1rem;line-height:1.6;white-space:pre-wrap;"
    "padding:0.6rem 0.8rem;border:1px solid rgba(49,51,63,0.2);border-radius:0.5rem"
)


def tokens(text: str) -> list[str]:
    """Words, single punctuation marks and whitespace runs; ''.join(tokens(t)) == t."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Op:
    kind: str  # "equal" | "insert" | "delete"
    text: str


def diff_ops(seed: str, edited: str) -> list[Op]:
    """The edit from seed to edited, as runs of equal / deleted / inserted text."""
    a, b = tokens(seed), tokens(edited)
    sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    out: list[Op] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.append(Op("equal", "".join(a[i1:i2])))
        else:
            if i2 > i1:
                out.append(Op("delete", "".join(a[i1:i2])))
            if j2 > j1:
                out.append(Op("insert", "".join(b[j1:j2])))
    return out


def diff_html(seed: str, edited: str) -> str:
    """The edited summary with deletions struck through and insertions highlighted."""
    parts = []
    for op in diff_ops(seed, edited):
        t = html.escape(op.text, quote=True)
        if op.kind == "equal":
            parts.append(t)
        elif op.kind == "insert":
            parts.append(f'<ins style="{INS_STYLE}" title="inserted">{t}</ins>')
        else:
            parts.append(f'<del style="{DEL_STYLE}" title="deleted">{t}</del>')
    return f'<div style="{BOX_STYLE}">{"".join(parts)}</div>'


def plain_html(text: str) -> str:
    """Text in the same box as a diff, escaped (for summaries without a seed)."""
    return f'<div style="{BOX_STYLE}">{html.escape(text, quote=True)}</div>'


def diff_counts(seed: str, edited: str) -> tuple[int, int]:
    """(words inserted, words deleted)."""
    ins = dels = 0
    for op in diff_ops(seed, edited):
        n = len(re.findall(r"\w+", op.text))
        if op.kind == "insert":
            ins += n
        elif op.kind == "delete":
            dels += n
    return ins, dels


# --------------------------------------------------------------------------------------------
# annotated spans (FaithBench): the annotated parts of a text highlighted, overlaps included

SPAN_TONES: dict[str, str] = {
    "unwanted": "#fbd5d5",
    "questionable": "#fde9b6",
    "benign": "#d6e6fb",
    "other": "#e4e4e4",
}
SPAN_STYLE = "border-radius:2px;padding:0 1px;color:inherit"
MARK_STYLE = "font-size:0.7em;color:#555;vertical-align:super;margin:0 1px"
_SEVERITY = ("other", "benign", "questionable", "unwanted")


@dataclass(frozen=True)
class Span:
    """One annotated part of a text: characters [start, end), its number, its tone (a key of
    SPAN_TONES) and a one-line description (shown on hover)."""

    start: int
    end: int
    number: int
    tone: str
    title: str


def span_segments(length: int, spans: list[Span]) -> list[tuple[int, int, tuple[int, ...]]]:
    """The text cut at every span boundary: (start, end, indices of the spans covering it); the
    pieces cover [0, length) in order, so overlapping spans give pieces covered by several."""
    cuts = {0, length}
    for s in spans:
        cuts.update((min(max(s.start, 0), length), min(max(s.end, 0), length)))
    edges = sorted(cuts)
    out = []
    for a, b in zip(edges, edges[1:], strict=False):
        if a < b:
            out.append((a, b, tuple(i for i, s in enumerate(spans) if s.start <= a and b <= s.end)))
    return out


def spans_html(text: str, spans: list[Span]) -> str:
    """The text with each annotated part highlighted in its tone (the most severe one where
    spans overlap, underlined once more for each further span) and numbered [n] where it
    ends; escaped, so markup in the text is shown, never rendered."""
    parts = []
    ends: dict[int, list[int]] = {}
    for s in spans:
        ends.setdefault(min(max(s.end, 0), len(text)), []).append(s.number)
    for a, b, covering in span_segments(len(text), spans):
        t = html.escape(text[a:b], quote=True)
        if covering:
            cover = [spans[i] for i in covering]
            tone = max((s.tone for s in cover), key=_tone_rank)
            depth = len(cover) - 1
            line = f";box-shadow:inset 0 -{2 * depth}px 0 rgba(122,16,16,0.55)" if depth else ""
            title = html.escape(" | ".join(f"[{s.number}] {s.title}" for s in cover), quote=True)
            numbers = " ".join(str(s.number) for s in cover)
            t = (
                f'<mark class="fb-span" data-spans="{numbers}" title="{title}" '
                f'style="background:{SPAN_TONES.get(tone, SPAN_TONES["other"])};{SPAN_STYLE}'
                f'{line}">{t}</mark>'
            )
        parts.append(t)
        if b in ends:
            marks = ",".join(str(n) for n in sorted(ends.pop(b)))
            parts.append(f'<span class="fb-mark" style="{MARK_STYLE}">[{marks}]</span>')
    # a span of no characters (start == end) is still numbered where it sits
    for pos in sorted(ends):
        marks = ",".join(str(n) for n in sorted(ends[pos]))
        parts.append(f'<span class="fb-mark" style="{MARK_STYLE}">[{marks}]</span>')
    return f'<div class="fb-spans" style="{BOX_STYLE}">{"".join(parts)}</div>'


def _tone_rank(tone: str) -> int:
    return _SEVERITY.index(tone) if tone in _SEVERITY else 0
