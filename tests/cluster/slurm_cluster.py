"""A real one-node SLURM cluster for tests (Debian ``slurm-wlm`` + ``munge``).

See ``../shared/specs/cluster.md``. Everything lives under one temporary directory:
munge key/socket/pid/log, ``slurm.conf``, state, spool, pid and log files; the
slurm.conf points the munge plugins at our private munged socket (``AuthInfo``), so the
system munged and /etc/munge are not used. Client commands find the cluster through
``SLURM_CONF`` (see :attr:`SlurmCluster.env`); the one thing outside the temp dir is a
symlink /etc/slurm/slurm.conf -> our slurm.conf while the cluster runs, because the
Snakemake SLURM jobstep plugin strips SLURM_CONF from the nested ``srun`` in each job
(created only if the path is free or a stale link of ours, removed on stop).

Usage::

    with SlurmCluster() as cluster:          # starts munged, slurmctld, slurmd
        subprocess.run(["sinfo"], env=cluster.env)
    # daemons stopped (by the pids they wrote), temporary directory removed

or from a shell (e.g. to benchmark by hand)::

    python tests/cluster/slurm_cluster.py start --dir /tmp/slurm   # prints `export SLURM_CONF=...`
    python tests/cluster/slurm_cluster.py stop --dir /tmp/slurm

Requirements: root (slurmd must run as root, munged as the ``munge`` user), the Debian
packages ``slurm-wlm`` and ``munge`` (``.ci/install-slurm.sh``). Loopback only: the node
and controller addresses are 127.0.0.1 and the ports are picked free at start, so the
host name need not resolve and a second cluster (or a stale one) does not collide.
Design choices that matter on containers: ``ProctrackType=proctrack/linuxproc`` and
``TaskPlugin=task/none`` (no cgroup plugins), ``JobAcctGatherType=jobacct_gather/none``,
no accounting database (``AccountingStorageType=accounting_storage/none``); without it
``sacct`` does not work, so job status must be queried with ``squeue``
(``--slurm-status-command squeue``), which is reliable as long as finished jobs stay
visible for ``MinJobAge`` seconds (set to 600 here).
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd", "munged")
REQUIRED_BINARIES = ("munged", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue", "scontrol", "scancel")
DEFAULT_PARTITION = "dprltest"
# snakemake-executor-plugin-slurm-jobstep strips every SLURM_* variable (SLURM_CONF
# included) from the environment of the `srun` it runs inside each job, so that srun
# only finds the cluster through the default config path. We therefore point
# /etc/slurm/slurm.conf at our slurm.conf with a symlink while the cluster runs (and
# only if the path is free or is a stale link of ours).
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
OUR_ROOT_PREFIX = "dprl-slurm-"


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
    def env(self) -> dict[str, str]:
        """os.environ plus what client commands (and Snakemake) need to reach us."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        env["PATH"] = env.get("PATH", "") + ":/usr/sbin:/sbin"
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

    def _link_system_conf(self) -> None:
        link = SYSTEM_CONF
        if link.is_symlink():
            target = Path(os.readlink(link))
            ours = target.name == "slurm.conf" and target.parent.name == "etc" and (
                target.parent.parent.name.startswith(OUR_ROOT_PREFIX) or (target.parent.parent / ".dprl-slurm").exists()
            )
            if not ours:
                raise SlurmUnavailable(f"{link} is a symlink to {target}, not a test cluster's config; not touching it")
            live = target.exists() and self._conf_daemons_alive(target.parent.parent)
            if live and target != self.conf:
                raise SlurmUnavailable(f"another test cluster is running ({target}); stop it first")
            link.unlink()
        elif link.exists():
            raise SlurmUnavailable(
                f"{link} exists (a real SLURM installation?). The test cluster needs that path: jobs' nested "
                "srun (snakemake-executor-plugin-slurm-jobstep) drops SLURM_CONF and reads the default config."
            )
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(self.conf)

    def _unlink_system_conf(self) -> None:
        try:
            if SYSTEM_CONF.is_symlink() and Path(os.readlink(SYSTEM_CONF)) == self.conf:
                SYSTEM_CONF.unlink()
        except OSError:
            pass

    @staticmethod
    def _conf_daemons_alive(root: Path) -> bool:
        for daemon in ("slurmctld", "slurmd"):
            try:
                pid = int((root / "run" / f"{daemon}.pid").read_text().strip())
            except (OSError, ValueError):
                continue
            if _pid_alive(pid) and _pid_is(pid, daemon):
                return True
        return False

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

    def start(self) -> SlurmCluster:
        reason = slurm_unavailable_reason()
        if reason:
            raise SlurmUnavailable(reason)
        t0 = time.monotonic()
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="dprl-slurm-"))
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)  # munged checks every directory above its socket
        for sub in ("etc", "state", "spool", "run", "log"):
            (self.root / sub).mkdir(exist_ok=True)
        (self.root / ".dprl-slurm").touch()  # marks the directory as a test cluster's
        self.hardware = _node_hardware()
        self._started = True  # from here on, stop() cleans up whatever came up
        deadline = t0 + self.start_timeout
        try:
            self._start_munged()
            self._wait_pidfile("munged", deadline)
            self._write_conf()
            self._link_system_conf()
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
            self._unlink_system_conf()
            self._started = False
            if self._own_root and not self.keep and self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)

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
        print(f"export SLURM_CONF={cluster.conf}")
    elif a.action == "stop":
        cluster._started = True
        cluster.stop()
    else:
        print(cluster.node_state())
    return 0


if __name__ == "__main__":
    sys.exit(_main())
