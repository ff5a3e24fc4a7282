"""Deadline budget: time left, expiry, and the per-node cap (design.md, "Deadline budget")."""

import pytest

from hub.resilience import Deadline, ManualClock


def test_left_counts_down_and_never_goes_below_zero():
    clock = ManualClock()
    deadline = Deadline(8.0, clock=clock)
    assert deadline.left() == 8.0
    clock.advance(3.0)
    assert deadline.left() == 5.0
    assert deadline.elapsed() == 3.0
    assert not deadline.expired()
    clock.advance(6.0)
    assert deadline.left() == 0.0
    assert deadline.expired()


def test_for_node_is_the_smaller_of_timeout_and_time_left():
    clock = ManualClock()
    deadline = Deadline(8.0, clock=clock)
    assert deadline.for_node(3.0) == 3.0
    clock.advance(6.5)
    assert deadline.for_node(3.0) == 1.5
    clock.advance(5.0)
    assert deadline.for_node(3.0) == 0.0


def test_retries_spend_the_same_budget():
    clock = ManualClock()
    deadline = Deadline(8.0, clock=clock)
    spent = 0.0
    for _attempt in range(2):  # a node that always uses its whole timeout, retried once
        step = deadline.for_node(5.0)
        clock.advance(step)
        spent += step
    assert spent == 8.0
    assert deadline.expired()


def test_zero_budget_is_expired_at_once():
    assert Deadline(0.0, clock=ManualClock()).expired()


@pytest.mark.parametrize("budget", [-1.0, float("inf"), float("nan")])
def test_bad_budget_is_refused(budget):
    with pytest.raises(ValueError, match="deadline budget"):
        Deadline(budget, clock=ManualClock())


def test_manual_clock_refuses_to_go_back():
    with pytest.raises(ValueError):
        ManualClock().advance(-1)
