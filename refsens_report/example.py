"""`refsens-report example conll2003 DIR [--from MIRROR]`: a case study on public data that anyone can rebuild.

Every input of the CoNLL-2003 example comes from a pinned address (a repository at a commit) with its SHA-256:
the original test labels, CoNLL++ (and its licence), ReCoNLL, CleanCoNLL's masked annotations and its token
patch, and the 14 published system outputs. Each is fetched once into ``DIR/data/`` (urllib, with a timeout;
written under a temporary name and renamed only once its checksum matches), or copied from a local mirror laid
out as the upstream folders are (``--from MIRROR``: MIRROR/conll/original/test.txt, ...). Two kinds of file are
then made from them, as their authors describe: CleanCoNLL's reconstruction (the original token column patched
with CleanCoNLL's patch, pasted onto its annotations) and the IOB2 rendering of the two SpanNER span predictors
(one tag per token of the original text). Both are checked against their own SHA-256, so the record is the one
the example's numbers were computed from. ``DIR/refsens.toml`` is the example's config reading ``DIR/data``;
the command line then builds it into ``DIR/site``.

A file whose checksum differs stops the example, naming the file and both hashes; nothing unverified is kept.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from refsens_report.errors import InputError

PACKAGE_DIR = Path(__file__).resolve().parent
# a wheel carries the example configs inside the package (pyproject.toml maps them there); a checkout keeps them
# in the top-level examples/ folder
EXAMPLES_DIR = next(
    (folder for folder in (PACKAGE_DIR / "examples", PACKAGE_DIR.parent / "examples") if folder.is_dir()),
    PACKAGE_DIR / "examples",
)
TIMEOUT = 60  # seconds for a connection or a read to make progress
CHUNK = 1 << 16

ORIGINAL = "pfliu-nlp/Named-Entity-Recognition-NER-Papers@f0390ec"  # redistributes the CoNLL-2003 files
CROSSWEIGH = "ZihanWangKi/CrossWeigh@77d0c2d"
CLEANCONLL = "flairNLP/CleanCoNLL@bedc569"
SPANNER = "neulab/SpanNER@dc9af16"
INTERPRETEVAL = "neulab/InterpretEval@fb37289"


@dataclass(frozen=True)
class Source:
    """One downloaded file: where it goes under the data folder, the repository@commit and path it comes from."""

    path: str
    repository: str
    upstream: str
    sha256: str

    @property
    def url(self) -> str:
        repository, commit = self.repository.split("@")
        return f"https://github.com/{repository}/raw/{commit}/{self.upstream}"


def _spanner(model: str, name: str, sha256: str) -> Source:
    return Source(f"systems/spanner-{model}/{name}", SPANNER, f"combination/results/conll03/{name}", sha256)


def _interpreteval(model: str, name: str, sha256: str) -> Source:
    return Source(
        f"systems/interpreteval-{model}/{name}", INTERPRETEVAL, f"interpretEval/data/ner/conll03/results/{name}", sha256
    )


CONLL2003_SOURCES = (
    Source(
        "original/test.txt",
        ORIGINAL,
        "ner_dataset/CoNLL2003/test.txt",
        "dc4ac7f3d6d01a6bec59261814561da3b287b6b493b97d1f69c580b52ec1831b",
    ),
    Source(
        "conllpp/conllpp_test.txt",
        CROSSWEIGH,
        "data/conllpp_test.txt",
        "4eb3b5114787d0df24087e9c9dfc956abf4cfd5e201bc1056b48ff4f7b37c0e8",
    ),
    Source(
        "conllpp/LICENSE.CrossWeigh",
        CROSSWEIGH,
        "LICENSE",
        "665c3eeac745ef5ea2001314c5ab3977bccdb27d215f1fe7aedc5addb31e2849",
    ),
    Source(
        "reconll/ReC_test.txt",
        ORIGINAL,
        "ner_dataset/ReCoNLL/ReC_test.txt",
        "51f69d4fdf4eb109158dce0eb114e50d8a322a0534d3e30100124f6e827ad499",
    ),
    Source(
        "cleanconll/cleanconll_annotations.test",
        CLEANCONLL,
        "data/cleanconll_annotations/cleanconll_annotations.test",
        "89092bb1964c32498bfcbaa46e7641900d139465cfbdce9e9d377a0ba09e9ea0",
    ),
    Source(
        "cleanconll/test_tokens.patch",
        CLEANCONLL,
        "data/patch_files/test_tokens.patch",
        "ffd5f3a26525d241ce46cc407ada55fd95858620234fc88ddd2f6503866e72dc",
    ),
    _interpreteval(
        "CflairWglove_lstmCrf",
        "connl03_CflairWglove_lstmCrf_9303.txt",
        "0c3934665916da0bce39fa087146bac8c5265f35243479a55f3d46563607c368",
    ),
    _interpreteval(
        "CelmoWglove_lstmCrf",
        "connl03_CelmoWglove_lstmCrf_9222.txt",
        "15ffe22e25b73dae047b5002084cc99c71d454eb23685344d9c5549e8154f612",
    ),
    _spanner(
        "CflairWglove_lstmCrf",
        "conll03_CflairWglove_lstmCrf_1_test_9302.txt",
        "ffb055eed27f0cd093c6298b7b13963cf7ef0a2b2d8c1a4ce29742721425bb48",
    ),
    _spanner(
        "CbertWnon_lstmCrf",
        "conll03_CbertWnon_lstmCrf_1_test_9246.txt",
        "f12d8a1d4c052b8ea476e1806f740c28965cd523cec143baed425a48aef2aac4",
    ),
    _spanner(
        "CflairWnon_lstmCrf",
        "conll03_CflairWnon_lstmCrf_1_test_9241.txt",
        "7b803524bf3e71c04f4ac18ac9584fc007c0660db714802ee6d4ee8a345f17c4",
    ),
    _spanner(
        "CelmoWglove_lstmCrf",
        "conll03_CelmoWglove_lstmCrf_95803618_test_9211.txt",
        "72f21688b9f2401797c2d1c92d99de75c5fea594cc6523cb71a482448d3c4f21",
    ),
    _spanner(
        "CbertWglove_lstmCrf",
        "conll03_CbertWglove_lstmCrf_1_test_9201.txt",
        "48d5b941d4f9e063bd33f9f1c3abbc7c66308aa4828f725386af978faeacd44c",
    ),
    _spanner(
        "CelmoWnon_lstmCrf",
        "conll03_CelmoWnon_lstmCrf_81319158_test_9199.txt",
        "369f06724d66a19bdbec336dae0a9037d1bd6b33985dbc00eb736b88567b16a0",
    ),
    _spanner(
        "CcnnWglove_lstmCrf",
        "conll03_CcnnWglove_lstmCrf_72102467_test_9088.txt",
        "2803bcdf993de1c75a0e8c96d34f84d7e2c04055bcf47dba866aae23e0895d61",
    ),
    _spanner(
        "CcnnWglove_cnnCrf",
        "conll03_CcnnWglove_cnnCrf_45725566_test_8971.txt",
        "a1e9c9b33d0934c6b52c5707e878f87eca7883429dc90d1ef47a7a43002ed817",
    ),
    _spanner(
        "CcnnWrand_lstmCrf",
        "conll03_CcnnWrand_lstmCrf_43667285_test_8303.txt",
        "1fe031e847e75377209756981567fa70b08bd6040ba5857c37c77552f5aa0ddc",
    ),
    _spanner(
        "CnonWrand_lstmCrf",
        "conll03_CnonWrand_lstmCrf_03689925_test_7849.txt",
        "4728eb961c4ba7e2f5486497fa9ad7be1600a1552f638480c7d36ffe2972da20",
    ),
    _spanner(
        "spanNER_lenDecode",
        "conll03_spanNER_lenDecode_9228.txt",
        "4732bbaacdff99b036fdc9670195583f5140719340a369725ee8d1aa66d17266",
    ),
    _spanner(
        "spanNER_generic",
        "conll03_spanNER_generic_test_9157.txt",
        "4a1e911e1ed333af002d358bcba54c1bcb11c35765bc144da6298d8ac67974e3",
    ),
)

# made here from the sources, each with the SHA-256 the example's numbers were computed from
RECONSTRUCTED = (
    "cleanconll/cleanconll.test.reconstructed",
    "a3d3cb8def17bd85b3fed4a8d3b3d7293eb17171190b3642bef3762a88d908fc",
)
RENDERED = {
    "spanNER_lenDecode": "2eee08326e5017edc46bcdc7ab70675e16c320446ea6364b523a663a3b6634ce",
    "spanNER_generic": "c5190894f07ea7a2e0c7bdcd4bb634b048f6fe5b2fe7da307ae988dd1c8143bf",
}
EXAMPLES = ("conll2003",)
ROOT_LINE = re.compile(r'^root = ".*?"', re.M)


@dataclass(frozen=True)
class Prepared:
    """What ``prepare`` did: the config written, the data folder, and the files fetched, copied or reused."""

    config: Path
    data: Path
    fetched: tuple[str, ...]
    copied: tuple[str, ...]
    reused: tuple[str, ...]


def prepare(
    name: str,
    folder: Path,
    mirror: Path | None = None,
    base_url: str | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> Prepared:
    """Fetch (or copy from ``mirror``) the example's sources into ``folder/data``, verify them, make the derived
    files and write ``folder/refsens.toml``; return what was done. ``base_url`` replaces
    ``https://github.com/`` (a test serves the mirror on 127.0.0.1)."""
    if name not in EXAMPLES:
        raise InputError(f"example: no example {name!r}; the examples are: {', '.join(EXAMPLES)}")
    if mirror is not None:
        mirror = mirror.resolve()
        if not (mirror / "conll").is_dir():
            raise InputError(
                f"example: --from {mirror}: no conll/ folder in it (a mirror is laid out as the "
                "upstream files are: conll/original/test.txt, conll/conllpp/conllpp_test.txt, ...)"
            )
    data = folder.resolve() / "data"
    fetched, copied, reused = [], [], []
    for source in CONLL2003_SOURCES:
        target = data / source.path
        if target.is_file() and _sha256(target) == source.sha256:
            reused.append(source.path)
            continue
        if mirror is not None:
            _copy(mirror / "conll" / source.path, target, source)
            copied.append(source.path)
        else:
            url = source.url if base_url is None else source.url.replace("https://github.com/", base_url, 1)
            say(f"fetching {url}")
            _download(url, target, source)
            fetched.append(source.path)
    _make(data / RECONSTRUCTED[0], RECONSTRUCTED[1], lambda: reconstruct_cleanconll(data))
    for model, sha256 in RENDERED.items():
        raw = next(source for source in CONLL2003_SOURCES if source.path.startswith(f"systems/spanner-{model}/"))
        _make(
            data / "systems" / "_normalized" / f"spanner-{model}.iob2",
            sha256,
            lambda raw=raw: render_span_predictions(data / "original" / "test.txt", data / raw.path),
        )
    config = folder.resolve() / "refsens.toml"
    _write(config, example_config(name, "data").encode("utf-8"))
    return Prepared(config, data, tuple(fetched), tuple(copied), tuple(reused))


def example_config(name: str, root: str) -> str:
    """Return the example's refsens.toml with ``[record] root`` pointing at ``root``."""
    path = EXAMPLES_DIR / name / "refsens.toml"
    if not path.is_file():
        raise InputError(f"example: {path} is missing: the installation is incomplete; reinstall refsens-report")
    text = path.read_text(encoding="utf-8")
    text, replaced = ROOT_LINE.subn(f'root = "{root}"', text, count=1)
    assert replaced == 1, "the example config has no root line"
    return text.replace(
        "# The data is not shipped: it is read from the shared data folder (see README.md to point elsewhere).",
        "# Written by `refsens-report example`: the data was fetched into data/.",
    )


# -- fetching ------------------------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _temporary(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.with_name(f".{target.name}.{secrets.token_hex(6)}.partial")


def _verified(temporary: Path, target: Path, expected: str, what: str) -> None:
    """Move a finished file into place if its SHA-256 is ``expected``; otherwise remove it and stop."""
    got = _sha256(temporary)
    if got != expected:
        temporary.unlink()
        raise InputError(
            f"example: {what}: SHA-256 {got}, expected {expected}: not the file the example pins "
            "(changed upstream, damaged, or another file); nothing was built"
        )
    os.replace(temporary, target)


def _download(url: str, target: Path, source: Source) -> None:
    temporary = _temporary(target)
    request = urllib.request.Request(url, headers={"User-Agent": "refsens-report example"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response, open(temporary, "wb") as out:
            shutil.copyfileobj(response, out, CHUNK)
    except (urllib.error.URLError, OSError, ValueError) as error:
        temporary.unlink(missing_ok=True)
        reason = (
            f"HTTP {error.code} {error.reason}"
            if isinstance(error, urllib.error.HTTPError)
            else getattr(error, "reason", None) or error
        )
        raise InputError(
            f"example: cannot fetch {source.path} from {url} ({reason}); with no network, "
            "give a local copy with --from MIRROR"
        ) from None
    _verified(temporary, target, source.sha256, f"{source.path} (from {url})")


def _copy(origin: Path, target: Path, source: Source) -> None:
    if not origin.is_file():
        raise InputError(f"example: the mirror has no {origin} (the example needs {source.path}, from {source.url})")
    temporary = _temporary(target)
    shutil.copyfile(origin, temporary)
    _verified(temporary, target, source.sha256, f"{source.path} (from {origin})")


def _make(target: Path, expected: str, make: Callable[[], bytes]) -> None:
    if target.is_file() and _sha256(target) == expected:
        return
    temporary = _temporary(target)
    temporary.write_bytes(make())
    _verified(temporary, target, expected, f"{target.name} (made from the fetched files)")


def _write(path: Path, content: bytes) -> None:
    temporary = _temporary(path)
    temporary.write_bytes(content)
    os.replace(temporary, path)


# -- the derived files ---------------------------------------------------------------------------------


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def apply_normal_diff(old: list[str], diff: list[str]) -> list[str]:
    """Apply a diff in the normal format (``1132c1132,1134``, ``< old``, ``---``, ``> new``) to lines."""
    out: list[str] = []
    position, index = 0, 0
    while index < len(diff):
        command = re.fullmatch(r"(\d+)(?:,(\d+))?([acd])(\d+)(?:,(\d+))?", diff[index])
        index += 1
        if command is None:
            continue
        first, last, kind = int(command[1]), int(command[2] or command[1]), command[3]
        removed, added = [], []
        while index < len(diff) and diff[index][:1] == "<":
            removed.append(diff[index][2:])
            index += 1
        if index < len(diff) and diff[index] == "---":
            index += 1
        while index < len(diff) and diff[index][:1] == ">":
            added.append(diff[index][2:])
            index += 1
        if kind == "a":
            out.extend(old[position:first])
            position = first
        else:
            out.extend(old[position : first - 1])
            if old[first - 1 : last] != removed:
                raise InputError(f"example: the CleanCoNLL patch does not apply at line {first}")
            position = last
        out.extend(added)
    out.extend(old[position:])
    return out


def reconstruct_cleanconll(data: Path) -> bytes:
    """CleanCoNLL's README procedure: the original token column, patched, pasted onto its masked annotations."""
    tokens = [line.split(" ")[0] for line in _lines(data / "original" / "test.txt")]
    tokens = apply_normal_diff(tokens, _lines(data / "cleanconll" / "test_tokens.patch"))
    annotations = _lines(data / "cleanconll" / "cleanconll_annotations.test")
    if len(tokens) != len(annotations):
        raise InputError(
            f"example: the patched tokens ({len(tokens)} lines) do not match CleanCoNLL's "
            f"annotations ({len(annotations)} lines)"
        )
    lines = [
        token if not annotation else "\t".join([token, *annotation.split("\t")[1:]])
        for token, annotation in zip(tokens, annotations)
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def render_span_predictions(original: Path, raw: Path) -> bytes:
    """Render a SpanNER span file (``sentence<TAB>text:: start,end:: GOLD:: PRED<TAB>...``) as IOB2 tags on the
    original tokens: predicted spans (PRED not O) written in the order the file lists them, a later one
    overwriting an earlier one's tokens where they overlap; ``-DOCSTART-`` dropped."""
    sentences: list[list[str]] = [[]]
    for line in _lines(original):
        if line:
            sentences[-1].append(line.split(" ")[0])
        elif sentences[-1]:
            sentences.append([])
    sentences = [tokens for tokens in sentences if tokens and tokens != ["-DOCSTART-"]]
    rows = [row for row in _lines(raw) if row and not row.startswith("-DOCSTART-")]
    if len(rows) != len(sentences):
        raise InputError(f"example: {raw.name} has {len(rows)} sentences, the original {len(sentences)}")
    blocks = []
    for tokens, row in zip(sentences, rows):
        fields = row.split("\t")
        tags = ["O"] * len(tokens)
        for entry in filter(None, fields[1:]):
            _, offsets, _, predicted = entry.split(":: ")
            if predicted == "O":
                continue
            start, end = map(int, offsets.split(","))
            for position in range(start, end):
                tags[position] = ("B-" if position == start else "I-") + predicted
        blocks.append("\n".join(f"{token}\t{tag}" for token, tag in zip(tokens, tags)))
    return ("\n\n".join(blocks) + "\n").encode("utf-8")
