"""Fixtures shared by every test directory: the pytest session's local SLURM cluster.

Every SLURM test (tests/cluster/, tests/workflow/test_slurm.py) gets its cluster from
the one :class:`SlurmClusterOwner` of the session, so a session never runs two clusters
at once, whatever order the tests run in: tests that must watch a cluster stop (or fail)
ask the owner to stop the shared one first (:meth:`SlurmClusterOwner.fresh`), and the
next test that needs it gets a new one (a start takes about a second).

Clusters of different sessions on one host do not collide: each lives in its own
temporary directory with its own config, ports, state, pid files and munge socket, and
nothing is written to /etc (tests/cluster/slurm_cluster.py explains how).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CLUSTER_DIR = Path(__file__).resolve().parent / "cluster"
if str(CLUSTER_DIR) not in sys.path:
    sys.path.insert(0, str(CLUSTER_DIR))

from slurm_cluster import SlurmCluster, require_slurm_or_skip  # noqa: E402


class SlurmClusterOwner:
    """Owns the (at most one) running local SLURM cluster of a pytest session."""

    def __init__(self, cpu_factor: int) -> None:
        self.cpu_factor = cpu_factor
        self.current: SlurmCluster | None = None  # running now, or None
        self.starts = 0  # clusters started so far (reported at the end of the session)

    def _start(self, **options) -> SlurmCluster:
        assert self.current is None, "the session already runs a cluster"
        cluster = SlurmCluster(**options)
        cluster.start()
        self.current, self.starts = cluster, self.starts + 1
        print(f"\n[slurm] one-node cluster up in {cluster.start_seconds:.2f} s: {cluster.describe()}")
        return cluster

    def get(self) -> SlurmCluster:
        """The shared cluster, started now if none runs (first use, or after a test
        stopped it)."""
        if self.current is None:
            self._start(cpu_factor=self.cpu_factor)
        return self.current

    def stop(self) -> None:
        """Stop the running cluster, if any; the next :meth:`get` starts a new one."""
        cluster, self.current = self.current, None
        if cluster is not None:
            cluster.stop()

    @contextmanager
    def fresh(self, **options) -> Iterator[SlurmCluster]:
        """A cluster of its own for the body (``SlurmCluster(**options)``), used as a
        context manager, so it is stopped on the way out even if the body raises. The
        shared cluster is stopped first: one cluster per session at any time."""
        self.stop()
        cluster = SlurmCluster(**options)
        try:
            with cluster:
                self.current, self.starts = cluster, self.starts + 1
                yield cluster
        finally:
            self.current = None


@pytest.fixture(scope="session")
def slurm_owner() -> Iterator[SlurmClusterOwner]:
    """The session's cluster owner; fails in CI (CI=true) if SLURM cannot run, skips
    elsewhere. Stops whatever cluster runs when the session ends."""
    require_slurm_or_skip()
    # Each SLURM job spends most of its time starting two Snakemake processes (the
    # jobstep and the job) and little on its smoke-size simulation; advertising 4 CPUs per
    # real one lets 4x more of those overlap on a small CI machine.
    owner = SlurmClusterOwner(cpu_factor=int(os.environ.get("DPRL_SLURM_CPU_FACTOR", "4")))
    try:
        yield owner
    finally:
        owner.stop()
        print(f"\n[slurm] clusters started this session: {owner.starts}")


@pytest.fixture
def slurm_cluster(slurm_owner: SlurmClusterOwner) -> SlurmCluster:
    """The session's running cluster. Function-scoped on purpose: a test may have
    stopped the previous one (tests/cluster/test_slurm_cluster.py), and a cached
    session value would then hand out a dead cluster."""
    return slurm_owner.get()


# ---------------------------------------------------------------------------- parallel runs

# With pytest-xdist (``-n auto --dist loadgroup`` in pyproject.toml) the tests of these
# folders run on one worker, one after another, as without it: they share session fixtures
# (one smoke run, one SLURM cluster at a time) and each drives Snakemake on every core. The
# other tests spread over the remaining workers.
SERIAL_DIRS = ("workflow", "cluster")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks into the node ids
def pytest_collection_modifyitems(config, items) -> None:
    root = Path(__file__).resolve().parent
    for item in items:
        path = Path(str(item.path)).resolve()
        if path.is_relative_to(root) and path.relative_to(root).parts[0] in SERIAL_DIRS:
            item.add_marker(pytest.mark.xdist_group("serial"))


def pytest_configure(config) -> None:
    """Before the workers start (the controller, or a run without xdist): import every
    module that defines Numba kernels, so that stale caches are flushed and stamped once
    (``dprl.runner.kernel_cache``) rather than by two workers at the same time."""
    if hasattr(config, "workerinput"):
        return
    import importlib
    import pkgutil

    import dprl
    from dprl.runner.kernel_cache import defines_kernels

    for mod in pkgutil.walk_packages(dprl.__path__, "dprl."):
        if defines_kernels(mod.name):
            importlib.import_module(mod.name)
