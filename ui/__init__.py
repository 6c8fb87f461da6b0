"""Streamlit-side helpers shared by the pages: inputs, cached training, HTML, figures.

Nothing here implements an algorithm: it calls :mod:`bpe_core` and lays out what
comes back.
"""
