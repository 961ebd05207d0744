"""The text of a workflow file: reading it safely, parsing JSON and YAML strictly (with a
span for every JSON pointer) and tolerantly (for editors), JSON pointers, and which files
are workflows at all, and the one layout `workrail format` writes.
"""
