"""Serving a step: the stateless navigator (the next step), its guidance, the step as an
agent is told it, the metrics footer, and where a loop takes its decision.
"""
