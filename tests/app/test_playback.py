"""Play on the Merges page as a state machine: plain Python, a dict for session state, no Streamlit."""

from __future__ import annotations

import pytest

from ui import state_keys as sk
from ui.merges.playback import DEFAULT_SPEED, SPEEDS, Playback


def fresh(n_steps: int = 10, owner: int = 1, linked: int | None = None) -> Playback:
    p = Playback({}, n_steps)
    p.reset_for(owner, linked)
    return p


def run(p: Playback) -> bool:
    """One run of the page's fragment: take a pending full rerun, tick, draw (note the step shown)."""
    p.take_full_rerun()
    advanced = p.tick()
    p.show(p.step)
    return advanced


def test_a_new_history_starts_paused_at_step_one_with_the_default_speed():
    p = fresh()
    assert (p.step, p.playing, p.speed, p.interval) == (1, False, DEFAULT_SPEED, None)
    assert fresh(n_steps=0).step == 0  # nothing to step through: step 0


def test_a_linked_step_is_used_once_and_clamped():
    assert fresh(linked=7).step == 7
    assert fresh(linked=99).step == 10
    p = fresh(linked=7)
    p.go(to=3)
    p.reset_for(1, linked=8)  # the same history again: the link no longer applies
    assert p.step == 3


def test_another_history_resets_step_and_stops_playing():
    p = fresh()
    p.go(to=6)
    p.toggle()
    assert p.playing
    p.reset_for(2)
    assert (p.step, p.playing) == (1, False)


def test_the_same_history_keeps_its_step_and_clamps_it_to_a_shorter_range():
    p = fresh()
    p.go(to=8)
    shorter = Playback(p.state, 5)
    shorter.reset_for(1)
    assert shorter.step == 5


def test_go_moves_and_clamps():
    p = fresh()
    p.go(1)
    assert p.step == 2
    p.go(-5)
    assert p.step == 0
    p.go(to=10)
    assert p.step == 10
    p.go(1)
    assert p.step == 10


def test_a_control_run_is_not_a_tick():
    p = fresh()
    p.toggle()
    assert p.take_full_rerun()  # the timer starts with a full rerun
    assert not p.tick()  # that run was caused by the Play button
    assert p.step == 1


def test_playing_advances_by_the_speeds_stride_and_pauses_at_the_end():
    p = fresh(n_steps=12)
    p.state[sk.MERGE_SPEED] = "5 / s"
    p.toggle()
    assert p.interval == SPEEDS["5 / s"][0]
    run(p)  # the Play button's own run
    steps = []
    while p.playing:
        assert run(p)
        steps.append(p.step)
    assert steps == [6, 11, 12]
    assert p.interval is None
    assert p.take_full_rerun()  # the page drops the timer
    assert not p.tick()  # and that run does not move


def test_play_at_the_end_starts_again_from_zero():
    p = fresh()
    p.go(to=10)
    p.toggle()
    assert (p.step, p.playing) == (0, True)


def test_pause_stops_ticks():
    p = fresh()
    p.toggle()
    run(p)
    assert run(p) and p.step == 2
    p.toggle()
    assert p.take_full_rerun()
    assert not run(p) and not run(p)
    assert p.step == 2


def test_moving_the_slider_while_playing_is_not_a_tick():
    p = fresh()
    p.toggle()
    run(p)
    p.state[sk.MERGE_STEP] = 7  # the slider's value, set by the browser
    assert not p.tick()
    p.show(p.step)
    assert p.tick() and p.step == 8


def test_a_table_click_jumps_and_pauses():
    p = fresh()
    p.toggle()
    run(p)
    p.jump(9)
    assert (p.step, p.playing) == (9, False)
    assert p.take_full_rerun()
    assert not p.tick()
    paused = fresh()
    paused.jump(4)
    assert not paused.take_full_rerun()  # no timer to drop


def test_changing_speed_reruns_only_while_playing():
    p = fresh()
    p.speed_changed()
    assert not p.take_full_rerun()
    p.toggle()
    p.take_full_rerun()
    p.speed_changed()
    assert p.take_full_rerun()


@pytest.mark.parametrize("label", list(SPEEDS))
def test_every_speed_has_a_positive_interval_of_at_least_half_a_second(label):
    p = fresh()
    p.state[sk.MERGE_SPEED] = label
    p.toggle()
    assert p.interval >= 0.5 and p.stride >= 1


def test_an_unknown_speed_reads_as_the_default():
    p = fresh()
    p.state[sk.MERGE_SPEED] = "fast"
    assert p.speed == DEFAULT_SPEED


def test_the_module_example_runs():
    import doctest

    from ui.merges import playback

    assert doctest.testmod(playback).failed == 0
