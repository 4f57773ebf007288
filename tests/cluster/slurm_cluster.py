"""A real one-node SLURM cluster for tests (Debian ``slurm-wlm`` + ``munge``).

Everything a cluster uses lives under its own directory (a fresh temporary one by
default): munge key/socket/pid/log, ``slurm.conf``, state, spool, pid and log files, and
a ``bin/srun`` shim (see below). The slurm.conf points the munge plugins at the private
munged socket (``AuthInfo``), so the system munged and /etc/munge are not used, and
nothing is written outside that directory: no /etc/slurm/slurm.conf, so two clusters
(two test sessions, or a developer's cluster next to CI) coexist on one host.

How each party finds the cluster: the daemons get ``-f <dir>/etc/slurm.conf``; client
commands (sinfo, sbatch, squeue, scancel, scontrol) and Snakemake's SLURM executor plugin
(which runs sbatch/squeue/scancel with its own environment) get ``SLURM_CONF`` from
:attr:`SlurmCluster.env`, and jobs inherit it (the plugin submits with ``--export=ALL``).
One party drops it: the Snakemake jobstep plugin removes every ``SLURM_*`` variable but
the job's identity from the environment of the ``srun`` it runs inside each job, so that
srun would read the compiled-in default /etc/slurm/slurm.conf. Instead of putting our
config there (host-wide), :attr:`SlurmCluster.env` puts ``<dir>/bin`` first on ``PATH``;
its ``srun`` sets ``SLURM_CONF`` to this cluster's config and execs the real srun.

Host-wide things that remain: TCP ports and the temporary directory. Ports are picked
free while holding an exclusive ``flock`` on ``<tmp>/dprl-slurm.lock`` until both daemons
listen, so two sessions starting at once cannot pick the same port. A cluster started
under a fresh temporary directory also holds a ``flock`` on ``<dir>/owner.lock`` for as
long as it runs; the kernel releases it when the owning process dies, however it dies,
so the next start (under the host lock) stops the daemons of clusters whose owner is gone
and removes their directories (:func:`reap_stale_clusters`).

Usage::

    with SlurmCluster() as cluster:          # starts munged, slurmctld, slurmd
        subprocess.run(["sinfo"], env=cluster.env)
    # daemons stopped (by the pids they wrote), temporary directory removed

or from a shell (e.g. to benchmark by hand)::

    python tests/cluster/slurm_cluster.py start --dir /tmp/slurm   # prints `export SLURM_CONF=... PATH=...`
    python tests/cluster/slurm_cluster.py stop --dir /tmp/slurm

Requirements: root (slurmd must run as root, munged as the ``munge`` user), the Debian
packages ``slurm-wlm`` and ``munge`` (``.ci/install-slurm.sh``). Loopback only: the node
and controller addresses are 127.0.0.1, so the host name need not resolve.
Design choices that matter on containers: ``ProctrackType=proctrack/linuxproc`` and
``TaskPlugin=task/none`` (no cgroup plugins), ``JobAcctGatherType=jobacct_gather/none``,
no accounting database (``AccountingStorageType=accounting_storage/none``); without it
``sacct`` does not work, so job status must be queried with ``squeue``
(``--slurm-status-command squeue``), which is reliable as long as finished jobs stay
visible for ``MinJobAge`` seconds (set to 600 here).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd", "munged")
REQUIRED_BINARIES = ("munged", "slurmctld", "slurmd", "sinfo", "sbatch", "srun", "squeue", "scontrol", "scancel")
DEFAULT_PARTITION = "dprltest"
OUR_ROOT_PREFIX = "dprl-slurm-"
# Held (flock) by the process that owns a cluster in a fresh temporary directory.
OWNER_LOCK = "owner.lock"
# Held (flock) while a cluster picks its ports and starts, and while stale clusters are
# reaped: the one host-wide serialisation point. In the temporary directory, like the
# clusters themselves, so that the reaper and the clusters agree on where to look.
HOST_LOCK_NAME = "dprl-slurm.lock"


class SlurmUnavailable(RuntimeError):
    """SLURM cannot be started here (packages missing, not root, ...)."""


class SlurmStartError(RuntimeError):
    """The daemons did not come up; the message carries the tails of their logs."""


def _which(name: str) -> str | None:
    # daemons live in /usr/sbin, which may not be on a non-root PATH
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")


def slurm_unavailable_reason() -> str | None:
    """Why a local SLURM cannot be started here, or None if it can."""
    missing = [b for b in REQUIRED_BINARIES if _which(b) is None]
    if missing:
        return f"SLURM/munge binaries not found: {', '.join(missing)} (install with .ci/install-slurm.sh)"
    if os.geteuid() != 0:
        return "starting slurmd/munged needs root"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "no 'munge' user (the munge package creates it)"
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require_slurm_or_skip() -> None:
    """For tests: fail in CI (CI=true) when SLURM cannot run here, else skip with the reason."""
    import pytest

    reason = slurm_unavailable_reason()
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"SLURM is required in CI (CI=true) but unavailable: {reason}", pytrace=False)
    pytest.skip(f"needs a local SLURM: {reason}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_hardware() -> dict[str, int]:
    """CPUs/topology from ``slurmd -C``; memory from it too (fallback /proc)."""
    hw: dict[str, int] = {}
    try:
        out = subprocess.run([_which("slurmd") or "slurmd", "-C"], capture_output=True, text=True, timeout=20).stdout
        for key in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory"):
            m = re.search(rf"\b{key}=(\d+)", out)
            if m:
                hw[key] = int(m.group(1))
    except (OSError, subprocess.SubprocessError):
        pass
    if "CPUs" not in hw:
        hw = {"CPUs": os.cpu_count() or 1}
    if "RealMemory" not in hw:
        with open("/proc/meminfo") as fh:
            kb = int(re.search(r"MemTotal:\s+(\d+)", fh.read()).group(1))
        hw["RealMemory"] = kb // 1024
    return hw


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie still "exists"; treat it as dead
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _pid_is(pid: int, daemon: str) -> bool:
    """Guard against a recycled pid: is ``pid`` really the given daemon? (Debian's
    /usr/sbin/slurmctld is an alternatives link to slurmctld-wlm, so compare resolved
    paths, and fall back to argv[0].)"""
    want = _which(daemon)
    try:
        exe = os.readlink(f"/proc/{pid}/exe").replace(" (deleted)", "")
        if want and os.path.realpath(exe) == os.path.realpath(want):
            return True
    except OSError:
        pass
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return False
    return os.path.basename(argv0.split()[0] if argv0 else "") in (daemon, daemon + "-wlm")


def _tail(path: Path, n: int = 25) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"  ({path} missing)"
    return "\n".join("  " + line for line in lines[-n:])


@contextmanager
def host_lock(timeout: float = 300.0, tmpdir: str | Path | None = None) -> Iterator[None]:
    """Hold the host-wide start lock (an exclusive ``flock``; the kernel drops it if the
    holder dies, so a killed session never leaves it stuck). Polls rather than blocks so
    that a wedged holder turns into a clear error after ``timeout`` seconds."""
    path = Path(tmpdir or tempfile.gettempdir()) / HOST_LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SlurmStartError(f"{path} held by another process for {timeout:.0f} s") from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def reap_stale_clusters(tmpdir: str | Path | None = None) -> list[Path]:
    """Stop the daemons of test clusters whose owner died without stopping them (the
    session was SIGKILLed, OOM-killed, ...) and remove their directories; returns them.

    Only directories with an ``owner.lock`` are judged (clusters started in a fresh
    temporary directory); one whose lock can be taken has no live owner. Call with
    :func:`host_lock` held: a cluster takes its owner lock under that lock, so a cluster
    being set up is never mistaken for a stale one."""
    reaped = []
    for root in sorted(Path(tmpdir or tempfile.gettempdir()).glob(OUR_ROOT_PREFIX + "*")):
        try:
            fd = os.open(root / OWNER_LOCK, os.O_RDWR)
        except OSError:
            continue  # no owner lock: started by hand (``--dir``), not ours to stop
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its owner is alive
            stale = SlurmCluster(root=root)
            for daemon in DAEMONS:
                stale._kill(daemon)
            shutil.rmtree(root, ignore_errors=True)
            reaped.append(root)
        finally:
            os.close(fd)
    return reaped


class SlurmCluster:
    """Start/stop a one-node SLURM under ``root`` (a fresh temp dir by default)."""

    def __init__(
        self,
        root: str | Path | None = None,
        partition: str = DEFAULT_PARTITION,
        mem_fraction: float = 0.9,
        start_timeout: float = 60.0,
        keep: bool = False,
        cpu_factor: int = 1,
    ) -> None:
        self._own_root = root is None
        self.root = Path(root) if root is not None else None
        self.partition = partition
        self.mem_fraction = mem_fraction
        self.start_timeout = start_timeout
        self.keep = keep
        # cpu_factor > 1 advertises that many CPUs per real one (SlurmdParameters=
        # config_overrides), so that more short jobs, whose time is mostly interpreter
        # start-up and file I/O, run at once on a small test machine
        self.cpu_factor = max(1, int(cpu_factor))
        self.hostname = socket.gethostname().split(".")[0]
        self.hardware: dict[str, int] = {}
        self.start_seconds: float | None = None
        self._started = False
        self._owner_fd: int | None = None  # flock on <root>/owner.lock while we own the cluster
        self.lock_wait_seconds: float | None = None  # waited for another start to finish
        self.reaped: list[Path] = []  # stale clusters this start stopped

    # ------------------------------------------------------------------ paths
    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def munge_dir(self) -> Path:
        return self.root / "munge"

    @property
    def munge_socket(self) -> Path:
        return self.munge_dir / "munge.socket"

    def pidfile(self, daemon: str) -> Path:
        return (self.munge_dir if daemon == "munged" else self.root / "run") / f"{daemon}.pid"

    def logfile(self, daemon: str) -> Path:
        return (self.munge_dir if daemon == "munged" else self.root / "log") / f"{daemon}.log"

    @property
    def bin_dir(self) -> Path:
        """Holds the ``srun`` shim; first on :attr:`env`'s ``PATH``."""
        return self.root / "bin"

    @property
    def env(self) -> dict[str, str]:
        """os.environ plus what client commands (and Snakemake) need to reach us:
        ``SLURM_CONF``, and ``PATH`` with :attr:`bin_dir` first (for the nested srun of
        jobs, which runs without ``SLURM_CONF``; module docstring)."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        env["PATH"] = f"{self.bin_dir}:{env.get('PATH', '')}:/usr/sbin:/sbin"
        for var in [k for k in env if k.startswith("SLURM_") and k != "SLURM_CONF"]:
            del env[var]  # never inherit an outer job's context
        return env

    @property
    def cpus(self) -> int:
        return self.hardware.get("CPUs", 1) * self.cpu_factor

    @property
    def real_memory_mb(self) -> int:
        return int(self.hardware.get("RealMemory", 1024) * self.mem_fraction)

    # -------------------------------------------------------------- commands
    def run(self, *cmd: str, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess:
        return subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, timeout=timeout, check=check)

    def node_state(self) -> str:
        try:
            r = self.run("sinfo", "-h", "-N", "-o", "%T", check=False, timeout=10)
        except subprocess.TimeoutExpired:
            return "timeout"
        return r.stdout.strip() if r.returncode == 0 else f"error: {r.stderr.strip()}"

    # ---------------------------------------------------------------- start
    def _write_conf(self) -> None:
        hw = self.hardware
        ctld_port, slurmd_port = _free_port(), _free_port()
        topo = " ".join(
            f"{k}={hw[k]}" for k in ("Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore") if k in hw
        )
        overrides = ""
        if self.cpu_factor > 1:
            topo = f"Sockets=1 CoresPerSocket={self.cpus} ThreadsPerCore=1"
            overrides = "SlurmdParameters=config_overrides\n"
        r = self.root
        text = f"""# generated by tests/cluster/slurm_cluster.py
ClusterName=dprltest
SlurmctldHost={self.hostname}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmdTimeout=60
SlurmctldTimeout=60
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={self.pidfile('slurmctld')}
SlurmdPidFile={self.pidfile('slurmd')}
SlurmctldLogFile={self.logfile('slurmctld')}
SlurmdLogFile={self.logfile('slurmd')}
SlurmctldDebug=info
SlurmdDebug=info
{overrides}NodeName={self.hostname} NodeAddr=127.0.0.1 NodeHostname={self.hostname} CPUs={self.cpus} {topo} RealMemory={self.real_memory_mb} State=UNKNOWN
PartitionName={self.partition} Nodes={self.hostname} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""
        self.conf.write_text(text)

    def _write_srun_shim(self) -> None:
        """``<root>/bin/srun``: the real srun, pointed at this cluster's config even when
        the caller dropped ``SLURM_CONF`` (the Snakemake jobstep plugin does, for the
        srun it runs inside each job). A real site has its config at the default path;
        we may not write there without affecting every other cluster on the host."""
        real = _which("srun")
        if real is None or Path(real).resolve().parent == self.bin_dir.resolve():
            raise SlurmUnavailable("srun not found outside the test cluster's bin directory")
        shim = self.bin_dir / "srun"
        shim.write_text(
            "#!/bin/sh\n# generated by tests/cluster/slurm_cluster.py: this test cluster's config, whatever the caller's env\n"
            f"SLURM_CONF='{self.conf}'\nexport SLURM_CONF\nexec '{real}' \"$@\"\n"
        )
        shim.chmod(0o755)

    def _start_munged(self) -> None:
        munge = pwd.getpwnam("munge")
        d = self.munge_dir
        d.mkdir(mode=0o755)
        os.chown(d, munge.pw_uid, munge.pw_gid)
        os.chmod(d, 0o755)  # munged needs the socket dir world-executable
        key = d / "munge.key"
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(1024))
        os.chown(key, munge.pw_uid, munge.pw_gid)
        cmd = [
            _which("munged"),
            f"--key-file={key}",
            f"--socket={self.munge_socket}",
            f"--pid-file={self.pidfile('munged')}",
            f"--log-file={self.logfile('munged')}",
            f"--seed-file={d / 'munged.seed'}",
        ]
        # munged refuses to run as root with a key owned by munge: drop to the munge user
        r = subprocess.run(["runuser", "-u", "munge", "--", *cmd], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise SlurmStartError(f"munged failed: {r.stderr.strip()}\n{_tail(self.logfile('munged'))}")

    def _start_daemon(self, daemon: str) -> None:
        cmd = [_which(daemon), "-f", str(self.conf)]
        if daemon == "slurmd":
            cmd += ["-N", self.hostname]
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise SlurmStartError(f"{daemon} failed ({r.returncode}): {r.stderr.strip()}\n{_tail(self.logfile(daemon))}")

    def _wait_pidfile(self, daemon: str, deadline: float) -> int:
        path = self.pidfile(daemon)
        while time.monotonic() < deadline:
            try:
                pid = int(path.read_text().strip())
                if _pid_alive(pid):
                    return pid
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise SlurmStartError(f"{daemon} wrote no live pid to {path}\n{_tail(self.logfile(daemon))}")

    def _take_owner_lock(self) -> None:
        """Hold ``<root>/owner.lock`` for as long as this process owns the cluster, so
        that :func:`reap_stale_clusters` can tell a dead owner's cluster from a live one.
        The descriptor is not inherited by children (``os.open`` fds are close-on-exec),
        so a daemon or a Snakemake we started cannot keep the lock alive after us."""
        fd = os.open(self.root / OWNER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BaseException:
            os.close(fd)
            raise
        self._owner_fd = fd

    def _release_owner_lock(self) -> None:
        if self._owner_fd is not None:
            os.close(self._owner_fd)
            self._owner_fd = None

    def start(self) -> SlurmCluster:
        """Start munged, slurmctld and slurmd; return once the node is idle.

        Under :func:`host_lock`: stale clusters of dead owners are reaped, then ports are
        picked and held until both daemons listen on them (node idle), so two sessions
        starting at once never pick the same port."""
        reason = slurm_unavailable_reason()
        if reason:
            raise SlurmUnavailable(reason)
        t_wait = time.monotonic()
        # another session's start holds the lock for at most its own start_timeout
        with host_lock(timeout=3 * self.start_timeout + 30):
            t0 = time.monotonic()
            self.lock_wait_seconds = t0 - t_wait
            self.reaped = reap_stale_clusters()
            if self.root is None:
                self.root = Path(tempfile.mkdtemp(prefix=OUR_ROOT_PREFIX))
                self._take_owner_lock()  # before the host lock goes: never looks stale
            else:
                self.root.mkdir(parents=True, exist_ok=True)
            self._started = True  # from here on, stop() cleans up whatever came up
            deadline = t0 + self.start_timeout
            try:
                os.chmod(self.root, 0o755)  # munged checks every directory above its socket
                for sub in ("etc", "state", "spool", "run", "log", "bin"):
                    (self.root / sub).mkdir(exist_ok=True)
                self.hardware = _node_hardware()
                self._start_munged()
                self._wait_pidfile("munged", deadline)
                self._write_conf()
                self._write_srun_shim()
                self._start_daemon("slurmctld")
                self._wait_pidfile("slurmctld", deadline)
                self._start_daemon("slurmd")
                self._wait_pidfile("slurmd", deadline)
                state = ""
                while time.monotonic() < deadline:
                    state = self.node_state()
                    if state == "idle":
                        break
                    if state in ("down", "drained", "down*", "drain"):
                        # ReturnToService=2 should avoid this; nudge once anyway
                        self.run("scontrol", "update", f"NodeName={self.hostname}", "State=RESUME", check=False)
                    time.sleep(0.25)
                else:
                    raise SlurmStartError(
                        f"node not idle after {self.start_timeout:.0f}s (sinfo: {state!r})\n"
                        f"slurmctld log:\n{_tail(self.logfile('slurmctld'))}\nslurmd log:\n{_tail(self.logfile('slurmd'))}"
                    )
            except BaseException:
                self.stop()
                raise
        self.start_seconds = time.monotonic() - t0
        return self

    # ----------------------------------------------------------------- stop
    def cancel_all(self, timeout: float = 30.0) -> None:
        """Cancel every job of this cluster and wait until none is running."""
        self.run("scancel", "--partition", self.partition, check=False, timeout=15)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.run("squeue", "-h", "-o", "%i", "--states=PENDING,RUNNING,COMPLETING,SUSPENDED,CONFIGURING", check=False, timeout=10)
            if r.returncode != 0 or not r.stdout.strip():
                return
            time.sleep(0.25)

    def _kill(self, daemon: str, timeout: float = 15.0) -> None:
        try:
            pid = int(self.pidfile(daemon).read_text().strip())
        except (OSError, ValueError):
            return
        if not _pid_alive(pid) or not _pid_is(pid, daemon):
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _pid_alive(pid):
                return
            time.sleep(0.05)
        if _pid_is(pid, daemon):
            os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        if not self._started:
            return
        try:
            if self.conf.exists() and self.pidfile("slurmctld").exists():
                try:
                    self.cancel_all()
                except (OSError, subprocess.SubprocessError):
                    pass
        finally:
            for daemon in DAEMONS:  # slurmctld, slurmd, then munged (both need it to shut down cleanly)
                try:
                    self._kill(daemon)
                except OSError:
                    pass
            self._started = False
            if self._own_root and not self.keep and self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)
            # last: until the daemons are gone, a reaper must see the cluster as owned
            self._release_owner_lock()

    def __enter__(self) -> SlurmCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def describe(self) -> dict:
        return {
            "root": str(self.root),
            "slurm_conf": str(self.conf),
            "partition": self.partition,
            "hostname": self.hostname,
            "cpus": self.cpus,
            "real_memory_mb": self.real_memory_mb,
            "start_seconds": self.start_seconds,
            "lock_wait_seconds": self.lock_wait_seconds,
            "reaped": [str(r) for r in self.reaped],
        }


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--dir", required=True, help="cluster directory (created by start)")
    p.add_argument("--partition", default=DEFAULT_PARTITION)
    p.add_argument("--cpu-factor", type=int, default=1, help="advertise N CPUs per real CPU")
    a = p.parse_args(argv)
    cluster = SlurmCluster(root=a.dir, partition=a.partition, keep=True, cpu_factor=a.cpu_factor)
    if a.action == "start":
        cluster.start()
        print(json.dumps(cluster.describe()), file=sys.stderr)
        print(f"export SLURM_CONF={cluster.conf} PATH={cluster.bin_dir}:$PATH")
    elif a.action == "stop":
        cluster._started = True
        cluster.stop()
    else:
        print(cluster.node_state())
    return 0


if __name__ == "__main__":
    sys.exit(_main())
