"""refsens-report: how much does a benchmark score depend on which gold you picked?"""

__version__ = "0.1.0"
