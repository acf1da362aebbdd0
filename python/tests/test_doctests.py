"""The examples in the package's docstrings run and print what they say."""

import doctest

import robotsieve


def test_docstring_examples():
    failures, tried = doctest.testmod(robotsieve, verbose=False)
    assert tried >= 8, f"only {tried} docstring examples found"
    assert failures == 0
