"""The `workrail` command line (console script ``workrail`` → :func:`main`)."""

from workrail_engine.cli.app import cli, main

__all__ = ["cli", "main"]
