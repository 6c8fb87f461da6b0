r"""User text as text: escaping for the two renderers that read markup into strings.

Every string a user controls -- the text, file names, special tokens, patterns,
typed values, token strings from imported files -- reaches the screen through
one of these helpers whenever it is formatted into something Streamlit or
Plotly parses:

- :func:`md` for Streamlit's Markdown (``st.markdown``, ``st.caption``,
  ``st.error``/``st.warning``/``st.info``/``st.success``, headers, widget labels
  and help, ``st.metric`` labels, ``st.expander`` labels): every character that
  can open markup there is backslash-escaped (CommonMark lets any ASCII
  punctuation be): ``\``, `` ` ``, ``*``, ``~``, ``$`` (Streamlit's LaTeX),
  ``<`` and ``&`` (HTML, entities, autolinks), ``[`` and ``]`` (links, images,
  Streamlit's ``:red[...]`` directives), ``_`` unless inside a word (``vocab_size``
  cannot open emphasis), and a leading list, heading or quote marker.  Some markup
  is found in the *text* after parsing, where escapes no longer count (GFM's bare
  ``http://``, ``www.`` and e-mail autolinks; Streamlit's ``:emoji:`` and
  ``:material/icon:`` shortcodes): there an invisible WORD JOINER (U+2060) goes
  after a ``:`` that a non-space follows, before ``@`` and after ``www``, so the
  text reads the same and links nowhere.  Line breaks become spaces, so a value
  cannot start a new block.  Everything else stays as typed, so
  ``mine.json (2 files): ok`` reads the same in the Markdown source and on screen.
- :func:`plotly` for Plotly's text (titles, axis and tick labels, legend
  entries, hover text, annotations, icicle labels): Plotly renders a subset of
  HTML (``<b>``, ``<i>``, ``<a href>``, ``<br>``, ``<span style>``), so
  ``&``, ``<`` and ``>`` become entities.

HTML that the app builds itself (:mod:`ui.render`) escapes with
:func:`html.escape`; ``st.dataframe`` and ``st.code``/``st.text`` show text as text.
"""

from __future__ import annotations

import html
import re

_ALWAYS = frozenset("\\`*~$<&[]")
_WWW = re.compile(r"(?i)\b(www)\.")
WORD_JOINER = "\u2060"
"""Invisible, zero-width, no line break: splits the text that autolinks and shortcodes are found in."""
_LEADING_MARKER = re.compile(r"^(\s*)([-+=>#]|\d+[.)])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")


def md(value: object, *, limit: int | None = None) -> str:
    r"""``value`` (made a ``str``) safe to put inside Streamlit Markdown: it shows exactly as typed.

    Args:
        value: any object; ``str(value)`` is escaped.
        limit: cut the string to this many characters (adding ``…``) before escaping, for
            values echoed in a message (a typed value can be long).

    Returns:
        The string with its markup characters backslash-escaped and line breaks replaced by spaces.

    >>> print(md("**x**![p](http://127.0.0.1:9/p.png)").replace(WORD_JOINER, "|"))
    \*\*x\*\*!\[p\](http:|//127.0.0.1:|9/p.png)
    >>> print(md("- mine.json (2 files): <i>", limit=24))
    \- mine.json (2 files): \<…
    >>> print(md("_x_ vocab_size :red[y] a@b.c www.d.e").replace(WORD_JOINER, "|"))
    \_x\_ vocab_size :|red\[y\] a|@b.c www|.d.e
    """
    s = str(value)
    if limit is not None and len(s) > limit:
        s = s[:limit] + "…"
    s = _LINE_BREAKS.sub(" ", s)
    out = []
    for i, c in enumerate(s):
        if c in _ALWAYS:
            out.append("\\" + c)
        elif c == "_" and not (0 < i < len(s) - 1 and s[i - 1].isalnum() and s[i + 1].isalnum()):
            out.append("\\_")
        elif c == ":" and i + 1 < len(s) and not s[i + 1].isspace():
            out.append(":" + WORD_JOINER)
        elif c == "@":
            out.append(WORD_JOINER + "@")
        else:
            out.append(c)
    s = _WWW.sub(r"\1" + WORD_JOINER + ".", "".join(out))
    return _LEADING_MARKER.sub(lambda m: m[1] + "".join(c if c.isdigit() else "\\" + c for c in m[2]), s)


def plotly(value: object) -> str:
    """``value`` (made a ``str``) safe for any Plotly text: ``&``, ``<`` and ``>`` as entities.

    >>> plotly("<a href=x>y</a> & <i>z</i>")
    '&lt;a href=x&gt;y&lt;/a&gt; &amp; &lt;i&gt;z&lt;/i&gt;'
    """
    return html.escape(str(value), quote=False)
