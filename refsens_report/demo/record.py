"""The simulated record: latent prompts, then the annotation pipeline run over them (docs/simulation.md).

``simulate_rows`` returns the record as canonical JSON objects; the same parameters and seed always give
the same rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from refsens_report.demo.parameters import (
    CONFUSED_INDEX,
    CONVENTION_OF_TYPE,
    CONVENTIONS,
    DECOY_KINDS,
    DECOY_LABEL,
    LABELS,
    MODEL_STREAM,
    LanguageParameters,
    ModelParameters,
    SimulationParameters,
)
from refsens_report.demo.vocabulary import VOCABULARIES, decoy_text, mention_text


@dataclass(frozen=True)
class _LatentItems:
    """One language's prompts before any annotator saw them: texts, and their units in columns.

    A unit is a PII mention or a decoy. Units are grouped by item (``unit_offsets``) in text order; each
    has two candidate boundaries, ``short`` (without the optional part) and ``long`` (with it), equal when
    the mention has no optional part.
    """

    texts: list[str]
    unit_offsets: np.ndarray  # item i's units are unit_offsets[i]:unit_offsets[i + 1]
    mentions: np.ndarray  # PII mentions per item (the rest of its units are decoys)
    label: np.ndarray  # index into LABELS
    convention: np.ndarray  # index into CONVENTIONS, -1 when the type has no optional part
    is_decoy: np.ndarray
    short_start: np.ndarray
    short_end: np.ndarray
    long_start: np.ndarray
    long_end: np.ndarray


def _latent_items(
    language: LanguageParameters, count: int, parameters: SimulationParameters, rng: np.random.Generator
) -> _LatentItems:
    """Write ``count`` prompts of one language, each with its latent units and their offsets."""
    vocabulary = VOCABULARIES[language.code]
    pii_labels = [label for label, _ in parameters.type_weights]
    weights = np.array([weight for _, weight in parameters.type_weights])
    span_weights = np.array(parameters.span_count_weights)
    n_mentions = rng.choice(len(span_weights), size=count, p=span_weights / span_weights.sum())
    n_units = n_mentions + rng.poisson(parameters.decoys_per_item, size=count)
    n_fillers = np.minimum(rng.poisson(parameters.fillers_per_item, size=count), len(vocabulary.fillers)).tolist()
    instruction = rng.integers(0, len(vocabulary.instructions), size=count).tolist()
    # A ticket number per prompt keeps every text distinct, so a content hash is a fair duplicate key.
    tickets = rng.choice(max(1_000_000, 10 * count), size=count, replace=False).tolist()
    first_filler = rng.integers(0, len(vocabulary.fillers), size=count).tolist()
    filler_after = (rng.random(count) < 0.5).tolist()
    share, concentration = language.variant_share, parameters.variant_concentration
    item_variant_share = rng.beta(share * concentration, (1 - share) * concentration, size=count)

    total = int(n_units.sum())
    unit_item = np.repeat(np.arange(count), n_units)
    unit_offsets = np.concatenate([[0], np.cumsum(n_units)])
    # The first n_mentions units of an item are its mentions, the rest decoys; then shuffle within items.
    is_decoy = (np.arange(total) - unit_offsets[unit_item]) >= n_mentions[unit_item]
    pii_label = np.array([LABELS.index(name) for name in pii_labels])[
        rng.choice(len(pii_labels), size=total, p=weights / weights.sum())
    ]
    decoy_kind = rng.integers(0, len(DECOY_KINDS), size=total)
    decoy_label = np.array([LABELS.index(DECOY_LABEL[kind]) for kind in DECOY_KINDS])[decoy_kind]
    label = np.where(is_decoy, decoy_label, pii_label)
    convention_of_label = np.array(
        [CONVENTIONS.index(CONVENTION_OF_TYPE[name]) if name in CONVENTION_OF_TYPE else -1 for name in LABELS]
    )
    convention = np.where(is_decoy, -1, convention_of_label[label])
    with_variant = (convention >= 0) & (rng.random(total) < item_variant_share[unit_item])
    draws = rng.integers(0, 2**62, size=total)
    connector = rng.integers(0, len(vocabulary.connectors), size=total)
    order = np.lexsort((rng.random(total), unit_item))
    is_decoy, label, convention, with_variant = is_decoy[order], label[order], convention[order], with_variant[order]
    decoy_kind, draws, connector = decoy_kind[order], draws[order], connector[order]

    short_start, short_end = [0] * total, [0] * total
    long_start, long_end = [0] * total, [0] * total
    decoy_list, label_list, variant_list = is_decoy.tolist(), label.tolist(), with_variant.tolist()
    kind_list, draw_list, connector_list = decoy_kind.tolist(), draws.tolist(), connector.tolist()
    closing = "。" if language.code == "zh" else "."
    texts: list[str] = []
    offsets = unit_offsets.tolist()
    for index in range(count):
        pieces = [f"[T-{tickets[index]:06d}] ", vocabulary.instructions[instruction[index]], " "]
        # Consecutive fillers from a random start, so no sentence repeats within an item.
        fillers = " ".join(
            vocabulary.fillers[(first_filler[index] + k) % len(vocabulary.fillers)] for k in range(n_fillers[index])
        )
        if fillers and not filler_after[index]:
            pieces.append(fillers + " ")
        length = sum(map(len, pieces))
        for unit in range(offsets[index], offsets[index + 1]):
            if unit > offsets[index]:
                pieces.append(vocabulary.connectors[connector_list[unit]])
                length += len(pieces[-1])
            if decoy_list[unit]:
                optional, side = "", "before"
                core = decoy_text(vocabulary, DECOY_KINDS[kind_list[unit]], draw_list[unit])
            else:
                label_name, variant = LABELS[label_list[unit]], variant_list[unit]
                optional, core, side = mention_text(vocabulary, label_name, variant, draw_list[unit])
            if side == "before":
                long_start[unit], short_start[unit] = length, length + len(optional)
                long_end[unit] = short_end[unit] = short_start[unit] + len(core)
                pieces += (optional, core)
            else:
                long_start[unit] = short_start[unit] = length
                short_end[unit] = length + len(core)
                long_end[unit] = short_end[unit] + len(optional)
                pieces += (core, optional)
            length += len(optional) + len(core)
        pieces.append(closing)
        if fillers and filler_after[index]:
            pieces.append(" " + fillers)
        texts.append("".join(pieces))
    return _LatentItems(
        texts=texts,
        unit_offsets=unit_offsets,
        mentions=n_mentions,
        label=label,
        convention=convention,
        is_decoy=is_decoy,
        short_start=np.array(short_start),
        short_end=np.array(short_end),
        long_start=np.array(long_start),
        long_end=np.array(long_end),
    )


# ----------------------------------------------------------------------------------------------------------
# The annotation pipeline, vectorised over every unit of every row of one language.


@dataclass(frozen=True)
class _Rows:
    """The lines of one language's record: which latent item each is (a duplicate is a second line)."""

    latent: np.ndarray
    dup_group: np.ndarray  # -1 when the item is not duplicated
    copy_defect: np.ndarray  # 0 none, 1 the reviewer copies annotator_a, 2 it copies annotator_b


Version = tuple[np.ndarray, np.ndarray, np.ndarray]  # per unit: labelled, with the optional part, type confused


def _annotate(
    language: LanguageParameters,
    latent: _LatentItems,
    rows: _Rows,
    parameters: SimulationParameters,
    rng: np.random.Generator,
    model_rng: np.random.Generator,
) -> tuple[dict[str, list[list[tuple[int, int, str]] | None]], np.ndarray]:
    """Run every row through the pipeline; return each labelling's spans per row (None: absent) and third_pass.

    The model outputs draw from ``model_rng``, so adding or removing them leaves every other labelling as it was.
    """
    n_rows = len(rows.latent)
    starts = latent.unit_offsets[rows.latent]
    counts = latent.unit_offsets[rows.latent + 1] - starts
    total = int(counts.sum())
    row_of = np.repeat(np.arange(n_rows), counts)
    unit = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)
    is_decoy = latent.is_decoy[unit]
    has_variant = latent.short_start[unit] != latent.long_start[unit]
    has_variant |= latent.short_end[unit] != latent.long_end[unit]
    convention = np.maximum(latent.convention[unit], 0)

    def one_pass(miss: float, extra: float, confusion: float, includes: np.ndarray) -> Version:
        """Return one independent pass: which units it labels, with which boundaries and type."""
        roll = rng.random((3, total))
        return (
            np.where(is_decoy, roll[0] < extra, roll[0] >= miss),
            has_variant & (roll[1] < includes),
            roll[2] < confusion,
        )

    rates = (language.miss_rate, language.extra_rate, language.type_confusion_rate)
    a = one_pass(*rates, np.array(parameters.annotator_a_includes)[convention])
    b = one_pass(*rates, np.array(parameters.annotator_b_includes)[convention])
    # The reviewer assigned to an item applies one convention to all of its mentions of a kind.
    reviewer_long = rng.random((n_rows, len(CONVENTIONS))) < np.array(parameters.reviewer_includes)
    reviewer_rates = (
        parameters.reviewer_miss_rate,
        parameters.reviewer_extra_rate,
        parameters.reviewer_type_confusion_rate,
    )
    labelled, _, confused = one_pass(*reviewer_rates, np.zeros(total))
    reviewer = (labelled, has_variant & reviewer_long[row_of, convention], confused)

    defect = rows.copy_defect[row_of]
    if defect.any():
        # The copy defect: A and B share no span (every mention differs in its optional part, or else in
        # type; decoys unlabelled) and the reviewer's labels are a verbatim copy of one of them.
        in_defect = defect > 0
        a_long = np.array(parameters.annotator_a_includes)[convention] >= 0.5
        a_defect = (~is_decoy, has_variant & a_long, np.zeros(total, dtype=bool))
        b_defect = (~is_decoy, has_variant & ~a_long, ~has_variant)
        a = tuple(np.where(in_defect, x, y) for x, y in zip(a_defect, a))
        b = tuple(np.where(in_defect, x, y) for x, y in zip(b_defect, b))
        copied = tuple(np.where(defect == 1, x, y) for x, y in zip(a_defect, b_defect))
        reviewer = tuple(np.where(in_defect, x, y) for x, y in zip(copied, reviewer))

    same_span = (a[0] == b[0]) & (~a[0] | ((a[1] == b[1]) & (a[2] == b[2])))
    differs = np.bincount(row_of, weights=~same_span, minlength=n_rows) > 0
    roll = rng.random((5, n_rows))
    third_pass = np.where(
        differs, roll[0] < language.third_pass_on_disagreement, roll[0] < language.third_pass_on_agreement
    )
    silent_keeps_a = roll[1] < parameters.silent_default_keeps_a
    # A pass missing from the export (1: A, 2: B); the delivered gold is then the pass that exists.
    absent = np.where(roll[2] < parameters.pass_absent_share, np.where(roll[3] < 0.5, 1, 2), 0)
    absent[rows.copy_defect > 0] = 0
    reviewed = (roll[4] < parameters.reviewer_share) | (rows.copy_defect > 0)
    third_pass &= absent == 0
    # Agreed items and the silent default take the whole of one pass; the adjudicator picks per mention.
    row_takes_a = np.where(absent == 1, False, np.where(absent == 2, True, ~differs | silent_keeps_a))
    adjudicator_takes_a = rng.random(total) < parameters.adjudicator_takes_a
    takes_a = np.where((third_pass & differs)[row_of], adjudicator_takes_a, row_takes_a[row_of])
    delivered = tuple(np.where(takes_a, x, y) for x, y in zip(a, b))

    short_start, short_end = latent.short_start[unit], latent.short_end[unit]
    long_start, long_end = latent.long_start[unit], latent.long_end[unit]
    label = latent.label[unit]
    names = np.array(LABELS, dtype=object)

    def spans_per_row(version: Version, present: np.ndarray) -> list[list[tuple[int, int, str]] | None]:
        """Return each row's spans (start, end, type) for one labelling, None where it is absent."""
        labelled, long, confused = version
        kept = np.flatnonzero(labelled)
        span_starts = np.where(long, long_start, short_start)[kept].tolist()
        span_ends = np.where(long, long_end, short_end)[kept].tolist()
        types = names[np.where(confused, CONFUSED_INDEX[label], label)[kept]].tolist()
        # (start, end, type) tuples: orjson writes them as the same arrays as lists, seven times faster to build
        spans = list(zip(span_starts, span_ends, types))
        # Units are disjoint and in text order, so each row's spans come out sorted.
        bounds = np.concatenate([[0], np.cumsum(np.bincount(row_of[kept], minlength=n_rows))]).tolist()
        flags = present.tolist()
        return [spans[bounds[i] : bounds[i + 1]] if flags[i] else None for i in range(n_rows)]

    def model_pass(model: ModelParameters) -> Version:
        """Return one model's output: like an annotator pass, with the model's rates and conventions."""
        roll = model_rng.random((3, total))
        return (
            np.where(is_decoy, roll[0] < model.extra_rate, roll[0] >= model.miss_rate),
            has_variant & (roll[1] < np.array(model.includes)[convention]),
            roll[2] < model.type_confusion_rate,
        )

    everywhere = np.ones(n_rows, dtype=bool)
    labellings = {
        "annotator_a": spans_per_row(a, absent != 1),
        "annotator_b": spans_per_row(b, absent != 2),
        "delivered": spans_per_row(delivered, everywhere),
        "reviewer": spans_per_row(reviewer, reviewed),
    }
    for model in parameters.models:  # a model runs on every item
        labellings[model.name] = spans_per_row(model_pass(model), everywhere)
    return labellings, third_pass


def _language_sizes(parameters: SimulationParameters) -> list[int]:
    """Split the item count evenly over the languages, the remainder to the first ones."""
    n_languages = len(parameters.languages)
    base, remainder = divmod(parameters.items, n_languages)
    return [base + (1 if position < remainder else 0) for position in range(n_languages)]


def simulate_rows(parameters: SimulationParameters, seed: int = 0) -> list[dict[str, Any]]:
    """Return the simulated record as canonical JSON objects, in record order."""
    if parameters.items < len(parameters.languages):
        raise ValueError(f"need at least one item per language ({len(parameters.languages)}), got {parameters.items}")
    rng = np.random.default_rng(seed)
    model_rng = np.random.default_rng([seed, MODEL_STREAM])
    latent_by_language, rows_by_language, eligible = [], [], []
    for position, (language, size) in enumerate(zip(parameters.languages, _language_sizes(parameters))):
        pairs = min(int(round(parameters.duplicated_share * size / 2)), size // 2)
        latent = _latent_items(language, size - pairs, parameters, rng)
        # Each duplicated prompt is a second row for a random original: group g = (source g, row size-pairs+g).
        sources = rng.choice(size - pairs, size=pairs, replace=False)
        dup_group = np.full(size, -1)
        dup_group[sources] = np.arange(pairs)
        dup_group[size - pairs :] = np.arange(pairs)
        rows = _Rows(
            latent=np.concatenate([np.arange(size - pairs), sources]),
            dup_group=dup_group,
            copy_defect=np.zeros(size, dtype=np.int64),
        )
        latent_by_language.append(latent)
        rows_by_language.append(rows)
        eligible += [(position, group) for group, source in enumerate(sources.tolist()) if latent.mentions[source]]

    # The copy defect hits a handful of duplicate pairs anywhere in the record, each with a PII mention.
    n_defects = min(int(round(parameters.copy_defect_rate * parameters.items)), len(eligible))
    for pick in rng.choice(len(eligible), size=n_defects, replace=False).tolist():
        position, group = eligible[pick]
        rows = rows_by_language[position]
        rows.copy_defect[rows.dup_group == group] = 1 + int(rng.integers(0, 2))

    records: list[dict[str, Any]] = []
    for language, latent, rows in zip(parameters.languages, latent_by_language, rows_by_language):
        labellings, third_pass = _annotate(language, latent, rows, parameters, rng, model_rng)
        flags = third_pass.tolist()
        keys = [hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] for text in latent.texts]
        latent_of = rows.latent.tolist()
        # Duplicates land anywhere in the language's block, so keep_first and keep_last differ.
        for number, index in enumerate(rng.permutation(len(latent_of)).tolist(), start=1):
            present = {name: spans[index] for name, spans in labellings.items() if spans[index] is not None}
            records.append(
                {
                    "id": f"{language.code}-{number:06d}",
                    "language": language.code,
                    "text": latent.texts[latent_of[index]],
                    "labellings": present,
                    "meta": {"third_pass": flags[index], "dup_key": keys[latent_of[index]]},
                }
            )
    return records
