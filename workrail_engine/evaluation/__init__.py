"""Evaluating what a workflow says against values: conditions, output rules and their
regexes, artifact contracts, `{{ … }}` templates, JSON output, and the problems found in
such expressions, and the checks an agent's answer to a step must pass.
"""
