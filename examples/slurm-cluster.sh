#!/usr/bin/env bash
# Cluster a collection across the nodes of a Slurm allocation with
# `shingle cluster --mpi` (docs/scale-out.md). Submit it with sbatch:
#
#   sbatch --nodes=16 examples/slurm-cluster.sh /shared/crawl/ /shared/out/crawl-clusters
#
# INPUT is anything `shingle cluster` reads (directories, lists of paths,
# JSON Lines, WARC) on a file system every node sees; OUT is written by rank
# 0 only. Each rank keeps its share's sketches and sort runs in node-local
# scratch (--temp-dir), and sorts within --memory.
#
# Outside Slurm (no SLURM_JOB_ID) it runs the same command on this machine
# under mpirun with RANKS ranks (default 2), which is how the specs run it.
#
#SBATCH --job-name=shingle-cluster
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1     # one rank per node: its sketching threads use the node's cores
#SBATCH --cpus-per-task=16
#SBATCH --mem=48G               # --memory below is the sorters' budget; leave room for the pool and the OS
#SBATCH --time=02:00:00
#SBATCH --output=shingle-cluster-%j.log
set -euo pipefail

INPUT=${1:?usage: examples/slurm-cluster.sh INPUT OUT [shingle cluster options...]}
OUT=${2:?usage: examples/slurm-cluster.sh INPUT OUT [shingle cluster options...]}
shift 2

# `shingle` from the PATH (an installed rock, or `source scripts/env.sh` in a checkout)
SHINGLE=${SHINGLE:-$(command -v shingle || echo "$(cd "$(dirname "$0")/.." && pwd)/bin/shingle")}

if [ -n "${SLURM_JOB_ID:-}" ]; then
  # node-local scratch: Slurm's per-job directory where the site provides one
  SCRATCH=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}
  # srun starts one rank per task through PMIx (Debian's Open MPI is built with it);
  # `mpirun "$SHINGLE" ...` inside the allocation works as well. --kill-on-bad-exit:
  # a task that dies ends the step, so no rank waits for it in a collective call
  exec srun --mpi=pmix --kill-on-bad-exit=1 "$SHINGLE" cluster "$INPUT" -o "$OUT" --mpi \
    --threads "${SLURM_CPUS_PER_TASK:-1}" --memory 32G --temp-dir "$SCRATCH" "$@"
fi

# a local run: RANKS ranks on this machine, as root if need be
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec mpirun --oversubscribe -np "${RANKS:-2}" "$SHINGLE" cluster "$INPUT" -o "$OUT" --mpi "$@"
