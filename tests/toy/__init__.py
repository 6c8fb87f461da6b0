"""A toy fourth algorithm in two modules (engine: :mod:`tests.toy.chars`, screen: :mod:`tests.toy.chars_view`).

It proves that an algorithm is one registration in the engine and one in ``ui``: no other module of the
project knows it, and every page shows it (``tests/app/test_fourth_algorithm.py``).
"""
