"""Play on the Merges page: a small state machine in plain Python (no Streamlit), over a state mapping.

The state lives in a mutable mapping -- ``st.session_state`` in the app, a
``dict`` in the tests -- because the step and the speed are also the values of
widgets (the step slider, the speed selector), which Streamlit keeps under
their keys.  :class:`Playback` is the only code that reads or writes those
keys; the page's buttons call its methods, and the page's fragment, which
Streamlit reruns every :attr:`Playback.interval` seconds while playing, calls
:meth:`Playback.tick` at the start of each run.

States: *paused* or *playing*, with a step ``0 <= step <= n_steps`` and a speed
(a key of :data:`SPEEDS`).  Transitions:

* :meth:`~Playback.go` (First, Prev, Next, Last) moves the step;
* :meth:`~Playback.toggle` plays or pauses (playing from the last step starts again at 0);
* :meth:`~Playback.jump` (a click in the merge table) moves the step and pauses;
* :meth:`~Playback.tick` advances a playing history by the speed's stride --
  unless this run was caused by a control (:meth:`~Playback.touch`) or the
  slider moved the step (the step differs from the one :meth:`~Playback.show`
  noted) -- and pauses at the last step;
* :meth:`~Playback.reset_for` starts a new history at step 1 (or a linked step), paused.

Changing between playing and paused changes the fragment's timer, which only a
full rerun of the page can do: such transitions set a flag that
:meth:`~Playback.take_full_rerun` hands to the page once.

>>> state = {}
>>> p = Playback(state, n_steps=3)
>>> p.reset_for(owner=1)
>>> p.step, p.playing
(1, False)
>>> p.toggle(); p.take_full_rerun(), p.tick(), p.step
(True, False, 1)
>>> p.show(p.step); p.tick(), p.step
(True, 2)
>>> p.show(p.step); p.tick(), p.step, p.playing
(True, 3, False)
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from ui import state_keys as sk

SPEEDS: dict[str, tuple[float, int]] = {
    "0.5 / s": (2.0, 1),
    "1 / s": (1.0, 1),
    "2 / s": (0.5, 1),
    "5 / s": (1.0, 5),
    "10 / s": (1.0, 10),
    "50 / s": (1.0, 50),
}
"""Play speeds: label -> (seconds between ticks, merges advanced per tick).

Ticks are never closer than half a second: each one redraws the text, the card,
three charts and two tables, and a slower browser would fall behind.
"""

DEFAULT_SPEED = "1 / s"


def clamp(k: int, n: int) -> int:
    """``k`` as a step of a history with ``n`` merges: ``0 <= k <= n``."""
    return min(max(int(k), 0), n)


class Playback:
    """The step, play/pause and speed of the Merges page, kept in ``state``.

    Args:
        state: where the values live (``st.session_state``, or a ``dict``);
            keys are :data:`ui.state_keys.MERGE_STEP`, ``MERGE_PLAYING``,
            ``MERGE_SPEED`` and the internal flags ``MERGE_TOUCHED``,
            ``MERGE_SHOWN_STEP``, ``MERGE_FULL_RERUN``.
        n_steps: merges in the history (the last step).
    """

    def __init__(self, state: MutableMapping[str, Any], n_steps: int) -> None:
        self.state = state
        self.n_steps = n_steps

    # -- reading -------------------------------------------------------------

    @property
    def step(self) -> int:
        """The step shown (0 = no merge yet)."""
        return self.state.get(sk.MERGE_STEP, 0)

    @property
    def playing(self) -> bool:
        """Whether the history plays by itself."""
        return bool(self.state.get(sk.MERGE_PLAYING, False))

    @property
    def speed(self) -> str:
        """The speed's label (a key of :data:`SPEEDS`; an unknown one reads as :data:`DEFAULT_SPEED`)."""
        label = self.state.get(sk.MERGE_SPEED)
        return label if label in SPEEDS else DEFAULT_SPEED

    @property
    def stride(self) -> int:
        """Merges advanced per tick at this speed."""
        return SPEEDS[self.speed][1]

    @property
    def interval(self) -> float | None:
        """Seconds between ticks while playing; ``None`` when paused (no timer)."""
        return SPEEDS[self.speed][0] if self.playing else None

    # -- transitions ---------------------------------------------------------

    def touch(self) -> None:
        """Note that a control caused this run: the next :meth:`tick` does not advance."""
        self.state[sk.MERGE_TOUCHED] = True

    def go(self, delta: int | None = None, to: int | None = None) -> None:
        """Move to step ``to``, or by ``delta`` steps (clamped to ``0..n_steps``)."""
        self.state[sk.MERGE_STEP] = clamp(to if to is not None else self.step + (delta or 0), self.n_steps)
        self.touch()

    def toggle(self) -> None:
        """Play or pause; playing from the last step starts again at step 0."""
        playing = not self.playing
        if playing and self.step >= self.n_steps:
            self.state[sk.MERGE_STEP] = 0
        self.state[sk.MERGE_PLAYING] = playing
        self.state[sk.MERGE_FULL_RERUN] = True  # the fragment's timer is set when the page runs
        self.touch()

    def speed_changed(self) -> None:
        """The speed selector moved: while playing, the timer's interval may change."""
        if self.playing:
            self.state[sk.MERGE_FULL_RERUN] = True
        self.touch()

    def jump(self, step: int) -> None:
        """Go to ``step`` and pause (a click in the merge table)."""
        self.state[sk.MERGE_STEP] = int(step)
        if self.playing:
            self.state[sk.MERGE_PLAYING] = False
            self.state[sk.MERGE_FULL_RERUN] = True
        self.touch()

    def reset_for(self, owner: int, linked: int | None = None) -> None:
        """Show a history: a new ``owner`` (another history) starts at step 1, or ``linked``, paused.

        The step is clamped to ``0..n_steps`` on every call; the speed gets its default once.

        Args:
            owner: identifies the history shown (its ``id``).
            linked: a step from a shared link, used instead of 1 for a new owner.
        """
        owner_key = sk.owner_key(sk.MERGE_STEP)
        if self.state.get(owner_key) != owner:
            self.state[owner_key] = owner
            self.state[sk.MERGE_STEP] = min(1, self.n_steps) if linked is None else linked
            self.state[sk.MERGE_PLAYING] = False
        self.state[sk.MERGE_STEP] = clamp(self.state.get(sk.MERGE_STEP, 1), self.n_steps)
        self.state.setdefault(sk.MERGE_SPEED, DEFAULT_SPEED)

    def is_new_owner(self, owner: int) -> bool:
        """Whether :meth:`reset_for` would start ``owner`` afresh (it is not the history last shown)."""
        return self.state.get(sk.owner_key(sk.MERGE_STEP)) != owner

    def take_full_rerun(self) -> bool:
        """Whether the page must rerun in full before drawing (the timer changes); clears the request."""
        return bool(self.state.pop(sk.MERGE_FULL_RERUN, False))

    def tick(self) -> bool:
        """Start of a run: advance by :attr:`stride` if this run is a play tick; ``True`` when it advanced.

        A run is a tick unless a control flagged it (:meth:`touch`) or the step
        differs from the one last drawn (:meth:`show`: the slider moved it).
        Reaching the last step pauses (and asks for a full rerun to drop the timer).
        """
        state = self.state
        step = state.get(sk.MERGE_STEP)
        touched = state.pop(sk.MERGE_TOUCHED, False) or step != state.get(sk.MERGE_SHOWN_STEP, step)
        if not self.playing or touched:
            return False
        state[sk.MERGE_STEP] = clamp(self.step + self.stride, self.n_steps)
        if state[sk.MERGE_STEP] >= self.n_steps:
            state[sk.MERGE_PLAYING] = False
            state[sk.MERGE_FULL_RERUN] = True  # drop the timer on the next run
            state[sk.MERGE_TOUCHED] = True
        return True

    def show(self, step: int) -> None:
        """Note the step drawn in this run (the next :meth:`tick` compares with it)."""
        self.state[sk.MERGE_SHOWN_STEP] = step
