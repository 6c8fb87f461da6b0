"""User text as text: escaping for the two renderers that read markup into strings.

Every string a user controls -- the text, file names, special tokens, patterns,
typed values, token strings from imported files -- reaches the screen through
one of these helpers whenever it is formatted into something Streamlit or
Plotly parses:

- :func:`md` for Streamlit's Markdown (``st.markdown``, ``st.caption``,
  ``st.error``/``st.warning``/``st.info``/``st.success``, headers, widget labels
  and help, ``st.metric`` labels, ``st.expander`` labels): the characters that can
  start markup are backslash-escaped (CommonMark lets any ASCII punctuation be),
  so ``**x**``, ``_x_``, ``~~x~~``, ``![p](url)``, ``[a](b)``, `` `x` ``, ``<i>``,
  ``&amp;``, ``$x$`` (Streamlit's LaTeX), ``:red[x]`` and ``:material/...:``
  (Streamlit's directives), ``|`` (tables), bare ``http://``, ``www.`` and
  ``a@b.c`` (GFM autolinks) and a leading list or heading marker all show as typed;
  line breaks become spaces, so a value cannot start a new block.  Letters,
  digits, spaces, ``.``, ``,``, ``-``, ``/``, ``'``, ``"``, ``=``, ``?``, ``%``
  in the middle of a value are left alone, so ``mine.json`` stays ``mine.json``.
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

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!<>&#~$:|@^])")
_WWW = re.compile(r"(?i)\b(www)\.")
_LEADING_MARKER = re.compile(r"^(\s*)([-+=]|\d+[.)])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")


def md(value: object, *, limit: int | None = None) -> str:
    r"""``value`` (made a ``str``) safe to put inside Streamlit Markdown: it shows exactly as typed.

    Args:
        value: any object; ``str(value)`` is escaped.
        limit: cut the string to this many characters (adding ``…``) before escaping, for
            values echoed in a message (a typed value can be long).

    Returns:
        The string with its markup characters backslash-escaped and line breaks replaced by spaces.

    >>> print(md("**x**![p](http://127.0.0.1:9/p.png)"))
    \*\*x\*\*\!\[p\]\(http\://127.0.0.1\:9/p.png\)
    >>> print(md("- mine.json <i>", limit=13))
    \- mine.json \<…
    >>> print(md("www.example.com"))
    www\.example.com
    """
    s = str(value)
    if limit is not None and len(s) > limit:
        s = s[:limit] + "…"
    s = _MD_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", s))
    s = _WWW.sub(r"\1\\.", s)
    return _LEADING_MARKER.sub(lambda m: m[1] + "".join("\\" + c if not c.isdigit() else c for c in m[2]), s)


def plotly(value: object) -> str:
    """``value`` (made a ``str``) safe for any Plotly text: ``&``, ``<`` and ``>`` as entities.

    >>> plotly("<a href=x>y</a> & <i>z</i>")
    '&lt;a href=x&gt;y&lt;/a&gt; &amp; &lt;i&gt;z&lt;/i&gt;'
    """
    return html.escape(str(value), quote=False)
