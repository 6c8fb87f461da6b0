"""Compare's "BPE at other vocabulary sizes" box: hostile values are a message, never a traceback (21.10)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.test_compare import table
from tests.conftest import APP
from ui import state_keys as sk


def test_hostile_sizes_give_a_message_and_keep_the_good_ones():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception
    at.session_state[sk.COMPARE_SIZES] = ["500", "inf", "1e400", "-1", "abc", "9" * 600]
    at.run()
    assert not at.exception, at.exception
    warnings = [w.value for w in at.warning if w.value.startswith("Ignored vocabulary size")]
    assert len(warnings) == 5, warnings
    assert "inf" in warnings[0] and "OverflowError" not in " ".join(warnings)
    assert any(label.endswith("· 500") for label in table(at))  # the valid size is still compared
