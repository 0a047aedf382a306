"""`refsens-report example conll2003 DIR [--from MIRROR]` (issue 28 item 2): the CoNLL-2003 case study rebuilt
from its pinned public sources, here with ../shared/data standing in for the network.

The download path runs against a local HTTP server on 127.0.0.1 serving the mirror at the upstream addresses'
paths: nothing here reaches the internet. Skipped where the shared data folder is absent.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from refsens_report import example
from refsens_report.cli import main
from refsens_report.errors import InputError

PROJECT = Path(__file__).resolve().parents[1]
DATA = PROJECT.parent / "shared" / "data"
CONLL = DATA / "conll"
RESAMPLES = "20"

pytestmark = pytest.mark.skipif(
    not CONLL.is_dir(), reason=f"real data not found at {DATA} (the shared data folder lives beside the project)"
)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_pins_are_the_mirrors_files_and_the_derived_files_are_remade_byte_for_byte(tmp_path):
    """Every pinned SHA-256 is the mirror's file; CleanCoNLL's reconstruction and the span predictors' IOB2
    rendering, made here from the sources, are the mirror's derived files exactly."""
    for source in example.CONLL2003_SOURCES:
        assert sha256(CONLL / source.path) == source.sha256, source.path
        assert source.url.startswith("https://github.com/") and "/raw/" in source.url
    assert example.reconstruct_cleanconll(CONLL) == (CONLL / example.RECONSTRUCTED[0]).read_bytes()
    for model in example.RENDERED:
        raw = next(s for s in example.CONLL2003_SOURCES if s.path.startswith(f"systems/spanner-{model}/"))
        made = example.render_span_predictions(CONLL / "original" / "test.txt", CONLL / raw.path)
        assert made == (CONLL / "systems" / "_normalized" / f"spanner-{model}.iob2").read_bytes(), model
    # the example's config reads exactly these files: the repository's example, its root moved
    config = (PROJECT / "examples" / "conll2003" / "refsens.toml").read_text(encoding="utf-8")
    written = example.example_config("conll2003", "data")
    assert 'root = "data"' in written and written.count("path = ") == config.count("path = ")


class _Mirror(http.server.SimpleHTTPRequestHandler):
    """Serves the mirror's files at their upstream paths (/<owner>/<repo>/raw/<commit>/<path>); counts requests."""

    paths: dict[str, Path] = {}
    requests: list[str] = []

    def translate_path(self, path: str) -> str:
        self.requests.append(path)
        return str(self.paths.get(path, CONLL / "missing"))

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    _Mirror.paths = {
        source.url.removeprefix("https://github.com"): CONLL / source.path for source in example.CONLL2003_SOURCES
    }
    _Mirror.requests = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Mirror)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_the_download_path_fetches_verifies_and_caches(server, tmp_path):
    prepared = example.prepare("conll2003", tmp_path / "ex", base_url=server)
    assert len(prepared.fetched) == len(example.CONLL2003_SOURCES) == len(_Mirror.requests)
    for source in example.CONLL2003_SOURCES:
        assert sha256(prepared.data / source.path) == source.sha256
    assert sha256(prepared.data / example.RECONSTRUCTED[0]) == example.RECONSTRUCTED[1]
    assert not list(prepared.data.rglob("*.partial"))
    again = example.prepare("conll2003", tmp_path / "ex", base_url=server)  # the cache: nothing fetched twice
    assert again.fetched == () and len(again.reused) == len(example.CONLL2003_SOURCES)
    assert len(_Mirror.requests) == len(example.CONLL2003_SOURCES)


def test_a_failed_download_says_what_and_where_and_leaves_nothing(server, tmp_path):
    _Mirror.paths.pop(example.CONLL2003_SOURCES[3].url.removeprefix("https://github.com"))
    with pytest.raises(InputError, match=r"cannot fetch reconll/ReC_test\.txt from http://127\.0\.0\.1:\d+/.*404"):
        example.prepare("conll2003", tmp_path / "ex", base_url=server)
    assert not list((tmp_path / "ex").rglob("*.partial")) and not (tmp_path / "ex" / "refsens.toml").exists()


def corrupted_mirror(tmp_path: Path, damaged: str) -> Path:
    """A mirror of symlinks to the shared files, but ``damaged`` a copy with one byte changed."""
    mirror = tmp_path / "mirror"
    for source in example.CONLL2003_SOURCES:
        target = mirror / "conll" / source.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.path == damaged:
            content = bytearray((CONLL / source.path).read_bytes())
            content[100] ^= 0x20
            target.write_bytes(bytes(content))
        else:
            target.symlink_to(CONLL / source.path)
    return mirror


def test_a_file_whose_checksum_differs_stops_the_example_naming_it_and_both_hashes(tmp_path, capsys):
    damaged = "conllpp/conllpp_test.txt"
    mirror = corrupted_mirror(tmp_path, damaged)
    expected = next(s.sha256 for s in example.CONLL2003_SOURCES if s.path == damaged)
    got = sha256(mirror / "conll" / damaged)
    assert main(["example", "conll2003", str(tmp_path / "ex"), "--from", str(mirror), "-q"]) == 2
    err = capsys.readouterr().err
    assert damaged in err and f"SHA-256 {got}, expected {expected}" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "ex" / "data" / damaged).exists() and not (tmp_path / "ex" / "site").exists()
    assert not list((tmp_path / "ex").rglob("*.partial"))


def test_a_mirror_without_conll_and_an_unknown_example_are_one_line_each(tmp_path, capsys):
    assert main(["example", "conll2003", str(tmp_path / "ex"), "--from", str(tmp_path)]) == 2
    assert "no conll/ folder in it" in capsys.readouterr().err
    assert main(["example", "conll2004", str(tmp_path / "ex"), "--from", str(DATA)]) == 2
    assert "no example 'conll2004'; the examples are: conll2003" in capsys.readouterr().err


def test_the_example_config_elsewhere_reports_its_folder_absolute_and_nothing_false(tmp_path, capsys):
    """Copied away from the shared folder: one error, the folder as an absolute path, no second false error."""
    shutil.copy(PROJECT / "examples" / "conll2003" / "refsens.toml", tmp_path / "refsens.toml")
    assert main(["validate", str(tmp_path / "refsens.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    resolved = (tmp_path / "../../../shared/data/conll").resolve()
    assert err == [
        f"error: Config value 'record.root': folder not found: ../../../shared/data/conll (that is "
        f"{resolved}, relative to the config's folder)"
    ]


def test_from_an_unrelated_folder_the_example_builds_the_same_numbers(tmp_path, capsys, monkeypatch):
    """The clone's own example (read beside ../shared) and `example --from` run elsewhere: same results.csv."""
    assert (
        main(
            [
                "audit",
                str(PROJECT / "examples" / "conll2003" / "refsens.toml"),
                "--out",
                str(tmp_path / "here"),
                "--resamples",
                RESAMPLES,
                "-q",
            ]
        )
        == 0
    )
    elsewhere = tmp_path / "unrelated" / "folder"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795996800")
    capsys.readouterr()
    assert (
        main(
            [
                "example",
                "conll2003",
                "conll",
                "--from",
                os.path.relpath(DATA, elsewhere),
                "--resamples",
                RESAMPLES,
                "--no-pdf",
                "--draft",
                "-q",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"data: {elsewhere / 'conll' / 'data'} (0 fetched, 20 copied")
    assert out[2] == f"wrote {Path('conll', 'site', '2003-test')}{os.sep}"
    built = elsewhere / "conll" / "site" / "2003-test" / "results.csv"
    assert built.read_bytes() == (tmp_path / "here" / "results.csv").read_bytes()
