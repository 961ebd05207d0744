"""Workflow sources in Git repositories: declared (`declared`), fetched with a hardened ``git``
(`git`, `urls`), cached under the one home (`cache`), pinned by a lock (`lock`) and served to the
catalog from the cache alone (`served`). See docs/sources.md.

Nothing is imported here: `project_config` imports `declared`, which must not pull in the rest.
"""
