"""A workflow's definition as data: its steps (kinds, the walk, the one finder), the id
rules, its declared parameters and secrets, and the routines a templateCall names.
"""
