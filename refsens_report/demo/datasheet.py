"""The demo's datasheet.md: a "Datasheets for Datasets" stub that says plainly the data is synthetic."""

from __future__ import annotations

import textwrap
from dataclasses import fields
from typing import Any

from refsens_report.demo.config import DATASET_NAME
from refsens_report.demo.parameters import DEFAULT_OUTPUTS, ModelParameters, SimulationParameters


def count_of(number: int, noun: str) -> str:
    """Return '1 model output' / '4 model outputs'."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def _summary(rows: list[dict[str, Any]], models: tuple[ModelParameters, ...]) -> dict[str, Any]:
    """Return the counts the datasheet states about the written record."""
    languages = list(dict.fromkeys(row["language"] for row in rows))
    key_counts: dict[str, int] = {}
    for row in rows:
        key_counts[row["meta"]["dup_key"]] = key_counts.get(row["meta"]["dup_key"], 0) + 1
    labellings = ("annotator_a", "annotator_b", "delivered", "reviewer", *(model.name for model in models))
    return {
        "items": len(rows),
        "per_language": {code: sum(row["language"] == code for row in rows) for code in languages},
        "labelled": {name: sum(name in row["labellings"] for row in rows) for name in labellings},
        "spans": sum(len(row["labellings"].get("delivered", [])) for row in rows),
        "third_pass": sum(row["meta"]["third_pass"] for row in rows),
        "duplicate_groups": sum(count > 1 for count in key_counts.values()),
        "duplicated_items": sum(count for count in key_counts.values() if count > 1),
    }


def render_datasheet(parameters: SimulationParameters, seed: int, rows: list[dict[str, Any]]) -> str:
    """Return datasheet.md: a "Datasheets for Datasets" stub that says plainly the data is synthetic."""
    summary = _summary(rows, parameters.models)
    per_language = ", ".join(f"{code} {count:,}" for code, count in summary["per_language"].items())
    default_rule = (
        "a neutral rule: when the annotators differ and no third pass fires, the delivered gold is A or B "
        "with equal probability"
        if parameters.neutral
        else "the silent default: when the annotators differ and no third pass fires, the delivered gold keeps "
        f"annotator A with probability {parameters.silent_default_keeps_a}"
    )
    language_table = "\n".join(
        f"| {p.code} | {p.variant_share} | {p.miss_rate} | {p.extra_rate} | {p.type_confusion_rate} | "
        f"{p.third_pass_on_disagreement} | {p.third_pass_on_agreement} |"
        for p in parameters.languages
    )
    scalars = "\n".join(
        f"| `{f.name}` | `{getattr(parameters, f.name)!r}` |"
        for f in fields(parameters)
        if f.name not in ("languages", "models")
    )
    model_table = "\n".join(
        f"| `{m.name}` | {m.miss_rate} | {m.extra_rate} | {m.type_confusion_rate} | "
        f"{' / '.join(str(share) for share in m.includes)} |"
        for m in parameters.models
    )
    labelled = summary["labelled"]
    if parameters.models:
        names = [model.name for model in parameters.models]
        every = all(labelled[name] == summary["items"] for name in names)
        models_line = (
            f"- {count_of(len(names), 'model output')}: {', '.join(f'`{name}`' for name in names)}, "
            f"{'each on every item' if every else 'on ' + ', '.join(f'{labelled[n]:,}' for n in names)}; "
            "scored beside the two annotator passes.\n"
        )
        story = (
            "The model outputs are simulated the same way as a pass, each with its own miss, extra and "
            "type-confusion rates and its own boundary conventions (the table below). One comparison is planted: "
            "`model_1` is the more accurate, with conventions of its own"
            + (
                ", and `model_2` was tuned on the shipped gold, so it learned the delivered gold's conventions "
                "(annotator A's, through the silent default) but misses more mentions. Under the delivered gold "
                "`model_2` ranks above `model_1`; under the reviewer, whose convention favours no one, the order "
                "flips."
                if len(names) > 1
                else "."
            )
            + (" The others come in pairs of near-equal strength." if len(names) > 3 else "")
        )
        models_story = "\n\n" + textwrap.fill(story, width=108, break_long_words=False, break_on_hyphens=False)
        models_section = (
            "\n| model | miss rate | extra rate | type confusion | includes title / country code / flat number |\n"
            f"|---|---|---|---|---|\n{model_table}\n"
        )
    else:
        models_line, models_story, models_section = "", "", ""
    command = f"refsens-report simulate DIR --seed {seed}"
    if parameters.items != SimulationParameters().items:
        command += f" --items {parameters.items}"
    if parameters.neutral:
        command += " --neutral"
    if len(parameters.models) != DEFAULT_OUTPUTS:
        command += f" --outputs {len(parameters.models)}"
    return f"""# Datasheet: {DATASET_NAME}

**This dataset is synthetic.** Every item was generated by `refsens-report simulate` (seed {seed}) from the
simulated annotation pipeline that `refsens-report docs simulation` describes. No person wrote or labelled
any of it; all names, numbers and addresses are invented, numbers carry runs of zeros that no real
numbering plan issues, and e-mail addresses use the reserved `example.*` domains. It exists to show what a
reference-sensitivity appendix looks like and to test that the audit recovers what the simulator put in.

## Motivation

A demonstration record for refsens-report. It imitates the six-language PII benchmark audited in "Same
Output, Different Gold": two annotator passes that differ mostly by boundary conventions, a selective third
pass, an aggregation rule that produces the shipped ("delivered") gold, and an expert reviewer who
re-annotates a random sample. Here the pipeline uses {default_rule}, so the appendix built from this
record shows what that rule does to the scores. Replace this datasheet with your own when you audit a real
record.

## Composition

- {summary["items"]:,} items (prompts) in {len(summary["per_language"])} languages: {per_language}.
- Each item has an invented text (a fictitious ticket number, a task instruction, filler sentences and PII
  mentions) with 0-8 latent PII mentions of types such as NAME, PHONE, EMAIL, ADDRESS, ID_NUMBER,
  TAX_NUMBER, PASSPORT_NUMBER, DATE_OF_BIRTH, BANK_ACCOUNT, CREDIT_CARD and USERNAME; the delivered gold
  holds {summary["spans"]:,} spans.
- Labellings: `annotator_a` on {labelled["annotator_a"]:,} items, `annotator_b` on {labelled["annotator_b"]:,},
  `delivered` on {labelled["delivered"]:,}, `reviewer` on {labelled["reviewer"]:,}
  ({_percent(labelled["reviewer"] / summary["items"])}, a random sample).
{models_line}- `meta.third_pass`: the third pass fired on {summary["third_pass"]:,} items
  ({_percent(summary["third_pass"] / summary["items"])}).
- `meta.dup_key`: a hash of the text. {summary["duplicate_groups"]:,} keys are shared by
  {summary["duplicated_items"]:,} items (the same prompt entered the pipeline twice). A few of these pairs
  carry the copy defect on purpose: the reviewer's labels are a copy of one annotator's.

## Collection process

Nothing was collected. The simulator draws, for each item, a text and its latent mentions; two independent
annotator passes that miss mentions, label decoys, confuse types and follow opposite boundary conventions
(a title inside a name or not, a country code inside a phone number or not, a flat number inside an address
or not); a third pass that fires at language-specific rates; the delivered gold by the aggregation rule;
and the reviewer on a random sample, with its own convention that favours neither pass.{models_story}

## Preprocessing

None. Spans are character offsets into `text`; every span lies inside its text.

## Uses

Trying refsens-report, testing it, and checking that its intervals cover the simulator's known values (the
coverage study in `bench/coverage_study.py`). Not for training or evaluating PII detectors: the text is
formulaic and the labels encode the simulator's assumptions, not any real annotation guideline.

## Distribution

Regenerate it with `{command}`; the same arguments give byte-identical files.

## Maintenance

Maintained with refsens-report; `refsens-report docs simulation` documents the generative story and its
parameters.

## Parameters used

| language | variant share | miss rate | extra rate | type confusion | third pass on disagreement | on agreement |
|---|---|---|---|---|---|---|
{language_table}

| parameter | value |
|---|---|
{scalars}
{models_section}"""
