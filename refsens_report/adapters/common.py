"""What the file adapters share: reading their `[record]` keys, and small text helpers for messages."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from refsens_report import formatting
from refsens_report.adapters.label_map import mapped_types
from refsens_report.files import InputPath, UnreadableFile, as_written, is_url, path_problem, remote_path, resolve
from refsens_report.names import name_problem, shown
from refsens_report.options import OptionReader
from refsens_report.record import Item

ITEM_UNITS = ("sentences", "documents")
DUP_KEYS = ("none", "text")


def read_path(
    reader: OptionReader,
    base_dir: Path,
    key: str,
    kind: str = "file",
    required: bool = True,
    remote: bool = False,
    written: str | None = None,
) -> InputPath | None:
    """Read a path relative to the config that must name an existing file or folder (``kind``, or "any").

    A symlink loop, a FIFO or a device is refused here, before anything opens it. With ``remote``, a URL
    (``s3://bucket/record``, any scheme fsspec reads) is a path too, checked the same way through fsspec.
    ``written``: the path to read instead of the key's whole value (the folder of a glob the caller split).
    """
    value = reader.string(key, required=required) if written is None else written
    if value is None:
        return None
    if is_url(value):
        if not remote:
            reader.fail(key, f'a URL is read only as a Parquet record\'s path (format = "parquet"): {value}')
            return None
        try:
            resolved, problem, where, name = remote_path(value), None, "", value
        except UnreadableFile as error:
            reader.fail(key, f"{error.strerror}: {value}")
            return None
    else:
        resolved, problem = resolve(base_dir, value)
        # where a relative path is: it reads differently from every other folder
        where = "" if Path(value).is_absolute() else f" (that is {resolved}, relative to the config's folder)"
        name = as_written(value)
    problem = problem or path_problem(resolved, kind)
    if problem == "not found":
        reader.fail(key, f"{'not' if kind == 'any' else kind + ' not'} found: {value}{where}")
        return None
    if problem:
        reader.fail(key, f"{problem}: {value}")
        return None
    return InputPath(resolved, value, name)


def read_language(reader: OptionReader, default: str | None = None) -> str:
    """Read the one language code every item of the record gets (a string: `no` stays Norwegian)."""
    return reader.string("language", default=default, required=default is None) or (default or "")


def read_labels(reader: OptionReader) -> frozenset[str] | None:
    """Read the optional list of allowed span types; a type outside it is an input error.

    The types `[record] label_map` turns into an allowed type (or drops) are accepted too: the map applies
    before the check (refsens_report.adapters.label_map).
    """
    labels = reader.names("labels")
    return frozenset(labels) | mapped_types(reader.table.get("label_map"), labels) if labels else None


def read_int(reader: OptionReader, key: str, default: int | None, allow_negative: bool = False) -> int | None:
    """Read an optional integer key (no booleans); columns count from 1, negative ones from the end."""
    value = reader.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value == 0 or (value < 0 and not allow_negative):
        allowed = "a non-zero integer (1 = first column, -1 = last)" if allow_negative else "a positive integer"
        reader.fail(key, f"must be {allowed}, got {shown(value)}")
        return default
    return value


def read_bool(reader: OptionReader, key: str, default: bool) -> bool:
    """Read an optional true/false key."""
    value = reader.get(key, default)
    if not isinstance(value, bool):
        reader.fail(key, f"must be true or false, got {shown(value)}")
        return default
    return value


def read_name_table(reader: OptionReader, key: str) -> dict[str, Any]:
    """Read a table keyed by labelling name (``[record.<key>.<name>]``); names must be non-empty."""
    value = reader.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.fail(key, f"must be a table, got {shown(value)}")
        return {}
    for name in value:
        if not name.strip():
            reader.fail(key, "a labelling has an empty name")
    return {name: entry for name, entry in value.items() if name.strip()}


def labelling_entries(
    reader: OptionReader, key: str, required: str, must_be: str, got: Callable[[Any], str] = repr
) -> tuple[list[str], Iterator[tuple[str, dict[str, Any], OptionReader]]]:
    """Read `[record.labellings]` (or a part's): the names as configured, and each usable entry as (name, its
    table, a reader of that table prefixed labellings.<name>), in config order.

    A string entry stands for ``{key = entry}``; an entry that is neither is reported as not ``must_be``
    (shown by ``got``); no table at all is reported as required (``required``: what it maps). The entries are
    read one at a time, as the caller asks, so every problem is reported in config order.
    """
    table = read_name_table(reader, "labellings")
    if not table and isinstance(reader.table.get("labellings", {}), dict):
        reader.fail("labellings", f"is required: {required}")

    def entries() -> Iterator[tuple[str, dict[str, Any], OptionReader]]:
        for name, entry in table.items():
            if isinstance(entry, str):
                entry = {key: entry}
            if not isinstance(entry, dict):
                reader.fail(f"labellings.{name}", f"must be {must_be}, got {got(entry)}")
                continue
            yield name, entry, reader.sub(entry, f"labellings.{name}")

    return list(table), entries()


def read_dup_key(reader: OptionReader) -> bool:
    """Read ``dup_key``: "text" makes items with the same text one duplicate group; "none" (default) not."""
    return reader.choice("dup_key", DUP_KEYS, "none") == "text"


def with_text_dup_keys(items: Iterable[Item], key: str) -> tuple[Item, ...]:
    """Return the items with the audit's duplicate key (``key``) set to a hash of each item's text."""
    return tuple(
        replace(item, meta={**item.meta, key: hashlib.sha256((item.text or "").encode("utf-8")).hexdigest()[:16]})
        for item in items
    )


def check_label(label: str, allowed: frozenset[str] | None) -> str | None:
    """Return why a span type is not acceptable (not allowed, or holding an invisible character), or None."""
    if why := name_problem(label):
        return f"invalid type: {why}"
    if allowed is not None and label not in allowed:
        return f"unknown label '{label}' (record.labels allows {', '.join(sorted(allowed))})"
    return None


def first_difference(left: str, right: str) -> int:
    """Return the first index where two strings differ (the shorter length if one is a prefix)."""
    for index, (a, b) in enumerate(zip(left, right)):
        if a != b:
            return index
    return min(len(left), len(right))


def excerpt(text: str, index: int, width: int = 20) -> str:
    """Return a short quoted excerpt of ``text`` starting at ``index`` for an error message."""
    piece = text[index : index + width]
    if not piece:
        return "the end of the text"
    shown = piece.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return f"'{shown}'" + ("..." if index + width < len(text) else "")


def count(number: int, noun: str, plural: str | None = None) -> str:
    """Return '1 span' / '1,234 spans' (formatting.counted, the one place counts are said)."""
    return formatting.counted(number, noun, plural)


def unique_paths(paths: Iterable[InputPath]) -> tuple[InputPath, ...]:
    """Return the input paths once each (by the file they read), in first-seen order (the record's sources)."""
    seen: dict[Path, InputPath] = {}
    for source in paths:
        seen.setdefault(source.path, source)
    return tuple(seen.values())


def read_names(reader: OptionReader, example: str, unit: str) -> dict[str, str]:
    """Return the ``names`` option: a table renaming each source (a user, a session) to its labelling's name.

    ``example``: an entry for the message ('"alice" = "annotator_a"'); ``unit``: what is renamed ("users").
    Two sources may not share a labelling name.
    """
    value = reader.get("names", {})
    if not isinstance(value, dict) or not all(isinstance(v, str) and v.strip() for v in value.values()):
        reader.fail("names", f"must be a table of labelling names, e.g. {{{example}}}, got {shown(value)}")
        return {}
    names = dict(value)
    for name, times in Counter(names.values()).items():
        if times > 1:
            reader.fail("names", f"gives the name '{name}' to {times} {unit}; each labelling needs its own")
    return names
