"""IOB1, IOB2 and BIOES tags: parse them, detect the scheme, and decode spans the way conlleval reads them.

Decoding follows conlleval (and seqeval's default mode, its Python port) for every scheme, so an invalid
sequence such as ``O I-PER`` in IOB2 or ``B-LOC O`` in BIOES is read exactly as the usual scorer reads it.
The scheme only decides which tags count as *repaired*: those that are invalid under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SCHEMES = ("iob1", "iob2", "bioes")
SCHEME_CHOICES = ("auto",) + SCHEMES
OUTSIDE = ("O", "")

Tag = tuple[str, str]  # (prefix, type): ("O", "") or ("B", "PER"), ("I", ...), ("E", ...), ("S", ...)
TokenSpan = tuple[int, int, str]  # token indices [start, end) and type


def parse_tag(raw: str) -> Tag | None:
    """Return ``(prefix, type)`` for ``O`` or ``B-/I-/E-/S-TYPE``; None for anything else."""
    if raw == "O":
        return OUTSIDE
    prefix, dash, label = raw.partition("-")
    if dash and prefix in ("B", "I", "E", "S") and label.strip() and label == label.strip():
        return prefix, label
    return None


def _continues(previous: Tag, tag: Tag) -> bool:
    """Whether ``tag`` may continue the chunk that ``previous`` belongs to (same type, inside a chunk)."""
    return previous[0] in ("B", "I") and previous[1] == tag[1]


def detect_scheme(sentences: Sequence[Sequence[Tag]]) -> str:
    """Guess the scheme: BIOES if E-/S- occur, else IOB1 when I- starts more chunks than B- does."""
    starts_with_inside = starts_with_begin = 0
    for tags in sentences:
        previous = OUTSIDE
        for tag in tags:
            if tag[0] in ("E", "S"):
                return "bioes"
            if not _continues(previous, tag):
                if tag[0] == "I":
                    starts_with_inside += 1
                elif tag[0] == "B":
                    starts_with_begin += 1
            previous = tag
    return "iob1" if starts_with_inside > starts_with_begin else "iob2"


def invalid_positions(tags: Sequence[Tag], scheme: str) -> list[int]:
    """Return the positions of tags that are invalid under ``scheme`` (each counted once)."""
    bad: list[int] = []
    for position, tag in enumerate(tags):
        previous = tags[position - 1] if position else OUTSIDE
        following = tags[position + 1] if position + 1 < len(tags) else OUTSIDE
        prefix = tag[0]
        if scheme == "iob2":
            invalid = prefix == "I" and not _continues(previous, tag)
        elif scheme == "iob1":
            # IOB1 uses B- only to separate two adjacent chunks of one type
            invalid = prefix == "B" and not (previous[0] in ("B", "I") and previous[1] == tag[1])
        else:
            opens_ok = _continues(previous, tag)
            closes_ok = following[0] in ("I", "E") and following[1] == tag[1]
            invalid = (
                (prefix == "B" and not closes_ok)
                or (prefix == "I" and not (opens_ok and closes_ok))
                or (prefix == "E" and not opens_ok)
            )
        if invalid:
            bad.append(position)
    return bad


def foreign_prefixes(scheme: str) -> tuple[str, ...]:
    """Return the prefixes a configured scheme does not use (E-/S- outside BIOES)."""
    return () if scheme == "bioes" else ("E", "S")


def _end_of_chunk(previous: Tag, tag: Tag) -> bool:
    previous_prefix, previous_type = previous
    prefix, label = tag
    if previous_prefix in ("E", "S"):
        return True
    if previous_prefix in ("B", "I") and prefix in ("B", "S", "O"):
        return True
    return previous_prefix != "O" and previous_type != label


def _start_of_chunk(previous: Tag, tag: Tag) -> bool:
    previous_prefix, previous_type = previous
    prefix, label = tag
    if prefix in ("B", "S"):
        return True
    if prefix in ("E", "I") and previous_prefix in ("E", "S", "O"):
        return True
    return prefix != "O" and previous_type != label


def decode(tags: Sequence[Tag]) -> list[TokenSpan]:
    """Return the chunks ``(first token, last token + 1, type)`` exactly as conlleval reads the tags."""
    spans: list[TokenSpan] = []
    previous = OUTSIDE
    begin = 0
    for position, tag in enumerate([*tags, OUTSIDE]):
        if _end_of_chunk(previous, tag):
            spans.append((begin, position, previous[1]))
        if _start_of_chunk(previous, tag):
            begin = position
        previous = tag
    return spans


def encode_iob2(spans: Sequence[TokenSpan], length: int) -> list[Tag]:
    """Return IOB2 tags for non-overlapping token spans (later spans win where they overlap)."""
    tags: list[Tag] = [OUTSIDE] * length
    for start, end, label in spans:
        tags[start] = ("B", label)
        for position in range(start + 1, end):
            tags[position] = ("I", label)
    return tags


@dataclass
class SchemeReport:
    """What decoding one tag column found: the scheme used and where tags were repaired."""

    scheme: str
    detected: bool
    repaired: int = 0
    first_repair: str | None = None  # where the first repaired tag is, e.g. "test.txt:1234"

    def describe(self) -> str:
        """Return e.g. 'IOB2 (detected), 3 invalid tags read the conlleval way (first at test.txt:12)'."""
        how = "detected" if self.detected else "configured"
        text = f"{self.scheme.upper()} ({how})"
        if self.repaired:
            noun = "tag" if self.repaired == 1 else "tags"
            text += f", {self.repaired:,} invalid {noun} read the conlleval way (first at {self.first_repair})"
        return text
