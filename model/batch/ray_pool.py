"""Pool sizing of the Ray engine (:mod:`model.batch.ray_engine`): how many scoring actors, and what each asks for.

Pure arithmetic on ``ray.cluster_resources()``; imports no Ray. Measured with Ray 2.60 on a 2-CPU local instance,
2 actors x 1 CPU starved Ray Data's other tasks and hung, while 2 actors x 0.5 CPU ran; so one CPU of the cluster is
kept free for Ray Data and the driver (:data:`RESERVED_CPUS`), the rest is shared among the actors, and each actor
runs ``max(1, floor(cpu share))`` torch threads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

RESERVED_CPUS = 1.0  # kept free for Ray Data's own tasks and the driver (see the module docstring)


@dataclass(frozen=True)
class PoolPlan:
    """How many scoring actors to start and what each one asks Ray for.

    Attributes:
        num_workers: actors in the pool (>= 1).
        cpus_per_worker: Ray ``num_cpus`` of one actor (fractional, > 0).
        gpus_per_worker: Ray ``num_gpus`` of one actor (0 on CPU).
        torch_threads: ``torch.set_num_threads`` inside one actor (>= 1).
    """

    num_workers: int
    cpus_per_worker: float
    gpus_per_worker: float
    torch_threads: int


def plan_pool(resources: dict[str, float], num_workers: int | None = None, gpus_per_worker: float = 0.0,
              max_node_cpus: float | None = None) -> PoolPlan:
    """Size the actor pool from the cluster's resources (``ray.cluster_resources()``).

    Rules: ``RESERVED_CPUS`` CPU stays free for Ray Data and the driver (half
    the CPUs on a cluster of fewer than 2); the default pool is one actor per
    GPU share when ``gpus_per_worker`` > 0, else one actor per CPU on up to 3
    CPUs and ``CPUs - 1`` above; the remaining CPUs are split evenly among
    the actors (rounded down to 0.01 CPU, at most 1 CPU per GPU actor, at
    most ``max_node_cpus`` so that an actor fits on one node).

    Args:
        resources: at least ``"CPU"`` (count); ``"GPU"`` when present.
        num_workers: the pool size; None chooses it as above.
        gpus_per_worker: GPUs per actor (fractions share a GPU); 0 for CPU scoring.
        max_node_cpus: CPUs of the largest node (None: no cap).

    Returns:
        The :class:`PoolPlan`. E.g. 2 CPUs -> 2 actors x 0.5 CPU x 1 thread;
        16 CPUs -> 15 actors x 1 CPU.

    Raises:
        ValueError: ``num_workers`` < 1, ``gpus_per_worker`` < 0, or more GPUs
        requested than the cluster has.
    """
    cpus = float(resources.get("CPU", 0.0)) or 1.0
    gpus = float(resources.get("GPU", 0.0))
    if num_workers is not None and num_workers < 1:
        raise ValueError(f"num_workers must be >= 1, got {num_workers}")
    if gpus_per_worker < 0:
        raise ValueError(f"gpus_per_worker must be >= 0, got {gpus_per_worker}")
    if gpus_per_worker > 0:
        n = num_workers or max(1, int(gpus // gpus_per_worker))
        if n * gpus_per_worker > gpus + 1e-9:
            raise ValueError(f"{n} worker(s) x {gpus_per_worker:g} GPU need {n * gpus_per_worker:g} GPUs; "
                             f"the cluster has {gpus:g}")
    else:
        n = num_workers or (max(1, int(cpus)) if cpus < 4 else int(cpus - RESERVED_CPUS))
    free = cpus - RESERVED_CPUS if cpus >= 2 else cpus / 2
    share = math.floor(100 * free / n) / 100
    if gpus_per_worker > 0:
        share = min(share, 1.0)
    if max_node_cpus:
        share = min(share, float(max_node_cpus))
    share = max(share, 0.01)
    return PoolPlan(n, share, float(gpus_per_worker), max(1, int(share)))


__all__ = ["RESERVED_CPUS", "PoolPlan", "plan_pool"]
