"""The demo's refsens.toml: its version, roles and [audit] table, with a B that lets a planted flip show."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from refsens_report.analyses.interaction import family_members
from refsens_report.bootstrap import AUTO_MIN_RESAMPLES, auto_resamples, holm_floor
from refsens_report.config import AuditSettings, Config, Roles, default_family
from refsens_report.demo.parameters import DEFAULT_OUTPUTS, SimulationParameters
from refsens_report.record import POOLED

DEMO_VERSION = "0.1.0-demo"
DATASET_NAME = "Simulated PII benchmark (synthetic)"
ANNOTATORS = ("annotator_a", "annotator_b")
REFERENCES = ("delivered", "reviewer")  # first = primary (shipped) reference


def dataset_version(parameters: SimulationParameters, seed: int) -> str:
    """Return the version the simulated dataset is published under (a valid site folder name)."""
    version = DEMO_VERSION
    if parameters.neutral:
        version += "-neutral"
    if seed:
        version += f"-seed{seed}"
    if parameters.items != SimulationParameters().items:
        version += f"-{parameters.items}items"
    if len(parameters.models) != DEFAULT_OUTPUTS:
        version += f"-{len(parameters.models)}outputs"
    return version


DEMO_RULES = ("strict", "relaxed")
DEMO_CONFIDENCE = 0.95
# The demo's Holm floor as a share of the level: below it, with a fifth to spare, so a comparison that holds
# in every replicate is significant after Holm and the planted rank flip can show as one. resamples = "auto"
# aims at a tenth, which for six outputs means B = 27,999 and a demo that no longer builds in seconds.
DEMO_FLOOR_SHARE = 0.8


def demo_roles(parameters: SimulationParameters) -> Roles:
    """Return the demo's roles: the two annotator passes and the model outputs scored under two references."""
    return Roles(
        annotators=ANNOTATORS,
        outputs=(*ANNOTATORS, *(model.name for model in parameters.models)),
        references=REFERENCES,
    )


def demo_family_size(parameters: SimulationParameters) -> int:
    """Return how many swings the demo's Holm family holds (config.default_family, docs/method.md section 4).

    The audit's own family (interaction.family_members) on the demo's roles, rules and languages. Every output
    stands in the ranking: which order it takes does not change how many pairs are adjacent in it.
    """
    roles = demo_roles(parameters)
    config = Config(
        path=Path("refsens.toml"),
        name=DATASET_NAME,
        version=DEMO_VERSION,
        record_format="jsonl",
        record_options=None,
        roles=roles,
        audit=AuditSettings(rules=DEMO_RULES, family=default_family(len(roles.outputs))),
    )
    groups = [*(language.code for language in parameters.languages), POOLED]
    return len(family_members(config, roles.outputs, groups))


def demo_resamples(parameters: SimulationParameters) -> int:
    """Return the demo's B: as resamples = "auto" picks it, with the Holm floor at most 0.8 times the level."""
    return auto_resamples(demo_family_size(parameters), DEMO_CONFIDENCE, floor_share=DEMO_FLOOR_SHARE)


def render_config(parameters: SimulationParameters, seed: int) -> str:
    """Return refsens.toml for the simulated record."""
    roles, resamples = demo_roles(parameters), demo_resamples(parameters)
    resamples_comment = ""
    if resamples > AUTO_MIN_RESAMPLES:
        floor = holm_floor(demo_family_size(parameters), resamples)
        resamples_comment = (
            f"   # Holm floor {floor:.3f} ({demo_family_size(parameters)} tests): "
            "a flip seen in every replicate is significant"
        )
    return (
        "# Written by `refsens-report simulate`: a synthetic record from the simulated annotation pipeline.\n"
        "[dataset]\n"
        f'name = "{DATASET_NAME}"\n'
        f'version = "{dataset_version(parameters, seed)}"\n'
        "\n[record]\n"
        'path = "record.jsonl"\n'
        'format = "jsonl"\n'
        "\n[roles]\n"
        f"annotators = {_toml_list(roles.annotators)}\n"
        f"outputs = {_toml_list(roles.outputs)}\n"
        f"references = {_toml_list(roles.references)}   # first = primary (shipped) reference\n"
        "\n[audit]\n"
        f"rules = {_toml_list(list(DEMO_RULES))}\n"
        f"resamples = {resamples}{resamples_comment}\n"
        "seed = 0\n"
        f"confidence = {DEMO_CONFIDENCE}\n"
        'duplicate_policy = "keep_first"\n'
        "exclude_defective_duplicates = true\n"
        "\n[report]\n"
        'datasheet = "datasheet.md"\n'
    )


def _toml_list(names: Sequence[str]) -> str:
    """Return a TOML array of simple names (letters, digits, underscores: no escaping needed)."""
    return "[" + ", ".join(f'"{name}"' for name in names) + "]"
