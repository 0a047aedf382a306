"""The command line: parse arguments, load the config, call the library. Exit 0 ok, 1 a failed release check,
2 bad usage or input, 3 an internal error (a bug: one line; REFSENS_DEBUG=1 adds the traceback)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from refsens_report import __version__
from refsens_report.errors import BuildError, InputError, Stopped, printable
from refsens_report.names import SHOWN_LIMIT

INTERNAL_ERROR = 3  # never 1: `check` exits 1 for a failed release check, and a crash must not read as one
DEBUG_VARIABLE = "REFSENS_DEBUG"  # set (to anything but "" or "0"), an internal error prints its traceback too


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so `main(argv)` returns 2 with a clean message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise InputError(f"{self.prog}: {message}")


DESCRIPTION = """\
Audit how much a span-extraction benchmark's scores depend on which gold they are computed against, and
publish the answer as a versioned datasheet appendix (HTML, PDF, machine-readable results)."""

EPILOG = """\
typical use:
  refsens-report validate refsens.toml             every problem in the config and the record
  refsens-report check refsens.toml --junit c.xml  the release gate: [check] thresholds, exit 1 on a failure
  refsens-report build refsens.toml --out site     site/<version>/ and site/index.html
  refsens-report build refsens.toml --resamples 200 --no-pdf --draft --out drafts   a quick draft
  refsens-report convert refsens.toml record.parquet   the record as a Parquet span table (format = "parquet")
  refsens-report example conll2003 conll --from MIRROR  a case study on real data (or fetched: no --from)
  refsens-report docs                              the documentation topics; refsens-report docs ci prints one

exit codes: 0 success, 1 a release check failed (check only), 2 bad usage or bad input, 3 an internal error
(a bug: please report it; REFSENS_DEBUG=1 prints its traceback).
Long stages print their timings on a terminal; --quiet (or a pipe, as in CI) keeps them silent.
documentation: refsens-report docs [TOPIC] (it ships with the package)"""


def _resamples(text: str) -> int:
    """argparse type for --resamples: a positive whole number within the config's cap."""
    from refsens_report.config import MAX_RESAMPLES

    if not text.isdigit() or not 1 <= int(text) <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_RESAMPLES:,}, got {text!r}")
    return int(text)


def _add_run_options(command: argparse.ArgumentParser) -> None:
    """The options of every command that runs the audit: a quick look and silence."""
    command.add_argument(
        "--resamples",
        type=_resamples,
        metavar="N",
        help="bootstrap replicates for this run, overriding [audit] resamples (a quick look: 200)",
    )
    command.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print no stage timings or progress bar (they are printed only on a terminal anyway)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="refsens-report",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"refsens-report {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    def command(name: str, summary: str, description: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, help=summary, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
        )

    validate = command(
        "validate",
        "check a config and its record; list every problem",
        "Read the config and the record it names, and print every problem found (the file, the "
        "line or item, what is wrong), or one line with the record's size. Nothing is written.",
    )
    validate.add_argument("config", type=Path, help="the refsens.toml to read")

    audit = command(
        "audit",
        "run the audit; write results.json and results.csv only",
        "Run the audit and write results.json and results.csv (refsens-report docs results) into --out: "
        "every number the appendix would print, without the appendix.",
    )
    audit.add_argument("config", type=Path, help="the refsens.toml to read")
    audit.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for results.json and results.csv")
    _add_run_options(audit)

    check = command(
        "check",
        "the release gate: [check] thresholds; exit 1 when one fails",
        "Evaluate the config's [check] thresholds (max_band, max_abs_delta, max_abs_skew, "
        "min_kendall_tau,\nmax_significant_flips; refsens-report docs ci) against a fresh audit or an existing "
        "results folder, and print\none line per check: PASS or FAIL, the threshold, the deciding "
        "statistic with its interval.\n\nexit codes: 0 every check passes, 1 one fails, 2 bad input "
        "(including a check the record\ncannot answer, such as tau-b with fewer than three outputs),\n"
        "3 an internal error (a bug).",
    )
    check.add_argument("config", type=Path, help="the refsens.toml whose [check] table holds the thresholds")
    check.add_argument(
        "--results",
        type=Path,
        metavar="DIR",
        help="read results.json from DIR (an audit's --out or a published site/<version>/) "
        "instead of running the audit",
    )
    check.add_argument(
        "--junit", type=Path, metavar="FILE", help="also write the checks as JUnit XML (CI test reports)"
    )
    _add_run_options(check)

    build = command(
        "build",
        "run the audit and publish site/<version>/ (HTML, PDF, downloads)",
        "Run the audit and publish the version's appendix: site/<version>/ (the page, its PDF, "
        "results,\ntables, figures, changes since the previous version, metadata, manifest) and a "
        "refreshed\nsite/index.html. A published version is never overwritten without --force, and "
        "a failed\nbuild leaves the site as it was. [check] thresholds are shown in the summary; "
        "only `check`\nexits 1 on them.",
    )
    build.add_argument("config", type=Path, help="the refsens.toml to read")
    build.add_argument("--out", type=Path, default=Path("site"), metavar="DIR", help="site folder (default: site)")
    build.add_argument("--force", action="store_true", help="rebuild a version that is already published")
    build.add_argument(
        "--allow-other-dataset",
        action="store_true",
        help="publish into a site whose versions belong to another dataset name",
    )
    build.add_argument(
        "--no-pdf",
        dest="pdf",
        action="store_false",
        help="skip the PDF (a fast draft: the page, results and downloads without it)",
    )
    build.add_argument(
        "--draft",
        action="store_true",
        help="publish a draft: a build with too few replicates to decide significance, or fewer than "
        "'auto' ever uses (marked draft, never the index's latest; refused without this flag)",
    )
    build.add_argument(
        "--compare-to",
        metavar="VERSION",
        help="the published version the 'Changes since' section compares with (default: the newest "
        "version before this one)",
    )
    _add_run_options(build)

    convert = command(
        "convert",
        "write a record as a Parquet span table (the columnar record, for large records)",
        "Read a record as the audit reads it (a JSON Lines file, or a refsens.toml of any format, "
        "with its\n[record] label_map) and write it as a Parquet span table: one row per item, "
        'labelling and span\n(refsens-report docs adapters). Point [record] at it with format = "parquet". '
        "OUT is written whole or not at\nall, and an existing OUT is replaced only with --force.",
    )
    convert.add_argument("source", type=Path, metavar="IN", help="a JSON Lines record, or a refsens.toml")
    convert.add_argument("out", type=Path, metavar="OUT.parquet", help="the Parquet file to write")
    convert.add_argument("--force", action="store_true", help="replace OUT if it exists")
    convert.add_argument(
        "--partition-items",
        type=int,
        metavar="N",
        help="write OUT as a folder of Parquet files of at most N items of one language each, "
        "in canonical order (language, then id), for Dask workers to read (refsens-report docs scale); "
        "N is a multiple of 65,536 or divides it",
    )

    simulate = command(
        "simulate",
        "write a realistic synthetic record, config and datasheet",
        "Write a synthetic record from the simulated annotation pipeline (refsens-report docs simulation), "
        "its refsens.toml\nand a datasheet stub into DIRECTORY: the demo `make report` builds.",
    )
    simulate.add_argument(
        "directory",
        type=Path,
        metavar="DIRECTORY",
        help="the folder to write record.jsonl, refsens.toml and datasheet.md into (made if missing; "
        "existing files of those names are replaced)",
    )
    simulate.add_argument("--items", type=int, default=None, help="number of items (default: 25000)")
    simulate.add_argument("--seed", type=int, default=0, help="the simulation's seed (default: 0)")
    simulate.add_argument("--neutral", action="store_true", help="replace the silent default with a neutral rule")
    simulate.add_argument(
        "--outputs",
        type=int,
        default=None,
        help="model outputs scored beside the two annotators (default: 4; 0: the annotators only)",
    )

    example = command(
        "example",
        "fetch a case study's public data, verify it and build it (CoNLL-2003: 4 golds)",
        "Fetch every input of a case study on public data from its pinned address into DIR/data/\n"
        "(each checked against its SHA-256; a file that differs stops the example, naming both hashes),\n"
        "write DIR/refsens.toml and build DIR/site. --from MIRROR copies the files from a local folder\n"
        "laid out as the upstream ones are (MIRROR/conll/original/test.txt, ...) instead of the network.\n"
        "What is fetched from where, under which licence: refsens-report docs adapters (Worked examples).",
    )
    example.add_argument("name", metavar="NAME", help="the case study: conll2003 (the CoNLL-2003 English test set)")
    example.add_argument(
        "directory",
        type=Path,
        metavar="DIR",
        help="folder for the data (DIR/data, reused when its checksums match), config and site",
    )
    example.add_argument(
        "--from",
        dest="mirror",
        type=Path,
        metavar="MIRROR",
        help="read the files from this local mirror (its conll/ folder) instead of downloading",
    )
    example.add_argument("--no-pdf", dest="pdf", action="store_false", help="skip the PDF")
    example.add_argument("--draft", action="store_true", help="publish a draft (as build --draft)")
    example.add_argument("--force", action="store_true", help="rebuild the version if DIR/site already has it")
    _add_run_options(example)

    docs = command(
        "docs",
        "print the documentation that ships with the package (a topic, or the list of topics)",
        "Print a documentation topic as Markdown (installed with the package, so nothing is fetched),\n"
        "or, with no TOPIC, the list of topics with their titles.",
    )
    docs.add_argument("topic", nargs="?", metavar="TOPIC", help="a topic from the list, e.g. ci, site, adapters")
    docs.add_argument("--path", action="store_true", help="print the topic's file path instead of its text")
    return parser


def _say(line: str) -> None:
    """Print a line that quotes the input (a note, a name): a control or bidi character in it is shown escaped."""
    print(printable(line))


def _say_notes(notes: Sequence[str]) -> None:
    """Print input notes by kind: a note alone of its kind as it is, a kind as its count and first few notes."""
    from refsens_report.record import note_groups, note_kinds

    for heading, shown in note_groups(notes, note_kinds(notes)):
        if heading is not None:
            _say(f"note: {heading}:")
        for note in shown:
            _say(f"note: {'  ' if heading is not None else ''}{note}")


def _progress(args: argparse.Namespace) -> bool:
    """Stage timings and the bootstrap bar go to a terminal only, and never with --quiet."""
    return sys.stderr.isatty() and not getattr(args, "quiet", False)


def _load(path: Path):  # -> Config (imported lazily: `--help` stays fast)
    """Load a config: every table checked, `[check]`'s keys against the checks the analyses declare."""
    from refsens_report.check import declared_checks
    from refsens_report.config import load_config

    return declared_checks(load_config(path))


def _config(args: argparse.Namespace):  # -> Config
    """Load the config, with --resamples overriding [audit] resamples for this run."""
    from dataclasses import replace

    config = _load(args.config)
    if getattr(args, "resamples", None) is not None:
        config = replace(config, audit=replace(config.audit, resamples=args.resamples))
    return config


def _validate(args: argparse.Namespace) -> int:
    from refsens_report import formatting
    from refsens_report.load import load_record

    config = _load(args.config)
    record = load_record(config, frozenset())  # every span kept, so that every check runs here, not on workers
    print(
        f"{args.config}: ok ({formatting.counted(record.n_items, 'item')}, "
        f"{formatting.counted(len(record.languages), 'language')})"
    )
    _say_notes(record.notes)  # what an adapter repaired or skipped: worth knowing before a build
    return 0


def _refuse_published(out: Path) -> None:
    """Refuse a published version folder (what build writes: index.html beside results.json or manifest.json)
    as audit's --out: its results would no longer match its appendix, PDF and manifest."""
    if (out / "index.html").is_file() and any((out / name).is_file() for name in ("results.json", "manifest.json")):
        raise InputError(
            f"{out} is a published version folder (built by refsens-report build): audit does not overwrite "
            "its results; choose another --out"
        )


def _audit(args: argparse.Namespace) -> int:
    from refsens_report.audit import run_audit
    from refsens_report.estimator import Stages
    from refsens_report.results import write_results

    _refuse_published(args.out)
    config = _config(args)
    stages = Stages(_progress(args), None)
    with stages.stage("audit"):
        results = run_audit(config, progress=stages.progress)  # its listing files are never rendered
    _refuse_published(args.out)  # a build may have published into it meanwhile
    paths = write_results(results, args.out)
    print(f"wrote {', '.join(str(path) for path in paths)}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from refsens_report import check
    from refsens_report.view import ResultsView

    config = _config(args)
    if config.checks is None:
        raise InputError(
            f"{args.config}: the config has no [check] table, so there is nothing to check (refsens-report docs ci)"
        )
    if not config.checks:
        raise InputError(f"{args.config}: the [check] table names no check (keys: refsens-report docs ci)")
    if args.results is not None:
        results = check.read_results(args.results)
    else:
        from refsens_report.audit import run_audit
        from refsens_report.estimator import Stages

        stages = Stages(_progress(args), None)
        with stages.stage("audit"):
            results = run_audit(config, progress=stages.progress).to_json_dict()
    outcomes = check.evaluate_all(config.checks, ResultsView.from_json(results))
    _say(f"{check.title(results)}: release checks")
    for outcome in outcomes:
        _say(outcome.line())
    print(check.tally(outcomes))
    if args.junit is not None:
        check.write_junit(outcomes, args.junit, f"refsens-report check: {check.title(results)}")
    code = check.exit_code(outcomes)
    if code == 2:
        missing = ", ".join(outcome.check.key for outcome in outcomes if outcome.status == check.NOT_EVALUATED)
        raise InputError(
            f"{args.config}: [check] asks for what these results cannot answer: {missing} "
            "(remove the key, or audit a record that has it)"
        )
    return code


def _build(args: argparse.Namespace) -> int:
    from refsens_report.site import build_site

    config = _config(args)
    target = build_site(
        config,
        args.out,
        force=args.force,
        progress=_progress(args),
        with_pdf=args.pdf,
        compare_to=args.compare_to,
        allow_other_dataset=args.allow_other_dataset,
        draft=args.draft,
    )
    for line in _built(target, args.pdf):
        _say(line)
    return 0


def _built(target: Path, with_pdf: bool) -> list[str]:
    """Return what build says it made: the version folder, its two PDFs, and the one-line verdict."""
    import orjson

    from refsens_report.site import brief_name, pdf_name
    from refsens_report.summary import one_line
    from refsens_report.view import ResultsView

    version = target.name
    lines = [f"wrote {target}{os.sep}"]
    if with_pdf:
        lines += [f"  appendix PDF: {target / pdf_name(version)}", f"  brief PDF:    {target / brief_name(version)}"]
    else:
        lines.append("  no PDF (--no-pdf)")
    results = orjson.loads((target / "results.json").read_bytes())
    view = ResultsView.from_json(results)
    lines.append(f"verdict{' (a draft)' if view.draft else ''}: {one_line(view)}")
    return lines


def _convert(args: argparse.Namespace) -> int:
    from refsens_report.adapters.common import count
    from refsens_report.convert import convert, convert_partitioned

    if args.partition_items is not None:
        written = convert_partitioned(args.source, args.out, args.partition_items, force=args.force)
        print(
            f"wrote {args.out} ({count(written.partitions, 'partition')}: {count(written.rows, 'row')}, "
            f"{count(written.items, 'item')}, {count(written.row_groups, 'row group')})"
        )
    else:
        written = convert(args.source, args.out, force=args.force)
        print(
            f"wrote {args.out} ({count(written.rows, 'row')}: {count(written.items, 'item')}, "
            f"{count(written.row_groups, 'row group')})"
        )
    _say_notes(written.notes)  # what the source's adapter repaired or skipped, and what convert left out
    return 0


def _example(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from refsens_report.example import prepare
    from refsens_report.site import build_site

    quiet = not _progress(args)
    prepared = prepare(args.name, args.directory, mirror=args.mirror, say=(lambda line: None) if quiet else _say)
    _say(
        f"data: {prepared.data} ({len(prepared.fetched)} fetched, {len(prepared.copied)} copied from the mirror, "
        f"{len(prepared.reused)} already there; every file's SHA-256 checked)"
    )
    _say(f"wrote {prepared.config}")
    config = _load(prepared.config)
    if args.resamples is not None:
        config = replace(config, audit=replace(config.audit, resamples=args.resamples))
    target = build_site(
        config, args.directory / "site", force=args.force, progress=_progress(args), with_pdf=args.pdf, draft=args.draft
    )
    for line in _built(target, args.pdf):
        _say(line)
    return 0


def _docs(args: argparse.Namespace) -> int:
    from refsens_report import guide

    if args.topic is None:
        print(guide.listing())
        return 0
    path = guide.path_of(args.topic)
    if args.path:
        print(path)
    else:
        sys.stdout.write(path.read_text(encoding="utf-8"))
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from refsens_report.demo import write_simulation

    written = write_simulation(
        args.directory, items=args.items, seed=args.seed, neutral=args.neutral, outputs=args.outputs
    )
    print(f"wrote {', '.join(str(path) for path in written)}")
    return 0


COMMANDS = {
    "validate": _validate,
    "audit": _audit,
    "check": _check,
    "build": _build,
    "convert": _convert,
    "simulate": _simulate,
    "example": _example,
    "docs": _docs,
}


_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
# A stop raised while a callback runs (a garbage collector's callback, such as Dask's, or a finalizer) is reported
# to sys.unraisablehook and dropped by Python; it is raised again this many seconds later, from a timer's signal.
RETRY_STOP_SECONDS = 0.01


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP become exceptions in this process (KeyboardInterrupt, Stopped), so a build
    removes its staging folder and stops its workers on the way out. A forked worker inherits the handler:
    there SIGINT is ignored (the parent stops it; no traceback from every process on Ctrl-C) and SIGTERM or
    SIGHUP end it as by default. A stop that lands while a callback runs (Dask's garbage-collector callback)
    would be dropped by Python, and the run go on to the end: it is raised again from a timer
    (``RETRY_STOP_SECONDS``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def stop(signum: int, frame: object) -> None:
        if os.getpid() != owner:
            if signum != signal.SIGINT:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Stopped(signum)

    dropped: list[BaseException] = []  # a stop Python dropped (raised in a callback), to raise again
    hook = sys.unraisablehook

    def unraisable(report: object) -> None:
        found = getattr(report, "exc_value", None)
        if os.getpid() == owner and isinstance(found, (Stopped, KeyboardInterrupt)) and hasattr(signal, "setitimer"):
            dropped.append(found)
            signal.setitimer(signal.ITIMER_REAL, RETRY_STOP_SECONDS)
            return
        hook(report)  # type: ignore[arg-type]

    def again(signum: int, frame: object) -> None:
        if dropped:
            found = dropped.pop()
            raise Stopped(found.signum) if isinstance(found, Stopped) else KeyboardInterrupt

    # a signal ignored on the way in stays ignored (nohup; SIGINT for a background job of a script)
    previous = {
        signum: signal.signal(signum, stop) for signum in _STOP_SIGNALS if signal.getsignal(signum) != signal.SIG_IGN
    }
    if hasattr(signal, "SIGALRM"):
        previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, again)
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        sys.unraisablehook = hook
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of exiting, so tests can call it."""
    try:
        with _stop_on_signals():
            parser = _parser()
            if not (sys.argv[1:] if argv is None else argv):  # bare: the usage and the commands, not one error
                parser.print_help(sys.stderr)
                return 2
            args = parser.parse_args(argv)
            return COMMANDS[args.command](args)
    except InputError as error:
        print(error.render(), file=sys.stderr)
        return 2
    except BuildError as error:
        # the typesetter failed (a full disk, a file size limit): the site is as it was
        print(printable(f"error: {error}"), file=sys.stderr)
        return 2
    except Stopped as stopped:
        print(f"stopped by {signal.Signals(stopped.signum).name}", file=sys.stderr)
        return 128 + stopped.signum
    except OSError as error:
        # a folder that is a file, a disk that is full, a permission: the user's to fix, not a crash
        where = f"{error.filename}: " if error.filename else ""
        print(printable(f"error: {where}{error.strerror or error}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug, not the user's input: one line and exit 3, never a traceback and exit 1
        return _internal_error(error)


def _internal_error(error: Exception) -> int:
    """Say that the tool failed, in one line naming the exception (the traceback only with REFSENS_DEBUG=1)."""
    if os.environ.get(DEBUG_VARIABLE, "") not in ("", "0"):
        traceback.print_exception(error, file=sys.stderr)
    what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if len(what) > SHOWN_LIMIT:
        what = what[:SHOWN_LIMIT] + "..."
    from refsens_report.guide import URLS, urls

    report_to = urls().get("Issues", URLS["Issues"])
    print(
        printable(
            f"internal error: {what}: please report it at {report_to} (set {DEBUG_VARIABLE}=1 to see the traceback)"
        ),
        file=sys.stderr,
    )
    return INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
