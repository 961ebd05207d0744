"""The Postgres server fixture of the runs' tests, shared here (sessions live in the same store)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "runs_conftest", Path(__file__).parents[1] / "runs" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_runs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_runs)

postgres_server = _runs.postgres_server
postgres_url = _runs.postgres_url
