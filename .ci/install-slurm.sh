#!/usr/bin/env bash
# Install a one-node SLURM (Debian packages slurm-wlm and munge) for the cluster tests.
# Non-interactive: CI runs this as root with no stdin. Idempotent: does nothing if the
# binaries are already there. The daemons are NOT started here: each test session starts
# its own private cluster under a temporary directory (tests/cluster/slurm_cluster.py),
# config included, so no system service, /etc/slurm/slurm.conf or /etc/munge/munge.key is
# needed or written.
set -euo pipefail

need=(munged slurmctld slurmd sbatch srun squeue sinfo scontrol scancel)
missing=0
for b in "${need[@]}"; do
  command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || missing=1
done
if [ "$missing" = 0 ]; then
  echo "install-slurm: slurm-wlm and munge already installed"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  SUDO="sudo -n"
else
  SUDO=""
fi
export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
$SUDO apt-get update -q </dev/null
# policy-rc.d: do not let the packages' maintainer scripts start system daemons
# (there is no init system in most CI containers, and the tests start their own).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
  slurm-wlm munge </dev/null
echo "install-slurm: installed in $(( $(date +%s) - start )) s: $(slurmd -V 2>/dev/null || /usr/sbin/slurmd -V)"
