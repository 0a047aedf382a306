"""Shared fixtures for the site, PDF and browser tests: one small hostile record, built twice.

The record is the simulator's (1,500 items, 200 resamples, the two annotator passes as the only outputs) with
team-written text made hostile: a type named like a script tag, a labelling name carrying an <img onerror>,
type labels in Devanagari, Arabic and Chinese, a datasheet with raw HTML, a javascript: link, an external link
and an external image, and a config comment holding a script tag and a right-to-left override (the appendix
prints the config as written).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE_DATE_EPOCH = "1767225600"  # 2026-01-01T00:00:00Z
HOSTILE_TYPE = '<script>alert("type")</script>'
HOSTILE_LABELLING = "annotator_b<img src=x onerror=alert(1)>"
# a comment in the config, printed in the appendix as written: markup and a right-to-left override
HOSTILE_CONFIG_COMMENT = '# the team\'s note: <script>alert("config")</script> then \u202e reversed?'
UNICODE_TYPES = {"hi": "नाम", "ar": "اسم", "zh": "姓名"}  # NAME, in the script of each language
HOSTILE_DATASHEET = """# Datasheet: hostile test

<script>alert("datasheet")</script>

Prose with **bold** and `code`. A [script link](javascript:alert(1)), a [home page](https://example.org/dataset)
and an image ![logo](https://cdn.example.org/logo.png).

<img src="x" onerror="alert(2)">

## Composition

Items in six languages.
"""


@dataclass(frozen=True)
class Built:
    """A built site: its folder, the version folder, and the config it was built from."""

    out: Path
    folder: Path
    config_path: Path

    @property
    def version(self) -> str:
        return self.folder.name


def make_hostile_record(directory: Path) -> Path:
    """Simulate a small record and make its team-written text hostile; return the config path."""
    from refsens_report.demo import write_simulation

    # the paper's shape, A and B the only outputs: these tests are about hostile text, the site and publishing,
    # and the leaderboard-sized variants add their own models (test_site.render_with_models); the demo's own
    # shape, with its model outputs, is tested in test_simulate.py and test_site.py (test_the_demo_shows_...)
    write_simulation(directory, items=1500, seed=0, outputs=0)
    record = directory / "record.jsonl"
    lines = []
    for line in record.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        labellings = {}
        for name, spans in item["labellings"].items():
            renamed = []
            for start, end, label in spans:
                if label == "USERNAME":
                    label = HOSTILE_TYPE
                elif label == "NAME" and item["language"] in UNICODE_TYPES:
                    label = UNICODE_TYPES[item["language"]]
                renamed.append([start, end, label])
            labellings[HOSTILE_LABELLING if name == "annotator_b" else name] = renamed
        item["labellings"] = labellings
        lines.append(json.dumps(item, ensure_ascii=False))
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = directory / "refsens.toml"
    text = config.read_text(encoding="utf-8")
    text = text.replace('"annotator_b"', json.dumps(HOSTILE_LABELLING))
    text = "\n".join("resamples = 200" if line.startswith("resamples") else line for line in text.splitlines()) + "\n"
    text = text.replace("[roles]\n", f"{HOSTILE_CONFIG_COMMENT}\n[roles]\n", 1)
    config.write_text(text, encoding="utf-8")
    (directory / "datasheet.md").write_text(HOSTILE_DATASHEET, encoding="utf-8")
    return config


def build(config_path: Path, out: Path, **kwargs) -> Built:
    """Build a site with the pinned build timestamp."""
    from refsens_report.config import load_config
    from refsens_report.site import build_site

    kwargs.setdefault("draft", True)  # the fixtures' 200 replicates make a draft (ResultsView.draft)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
        folder = build_site(load_config(config_path), out, **kwargs)
    return Built(out=out, folder=folder, config_path=config_path)


@pytest.fixture(scope="session")
def hostile_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile record's config."""
    return make_hostile_record(tmp_path_factory.mktemp("record"))


@pytest.fixture(scope="session")
def built_site(hostile_config: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The hostile record built once; tests must not change it (copy it first)."""
    return build(hostile_config, tmp_path_factory.mktemp("site") / "site")


@pytest.fixture(scope="session")
def rebuilt_site(hostile_config: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The same inputs built a second time, into another folder."""
    return build(hostile_config, tmp_path_factory.mktemp("site-again") / "site")
