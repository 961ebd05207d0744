"""The fast start: what the server answers before pygls is loaded, and then hands to pygls.

An editor waits for the answer to ``initialize`` before it sends anything else, then for the
diagnostics of the file its user opened. Importing pygls and lsprotocol costs ~0.5 s of Python;
neither answer needs them. So the server's first messages are read here with the standard
library (and the engine, for the diagnostics):

- ``handshake``: ``initialize`` is answered from ``initialize_result.json``, the answer pygls
  builds for this server, recorded from ``server.py``'s feature registrations;
- ``first_diagnostics``: the client's settings are asked for as the server asks, and the first
  opened workflow's own diagnostics are published (or given to the first pull);
- ``client_stream``: the client's stream read on a thread of its own, so that these messages
  can be waited for with a deadline.

pygls then reads every byte that came, as if it had read them itself (``Replay``), and its own
answers to what was answered here are dropped (``AnsweredOnce``). It exists for the start-up
goal, ``initialize`` answered within 0.1 s of the process start: ~30 ms with it, ~0.37 s without,
and the first opened workflow's diagnostics after ~80 ms instead of ~0.42 s (``bench/lsp_startup.py``
on a quiet run; docs/benchmarks.md, "The fast start fenced").

Its contract is that it changes nothing but the time: the same ``initialize`` result, the same
settings asked of the client, the same first diagnostics and the same behaviour after a settings
change as pygls alone gives (``tests/lsp/fast_start/test_parity.py`` starts the real server both
ways). Turned off (``workrail-lsp --no-fast-start``, or ``WORKRAIL_LSP_FAST_START=0``), pygls
answers everything from the first byte. Where a change goes:

- a capability: ``server.py``'s feature registrations, then ``RECORD_COMMAND`` re-records
  ``initialize_result.json`` (a test fails, naming the command, while it differs);
- a setting: ``configuration.py`` (``Settings.from_client``, ``SECTION``), read by both paths.

Only the standard library is imported by this module: it runs before anything else.
"""

from __future__ import annotations

from typing import BinaryIO

from ..message_size import LineReader

__all__ = ["ENVIRONMENT_SWITCH", "start"]

ENVIRONMENT_SWITCH = "WORKRAIL_LSP_FAST_START"
"""The environment variable that turns the fast start off (``0``) like ``--no-fast-start``."""


def start(stdin_fd: int, stdout: BinaryIO) -> tuple[LineReader, BinaryIO]:
    """Answer from the client's stream what can be answered before pygls is loaded; the stdin
    and stdout to give pygls (everything read, less what was answered here)."""
    from .client_stream import ClientStream
    from .handshake import AnsweredOnce, answer_initialize

    stdin, writer = answer_initialize(ClientStream(stdin_fd), stdout)  # type: ignore[arg-type]
    if not isinstance(writer, AnsweredOnce):
        return stdin, writer
    from .first_diagnostics import diagnose_first_document

    return diagnose_first_document(stdin, writer), writer  # type: ignore[return-value]
