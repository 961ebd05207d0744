"""``workrail-lsp``: the WorkRail language server over stdio. stdout carries protocol only."""

from __future__ import annotations

import gc
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__all__ = ["main"]

# CPython's cyclic collector runs a young-generation pass every 700 container allocations, and
# parsing and checking a 1 MB workflow allocates ~100,000 (dicts, lists, findings): ~150 passes
# per document, each scanning what survived the last ones, and full passes over every open
# document now and then. Measured on the 1 MB bench workflow with 16 documents held: parse +
# lint 99 → 68 ms median, worst 246 → 108 ms. What an editor session allocates is almost all
# acyclic (JSON values, findings), freed by reference counting; a pass every 50,000 allocations
# still bounds the cyclic garbage that does occur (asyncio tasks, exceptions).
YOUNG_GENERATION_THRESHOLD = 50_000


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="workrail-lsp",
        description="WorkRail language server (LSP over stdio) for workflow files.",
    )
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="talk LSP over stdin/stdout (the default; accepted for editors that pass it)",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (logs go to stderr)",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Editors start the server with no arguments or with --stdio; argparse (and the gettext and
    # shutil it loads, ~10 ms) is left out of that start-up, which the editor waits for.
    log_level = "WARNING"
    if argv not in ([], ["--stdio"]):
        args = _parser().parse_args(argv)
        if args.version:
            from . import __version__

            print(f"workrail-lsp {__version__}")
            return 0
        log_level = args.log_level
    logging.basicConfig(
        stream=sys.stderr,
        level=log_level,
        format="workrail-lsp %(levelname)s %(name)s: %(message)s",
    )
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD)  # the older generations' thresholds are kept
    # The editor waits for the answer to ``initialize``; it is given before pygls is loaded.
    from .client_stream import ClientStream
    from .handshake import AnsweredOnce, answer_initialize

    client = ClientStream(sys.stdin.fileno())
    stdin, stdout = answer_initialize(client, sys.stdout.buffer)  # type: ignore[arg-type]
    if isinstance(stdout, AnsweredOnce):
        # So is the first opened workflow's own diagnostics (pygls takes ~0.5 s to load).
        from .first_diagnostics import diagnose_first_document

        stdin = diagnose_first_document(stdin, stdout)
    from .server import create_language_server

    create_language_server().start_io(stdin, stdout)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
