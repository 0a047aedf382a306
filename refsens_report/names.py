"""What a team-supplied name may contain, and how messages quote values safely.

Names (labellings, span types, languages, item ids, the dataset's name and version, every string of the
config) are printed in the report's sentences and tables, in the HTML and the PDF. A bidirectional control
there (U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT ISOLATE ...) reorders the text around it, and an
invisible character makes two different names look alike, so an audited party could make the audit display
wrong numbers. Such names are refused: every character of the Unicode categories below, not a list of known
code points. Spaces (Zs) stay allowed; the team's free text (the datasheet) is bidi-isolated instead.
"""

from __future__ import annotations

import unicodedata
from typing import Any

REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Cs": "a lone surrogate (not a Unicode character)",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
SHOWN_LIMIT = 200  # characters of a value quoted in a message


def refused_character(name: str) -> tuple[int, str] | None:
    """Return (1-based position, character) of the first character a name may not hold, or None."""
    if name.isprintable():  # the common case, in C: no category Cc, Cf, Cs, Co, Cn, Zl, Zp or Zs
        return None
    for position, character in enumerate(name, start=1):
        if unicodedata.category(character) in REFUSED_CATEGORIES:
            return position, character
    return None  # only spaces such as U+00A0 made it unprintable


def visible(text: str) -> str:
    """Return free text (the config as written, comments included) with its line breaks as newlines and every
    character a name may not hold, tabs aside, written as an escape (``\\u202e``): printed, it can neither
    reorder nor hide what is around it."""
    text = text.replace("\r\n", "\n")
    if all(line.isprintable() for line in text.split("\n")):
        return text
    return "".join(
        character
        if character in "\n\t" or unicodedata.category(character) not in REFUSED_CATEGORIES
        else character.encode("unicode_escape").decode("ascii")
        for character in text
    )


def describe_character(character: str) -> str:
    """Return 'U+202E RIGHT-TO-LEFT OVERRIDE, a bidirectional control' for a message."""
    code = f"U+{ord(character):04X}"
    label = unicodedata.name(character, "")
    kind = (
        "a bidirectional control" if character in BIDI_CONTROLS else REFUSED_CATEGORIES[unicodedata.category(character)]
    )
    return f"{code}{' ' + label if label else ''}, {kind}"


def name_problem(name: str) -> str | None:
    """Return why a name cannot be printed in the report, or None when it can."""
    found = refused_character(name)
    if found is None:
        return None
    position, character = found
    effect = "would reorder the text around it" if character in BIDI_CONTROLS else "is invisible or cannot be printed"
    return (
        f"{shown(name)} contains {describe_character(character)}, at character {position}: names are printed in "
        f"the report, where it {effect}; remove it"
    )


def shown(value: Any, limit: int = SHOWN_LIMIT) -> str:
    """Return ``repr(value)`` for a message, cut after about ``limit`` characters, whatever its size or depth.

    repr escapes every unprintable character (so a control cannot act on the terminal); a value nested a
    thousand levels deep or a million items long is cut instead of exhausting the stack or the screen.
    """
    pieces: list[str] = []
    budget = [limit]

    def emit(text: str) -> bool:
        pieces.append(text)
        budget[0] -= len(text)
        return budget[0] >= 0

    def walk(item: Any) -> bool:
        if isinstance(item, str):
            return emit(repr(item) if len(item) <= limit else repr(item[:limit]) + "...")
        if isinstance(item, dict):
            if not emit("{"):
                return False
            for index, (key, entry) in enumerate(item.items()):
                if (index and not emit(", ")) or not walk(key) or not emit(": ") or not walk(entry):
                    return False
            return emit("}")
        if isinstance(item, (list, tuple)):
            opening, closing = ("[", "]") if isinstance(item, list) else ("(", ",)" if len(item) == 1 else ")")
            if not emit(opening):
                return False
            for index, entry in enumerate(item):
                if (index and not emit(", ")) or not walk(entry):
                    return False
            return emit(closing)
        try:
            return emit(repr(item))
        except ValueError:  # an integer beyond Python's 4,300-digit limit for printing
            return emit(f"<an integer of {item.bit_length():,} bits>")

    if walk(value):
        return "".join(pieces)
    return "".join(pieces)[:limit] + "..."
