"""The command line: parse arguments, load the config, call the library. Exit 0 ok, 2 bad usage or input."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from refsens_report import __version__
from refsens_report.errors import BuildError, InputError, Stopped


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so `main(argv)` returns 2 with a clean message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise InputError(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="refsens-report", description=__doc__)
    parser.add_argument("--version", action="version", version=f"refsens-report {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    validate = commands.add_parser("validate", help="check a config and its record; list every problem")
    validate.add_argument("config", type=Path)

    audit = commands.add_parser("audit", help="run the audit; write results.json and results.csv")
    audit.add_argument("config", type=Path)
    audit.add_argument("--out", type=Path, required=True, help="folder for results.json / results.csv")

    build = commands.add_parser("build", help="run the audit and render site/<version>/ (HTML, PDF, downloads)")
    build.add_argument("config", type=Path)
    build.add_argument("--out", type=Path, default=Path("site"), help="site folder (default: site)")
    build.add_argument("--force", action="store_true", help="rebuild a version that is already published")
    build.add_argument("--allow-other-dataset", action="store_true",
                       help="publish into a site whose versions belong to another dataset name")

    simulate = commands.add_parser("simulate", help="write a realistic synthetic record, config and datasheet")
    simulate.add_argument("directory", type=Path)
    simulate.add_argument("--items", type=int, default=None, help="number of items (default: 25000)")
    simulate.add_argument("--seed", type=int, default=0)
    simulate.add_argument("--neutral", action="store_true", help="replace the silent default with a neutral rule")
    simulate.add_argument("--outputs", type=int, default=None,
                          help="model outputs scored beside the two annotators (default: 4; 0: the annotators only)")
    return parser


def _validate(args: argparse.Namespace) -> int:
    from refsens_report.config import load_config
    from refsens_report.load import load_record

    config = load_config(args.config)
    record = load_record(config)
    print(f"{args.config}: ok ({len(record.items)} items, {len(record.languages)} languages)")
    for note in record.notes:  # what an adapter repaired or skipped: worth knowing before a build
        print(f"note: {note}")
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
    from refsens_report.config import load_config
    from refsens_report.results import write_results

    _refuse_published(args.out)
    config = load_config(args.config)
    results = run_audit(config, progress=sys.stderr.isatty())
    _refuse_published(args.out)  # a build may have published into it meanwhile
    paths = write_results(results, args.out)
    print(f"wrote {', '.join(str(path) for path in paths)}")
    return 0


def _build(args: argparse.Namespace) -> int:
    from refsens_report.config import load_config
    from refsens_report.site import build_site

    config = load_config(args.config)
    target = build_site(config, args.out, force=args.force, progress=sys.stderr.isatty(),
                        allow_other_dataset=args.allow_other_dataset)
    print(f"wrote {target}")
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from refsens_report.simulate import write_simulation

    written = write_simulation(args.directory, items=args.items, seed=args.seed, neutral=args.neutral,
                               outputs=args.outputs)
    print(f"wrote {', '.join(str(path) for path in written)}")
    return 0


COMMANDS = {"validate": _validate, "audit": _audit, "build": _build, "simulate": _simulate}


_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP become exceptions in this process (KeyboardInterrupt, Stopped), so a build
    removes its staging folder and stops its workers on the way out. A forked worker inherits the handler:
    there SIGINT is ignored (the parent stops it; no traceback from every process on Ctrl-C) and SIGTERM or
    SIGHUP end it as by default."""
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

    # a signal ignored on the way in stays ignored (nohup; SIGINT for a background job of a script)
    previous = {
        signum: signal.signal(signum, stop) for signum in _STOP_SIGNALS if signal.getsignal(signum) != signal.SIG_IGN
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of exiting, so tests can call it."""
    try:
        with _stop_on_signals():
            args = _parser().parse_args(argv)
            return COMMANDS[args.command](args)
    except InputError as error:
        print(error.render(), file=sys.stderr)
        return 2
    except BuildError as error:
        # the typesetter failed (a full disk, a file size limit): the site is as it was
        print(f"error: {error}", file=sys.stderr)
        return 2
    except Stopped as stopped:
        print(f"stopped by {signal.Signals(stopped.signum).name}", file=sys.stderr)
        return 128 + stopped.signum
    except OSError as error:
        # a folder that is a file, a disk that is full, a permission: the user's to fix, not a crash
        where = f"{error.filename}: " if error.filename else ""
        print(f"error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
