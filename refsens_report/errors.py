"""The one error type a user ever sees: a list of problems, each naming where and what."""

from __future__ import annotations

import sys
import unicodedata

MAX_PROBLEMS = 50
# what a terminal must not receive raw: controls (a stray escape sequence), invisible and bidirectional
# formatting characters (U+202E would reverse the rest of the line), surrogates, unassigned code points
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def printable(line: str) -> str:
    """Return a message line with every control or invisible character written as an escape (\\u202e)."""
    if line.isprintable():
        return line
    return "".join(
        character.encode("unicode_escape").decode("ascii")
        if unicodedata.category(character) in _ESCAPED_CATEGORIES
        else character
        for character in line
    )


class InputError(Exception):
    """Bad usage or bad input: every problem found, reported together, then exit code 2."""

    def __init__(self, problems: list[str] | str):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))

    def render(self) -> str:
        """Return the problems as lines for stderr, capped so a broken file cannot flood the terminal."""
        shown = self.problems[:MAX_PROBLEMS]
        lines = [f"error: {printable(problem)}" for problem in shown]
        hidden = len(self.problems) - len(shown)
        if hidden > 0:
            lines.append(f"error: ... and {hidden} more problems")
        return "\n".join(lines)


class BuildError(RuntimeError):
    """The build could not finish for a reason the user can act on (the PDF typesetter failed: a full disk, a
    file size limit): one line, exit code 2, no traceback. A RuntimeError, as pdf.py raised before."""


class Stopped(BaseException):
    """SIGTERM or SIGHUP asked the command to stop (as KeyboardInterrupt does for SIGINT): the build cleans up
    on the way out and the CLI exits with 128 + the signal's number."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signum)


class ProblemList:
    """Collects problems while reading input; raises them all at once."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, problem: str) -> None:
        self.problems.append(problem)

    def __bool__(self) -> bool:
        return bool(self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def warn(message: str) -> None:
    """Print a warning line on stderr: something was skipped or repaired, and the command goes on."""
    print(f"warning: {message}", file=sys.stderr)
