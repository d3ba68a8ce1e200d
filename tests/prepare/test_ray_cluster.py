"""The Ray engine on a multi-node cluster: Ray's own test cluster
(``ray.cluster_utils.Cluster``), a head node without CPUs and two worker nodes of one
CPU each, all on this machine. The output is byte-identical to the local engine's;
a worker node removed mid-job (its actor and the chunks it held are lost) still
gives the whole output; a driver killed mid-job resumes from its checkpoints, and a
resumed run encodes only what was not written before.

The cluster is started once for this module (about 10 s); this file stays on its own
so that xdist's ``loadfile`` keeps it in one process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import tokenforge

from _corpus import DOCS, write_jsonl

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

NODE_MEMORY = 100 << 20  # object store of each node
TOKENIZER = "cl100k_base"
OPTS = dict(shard_size="16KB", val_fraction=0.1, show_progress=False)


def _worker_node(cluster):
    return cluster.add_node(num_cpus=1, object_store_memory=NODE_MEMORY)


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():
        ray.shutdown()  # another module's local cluster
    c = cluster_utils.Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=0, object_store_memory=NODE_MEMORY, include_dashboard=False))
    try:
        for _ in range(2):
            _worker_node(c)
        c.wait_for_nodes()
        ray.init(address=c.address, log_to_driver=False, logging_level="ERROR")
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Four JSON Lines files (~2 MB) of the documents that break tokenizers, and the
    local engine's output for them."""
    d = tmp_path_factory.mktemp("ray_cluster")
    inputs = [write_jsonl(d / f"part-{k}.jsonl", [f"part {k} copy {i}: {doc}" for i in range(100) for doc in DOCS])
              for k in range(4)]
    tokenforge.prepare(inputs, TOKENIZER, d / "local", workers=2, **OPTS)
    return inputs, _files(d / "local")


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and p.name != ".lock"}


def _shards_written(out: Path) -> int:
    return len(list(out.glob("train-*.bin")))


def test_three_nodes_write_the_same_bytes_as_the_local_engine(cluster, corpus, tmp_path, monkeypatch):
    from tokenforge.prepare import ray_engine

    monkeypatch.setattr(ray_engine, "UNIT_BYTES", 256 << 10)  # several byte ranges per file, on both workers
    inputs, local = corpus
    index = tokenforge.prepare(inputs, TOKENIZER, tmp_path / "ray", engine="ray", workers=2, **OPTS)
    assert _files(tmp_path / "ray") == local
    assert index["splits"]["train"]["tokens"] > 0
    # the actors ran on the two worker nodes (the head has no CPU)
    alive = [n for n in ray.nodes() if n["Alive"]]
    assert len(alive) == 3
    assert sum(n["Resources"].get("CPU", 0) for n in alive) == 2


def test_the_actor_pool_restarts_actors_and_retries_units():
    # what keeps a job alive when a node goes: Ray Data's defaults for the actors of a pool,
    # which the Ray engine relies on (passing them itself is deprecated in Ray Data)
    from ray.data._internal.execution.operators.actor_pool_map_operator import ActorPoolMapOperator

    args = ActorPoolMapOperator._apply_default_remote_args({"num_cpus": 1}, ray.data.DataContext.get_current())
    assert (args["max_restarts"], args["max_task_retries"]) == (-1, -1)


def test_a_node_removed_mid_job_still_gives_the_whole_output(cluster, corpus, tmp_path, monkeypatch):
    from tokenforge.prepare import ray_engine

    monkeypatch.setattr(ray_engine, "UNIT_BYTES", 64 << 10)  # many units: work left when the node goes
    inputs, local = corpus
    out = tmp_path / "ray"
    victim = sorted(cluster.worker_nodes, key=lambda n: n.unique_id)[0]  # each worker node holds one actor
    removed_at: list[int] = []
    done = threading.Event()

    def remove_when_started() -> None:
        while not done.is_set():
            n = _shards_written(out)
            if n >= 2:
                cluster.remove_node(victim)  # its raylet and workers die: the actor and its objects are lost
                removed_at.append(n)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=remove_when_started, daemon=True)
    killer.start()
    try:
        tokenforge.prepare(inputs, TOKENIZER, out, engine="ray", workers=2, **OPTS)
    finally:
        done.set()
        killer.join(60)
        if victim not in cluster.worker_nodes:
            _worker_node(cluster)  # back to two workers for the next test
            cluster.wait_for_nodes()
    assert removed_at, "the job ended before a node could be removed"
    total = sum(1 for name in local if name.startswith("train-"))
    assert removed_at[0] < total  # the node went while shards were still to come
    assert _files(out) == local


def _cli(inputs: list[Path], out: Path, address: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tokenforge.cli", "prepare", *map(str, inputs), "-t", TOKENIZER, "-o", str(out),
            "--engine", "ray", "--ray-address", address, "--workers", "2", "--shard-size", OPTS["shard_size"],
            "--val-fraction", str(OPTS["val_fraction"]), "--quiet", *extra]


def test_a_driver_killed_mid_job_resumes_to_the_same_bytes(cluster, corpus, tmp_path):
    inputs, local = corpus
    out = tmp_path / "ray"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    driver = subprocess.Popen(_cli(inputs, out, cluster.address), env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _shards_written(out) < 3 and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        driver.send_signal(signal.SIGKILL)
    finally:
        if driver.poll() is None:
            driver.kill()
        _, err = driver.communicate(timeout=60)
    assert driver.returncode == -signal.SIGKILL, err.decode(errors="replace")[-2000:]
    kept = _shards_written(out)
    assert kept >= 3 and not (out / "index.json").exists()  # killed mid-job, with shards to resume from
    assert (out / ".partial" / "journal.json").is_file()

    again = subprocess.run(_cli(inputs, out, cluster.address, "--resume"), env=env, capture_output=True, timeout=300)
    assert again.returncode == 0, again.stderr.decode(errors="replace")[-2000:]
    assert _files(out) == local
    assert not (out / ".partial").exists()


@pytest.mark.parametrize("stop_after", [3, 40, 10_000])
def test_a_resumed_run_encodes_only_what_is_left(cluster, corpus, tmp_path, monkeypatch, stop_after):
    """The units before the checkpoint are counted, not encoded; the one it falls in
    starts encoding at the checkpoint (``stop_after`` 10,000: every shard was written
    but not the index, nothing is left to encode)."""
    from tokenforge.prepare import job as _job
    from tokenforge.prepare import ray_engine
    from tokenforge.prepare import sources as _sources

    monkeypatch.setattr(ray_engine, "UNIT_BYTES", 64 << 10)
    monkeypatch.setattr(_sources, "CHUNK_CHARS", 16 << 10)  # several chunks per unit
    inputs, local = corpus
    out = tmp_path / "ray"
    real, calls = _job.assemble, []

    def interrupted(*a, **k):
        calls.append(1)
        if len(calls) > stop_after:
            raise KeyboardInterrupt
        return real(*a, **k)

    real_write = _job.write_json_atomic

    def no_index(path, obj):
        if Path(path).name == "index.json":
            raise KeyboardInterrupt
        return real_write(path, obj)

    monkeypatch.setattr(_job, "assemble", interrupted)
    monkeypatch.setattr(_job, "write_json_atomic", no_index)  # with stop_after 10,000: every shard, no index
    with pytest.raises(KeyboardInterrupt):
        tokenforge.prepare(inputs, TOKENIZER, out, engine="ray", workers=2, **OPTS)
    assert (out / ".partial" / "journal.json").is_file() and not (out / "index.json").exists()
    monkeypatch.setattr(_job, "assemble", real)
    monkeypatch.setattr(_job, "write_json_atomic", real_write)

    starts: list[int] = []
    real_rows = ray_engine._rows

    def rows(ds, item, skip_before, want_bytes):
        starts.append(item)
        return real_rows(ds, item, skip_before, want_bytes)

    monkeypatch.setattr(ray_engine, "_rows", rows)
    tokenforge.prepare(inputs, TOKENIZER, out, engine="ray", workers=2, resume=True, **OPTS)
    assert _files(out) == local
    if stop_after >= 40:
        # the units written before were left out: encoding started after the first unit
        # (a run resumes from the last checkpoint of the split that is behind, here the
        # validation split: it fills its shards ten times slower than the train split)
        assert starts == [] or starts[0] > 0
