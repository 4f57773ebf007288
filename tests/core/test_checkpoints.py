"""Log-spaced checkpoints (``dprl.runner.checkpoints``), shared by every episode loop."""

import numpy as np
import pytest

from dprl.runner.checkpoints import log_checkpoints


@pytest.mark.parametrize("stop,count", [(1, 2), (7, 40), (5000, 25), (10**7, 40), (123, 1)])
def test_log_checkpoints_are_sorted_distinct_and_include_both_ends(stop, count):
    cp = log_checkpoints(stop, count)
    assert cp[0] == 1 and cp[-1] == stop and cp.dtype == np.int64
    assert np.all(np.diff(cp) > 0) and len(cp) <= max(count, 2)


def test_log_checkpoints_are_log_spaced():
    cp = log_checkpoints(10**6, 7)
    np.testing.assert_array_equal(cp, [1, 10, 100, 1000, 10**4, 10**5, 10**6])
    np.testing.assert_array_equal(log_checkpoints(1000, 4, start=10), [10, 46, 215, 1000])


@pytest.mark.parametrize("start,stop", [(0, 10), (5, 4)])
def test_log_checkpoints_reject_a_bad_range(start, stop):
    with pytest.raises(ValueError, match=f"start={start}, stop={stop}"):
        log_checkpoints(stop, 10, start=start)
