"""WorkRail's one home directory: the user's workflows (``workflows/``) and runs (``runs/``).

``$WORKRAIL_HOME`` when set, else ``~/.workrail``: one place a person can find, back up or wipe,
for the files they write by hand and the run store alike.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["workrail_home"]


def workrail_home() -> Path:
    home = os.environ.get("WORKRAIL_HOME")
    return Path(home).expanduser() if home else Path.home() / ".workrail"
