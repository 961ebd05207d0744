"""Making the server: the SDK's logging set-up is skipped only where it would do nothing (the cold
start: it imports rich, ~20 ms of CPU per start)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import server_command, server_env
from tests.mcp.messages import INITIALIZE

# In a fresh interpreter: logging and sys.modules are process-wide.
MAKE_SERVER = """
import json, logging, sys
from pathlib import Path
if sys.argv[1] == "configured":
    logging.basicConfig(handlers=[logging.StreamHandler(sys.stderr)], level=logging.ERROR)
import mcp.server.mcpserver.server as sdk
configure = sdk.configure_logging
from workrail_engine.catalog import Catalog, Source
from workrail_mcp import create_server
create_server(Catalog([Source("project", Path(sys.argv[2]))]))
root = logging.getLogger()
print(json.dumps({
    "handlers": [type(h).__name__ for h in root.handlers],
    "level": logging.getLevelName(root.level),
    "rich": "rich" in sys.modules,
    "restored": sdk.configure_logging is configure,
}))
"""


def _make_server(tmp_path: Path, logging_state: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MAKE_SERVER, logging_state, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=server_env(tmp_path),
        check=True,
    )
    return json.loads(done.stdout)


def test_a_program_that_configured_logging_keeps_it_and_rich_is_not_loaded(tmp_path):
    assert _make_server(tmp_path, "configured") == {
        "handlers": ["StreamHandler"],
        "level": "ERROR",
        "rich": False,
        "restored": True,
    }


def test_a_program_that_did_not_gets_the_sdks_logging_set_up(tmp_path):
    assert _make_server(tmp_path, "unconfigured") == {
        "handlers": ["RichHandler"],
        "level": "WARNING",  # the level create_server gives the SDK
        "rich": True,
        "restored": True,
    }


def _answer_initialize(command: list[str], tmp_path: Path) -> str:
    """Run a server command that answers one ``initialize`` and exits; its stderr."""
    done = subprocess.run(
        command,
        input=json.dumps(INITIALIZE).encode() + b"\n",
        capture_output=True,
        timeout=120,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["result"]["serverInfo"]["name"] == "workflowlookup"
    return done.stderr.decode()


# The real server in a fresh interpreter, told at exit what the collector saw.
COUNTING_START = """
import atexit, gc, json, runpy, sys
passes = []
gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(info["generation"]))
def report():  # one write: -X importtime's lines from other threads cannot split it
    sys.stderr.write(json.dumps({"frozen": gc.get_freeze_count(), "enabled": gc.isenabled(),
                                 "passes": passes}) + "\\n")
atexit.register(report)
sys.argv = ["workrail-mcp", *sys.argv[1:]]
runpy.run_module("workrail_mcp", run_name="__main__")
"""


@pytest.fixture(scope="module")
def one_start(shared_project: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The stderr of one start of the real stdio server to its ``initialize`` answer and exit,
    under both instruments the start-up tests read: ``-X importtime`` (every module imported)
    and the collector's counts at exit. One start for the two tests instead of one each: a
    start is ≈ 1 s of CPU, and the two read different lines of it."""
    command = [sys.executable, "-X", "importtime", "-c", COUNTING_START]
    return _answer_initialize(
        [*command, *server_command(shared_project)[3:]], tmp_path_factory.mktemp("one-start")
    )


def test_the_stdio_server_answers_initialize_without_loading_rich(one_start):
    # -X importtime lists every module the process imports, on stderr.
    imported = [
        line.rsplit("|", 1)[1].strip()
        for line in one_start.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    assert "workrail_mcp.server" in imported
    assert not [name for name in imported if name == "rich" or name.startswith("rich.")]


def test_the_start_up_is_kept_from_the_collector_and_frozen(one_start):
    [report] = [line for line in one_start.splitlines() if line.startswith("{")]
    seen = json.loads(report)
    # what the SDK and our modules built is out of the collector's reach; it runs again after
    assert seen["frozen"] > 50_000, seen
    assert seen["enabled"] is True
    # a start used to make dozens of passes, full ones among them (each over everything built)
    assert 2 not in seen["passes"], seen
