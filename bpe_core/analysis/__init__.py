"""What the pages draw from a tokenizer and a text: figures, insights and the live view's tables.

* :mod:`~bpe_core.analysis.metrics` -- compression and coverage figures
  (tokens, bytes and characters per token, tokens per word, words split, ...);
* :mod:`~bpe_core.analysis.insights` -- token genealogy, vocabulary overlap,
  held-out splits, per-script figures, under-used tokens;
* :mod:`~bpe_core.analysis.live` -- a text's segmentation at every vocabulary
  size, computed once for the browser to redraw under the slider.

Everything here reads tokenizers through the declared interface
(:mod:`bpe_core.interface`).
"""
