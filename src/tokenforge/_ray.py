"""Ray, for the engines that run on a cluster (``pip install 'tokenforge[ray]'``)."""

from __future__ import annotations

import logging
from typing import Any

from .errors import MissingDependencyError


def ray_module(data: bool = False) -> Any:
    """``ray`` (with Ray Data when ``data``), or a clear error naming the extra to install."""
    try:
        import ray

        if data:
            import ray.data  # noqa: F401
    except ImportError:
        what = "Ray Data" if data else "Ray"
        raise MissingDependencyError(f"engine='ray' needs {what}: pip install 'tokenforge[ray]'") from None
    return ray


def init_ray(workers: int | None, address: str | None, data: bool = False) -> Any:
    """Connect to ``address``, or start a local cluster of ``workers`` CPUs (every core
    for None), unless the caller already called ``ray.init`` with their own settings.
    Returns ``ray``."""
    ray = ray_module(data)
    if not ray.is_initialized():
        # Ray's notices about its own set-up (token authentication, say) are not the user's
        # concern here; its errors still show
        quiet = dict(ignore_reinit_error=True, log_to_driver=False, logging_level=logging.ERROR)
        if address:
            ray.init(address=address, **quiet)
        else:
            # "local": a new cluster of our own, not one that ``ray start`` left running here
            ray.init(address="local", num_cpus=workers, include_dashboard=False, **quiet)
    return ray
