"""`python -m refsens_report` is the same CLI as `refsens-report`."""

import sys

from refsens_report.cli import main

sys.exit(main())
