"""The check every malformed-input test of the adapters makes: exit code 2, one error per line, no traceback."""

from __future__ import annotations

from pathlib import Path

from refsens_report.cli import main


def refused(config: Path, capsys, *expected: str) -> str:
    """Run `validate` on a config that must be refused; return stderr after checking it names ``expected``."""
    code = main(["validate", str(config)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), err
    for text in expected:
        assert text in err, (text, err)
    return err
