"""A child process's address space, capped: a process that reads without end fails its test
with MemoryError at the cap instead of taking the machine's memory (the suite shares 2 cores and
a few GiB with other work)."""

from __future__ import annotations

import resource
from collections.abc import Callable

__all__ = ["limit_address_space"]


def limit_address_space(limit: int) -> Callable[[], None]:
    """A ``preexec_fn`` for subprocess that sets the child's RLIMIT_AS to ``limit`` bytes."""

    def limit_in_child() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return limit_in_child
