"""The Merges page in parts: step through training one merge at a time.

* :mod:`~ui.merges.model` -- what step ``k`` looks like (:class:`MergeHistory`, :class:`StepCard`, :class:`WhyThisPair`)
* :mod:`~ui.merges.history` -- one history class per algorithm, :func:`history_for`
* :mod:`~ui.merges.figures` -- the charts of a step (glue to :mod:`ui.charts`)
* :mod:`~ui.merges.why` -- "why this pair": the candidates and the tie-break in words
* :mod:`~ui.merges.card` -- the merge card (HTML)
* :mod:`~ui.merges.text` -- the training text at step ``k``, examples in context
* :mod:`~ui.merges.tables` -- the searchable merge table
* :mod:`~ui.merges.playback` -- Play as a state machine in plain Python
* :mod:`~ui.merges.page` -- the Streamlit glue: cached history, controls, the fragment
"""
