"""Workflow texts with fixable problems, shared by the engine, CLI and language-server tests of
fixes, so all three check the same files."""

# Safe fixes: two trailing commas. Unsafe: the misspelt `promt` (and the "missing" prompt that
# renaming it cures). Not fixable: the step id's length.
JSON_TEXT = '{"id": "broken", "name": "B", "version": "1.0.0", "steps": [{"id": "s", "title": "T", "promt": "p"},],}'
# One safe fix: `name: no` is read as false; quoting keeps the text as written.
YAML_TEXT = """\
# Owned by the release team.
id: yaml-flow
name: no   # YAML reads this as false
version: "1.0.0"
steps:
  - id: one
    title: One
    prompt: Do it.
"""
YAML_FIXED = YAML_TEXT.replace("name: no ", 'name: "no" ')
# What `workrail format` re-indents: the sequence items at the key's own indentation.
YAML_UNINDENTED = YAML_TEXT.replace(
    "  - id: one\n    title: One\n    prompt: Do it.\n",
    "- id: one\n  title: One\n  prompt: Do it.\n",
)
