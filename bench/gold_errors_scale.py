"""Time (or profile) the gold-error candidates alone on a generated record: candidates, files and summary.

    .venv/bin/python bench/generate_scale.py /tmp/scale200k --items 200000        # once
    PYTHONPATH=. .venv/bin/python bench/gold_errors_scale.py /tmp/scale200k/refsens.toml [--profile]

Loads the record and its counts (untimed), then times ``gold_errors.candidates``, ``files`` and ``summary``
(wall and CPU time; ``files`` and ``summary`` each compute the candidates again, a reference at a time, as an
audit's summary and a build's files do) and prints each reference's number of candidates and the SHA-256 of
the files and the summary (so two versions of the analysis can be checked for the same output). ``--profile``:
under cProfile, the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gold_errors_conll import context_of  # noqa: E402

from refsens_report.analyses import gold_errors  # noqa: E402
from refsens_report.config import load_config  # noqa: E402
from refsens_report.results import files_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    context = context_of(args.config, load_config(args.config).report.error_evidence)
    print(f"load and counts {time.perf_counter() - started:.1f} s (untimed below)", flush=True)
    profile = cProfile.Profile()
    if args.profile:
        profile.enable()
    started, cpu_started = time.perf_counter(), time.process_time()
    found = list(gold_errors.candidates(context))
    found_at, cpu_found = time.perf_counter(), time.process_time()
    files = files_text(gold_errors.files(context))
    files_at, cpu_files = time.perf_counter(), time.process_time()
    summary = gold_errors.summary(context)
    done, cpu_done = time.perf_counter(), time.process_time()
    if args.profile:
        profile.disable()
    print(
        f"candidates {found_at - started:.2f} s, files {files_at - found_at:.2f} s, summary {done - files_at:.2f} s,"
        f" total {done - started:.2f} s"
    )
    # the process's CPU time: on a shared machine the wall time above also measures the wait for a processor
    print(
        f"cpu: candidates {cpu_found - cpu_started:.2f} s, files {cpu_files - cpu_found:.2f} s,"
        f" summary {cpu_done - cpu_files:.2f} s, total {cpu_done - cpu_started:.2f} s"
    )
    print("candidates per reference:", ", ".join(f"{reference.reference} {reference.n}" for reference in found))
    for name, text in files.items():
        print(f"{name}: {len(text):,} characters, sha256 {hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}")
    print(f"summary: sha256 {hashlib.sha256(orjson.dumps(summary)).hexdigest()[:16]}")
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
