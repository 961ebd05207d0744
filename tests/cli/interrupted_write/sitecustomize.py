"""Put on PYTHONPATH of a `workrail` subprocess, this interrupts its first rewrite between writing
the temporary file and renaming it over the original (at the temporary file's fsync), as named by
``WORKRAIL_TEST_AT_FSYNC``:

- ``save``: the author saves the file meanwhile (``WORKRAIL_TEST_SAVE_PATH`` gets
  ``WORKRAIL_TEST_SAVE_TEXT``), the race `format` and `--fix` must not lose;
- ``kill``: the process is killed (SIGKILL: no handler, no ``finally`` runs).

Nothing in the product reads these variables; without them this module does nothing.
"""

from __future__ import annotations

import os
import signal

_ACTION = os.environ.get("WORKRAIL_TEST_AT_FSYNC")
_real_fsync = os.fsync


def _interrupting_fsync(fd: int) -> None:
    _real_fsync(fd)
    os.fsync = _real_fsync  # the first write only
    if _ACTION == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif _ACTION == "save":
        with open(os.environ["WORKRAIL_TEST_SAVE_PATH"], "w", encoding="utf-8") as saved:
            saved.write(os.environ["WORKRAIL_TEST_SAVE_TEXT"])


if _ACTION:
    os.fsync = _interrupting_fsync
