"""A hypothesis strategy shared by the condition and rule tests: and/or/not trees over leaves."""

from hypothesis import strategies as st


def boolean_trees(leaves: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(
        leaves,
        lambda inner: (
            st.builds(lambda xs: {"and": xs}, st.lists(inner, min_size=1, max_size=3))
            | st.builds(lambda xs: {"or": xs}, st.lists(inner, min_size=1, max_size=3))
            | st.builds(lambda x: {"not": x}, inner)
        ),
        max_leaves=6,
    )
