"""The Ray engine: the same job on a Ray cluster (``pip install tokenforge[ray]``).

The inputs become a Ray Dataset of *units* (byte ranges of JSON Lines and
delimited text files cut at line or delimiter boundaries, Parquet row groups,
whole files otherwise). ``map_batches`` on an actor pool reads each unit
with the same reader code the local engine uses and encodes its chunks, one
tokenizer per actor (built once per worker, not once per batch); reading
where the encoding happens keeps the text out of the object store. The driver iterates the results in input
order (``preserve_order``) and writes the shards and index exactly as the
local engine does, so the output is byte-identical to it.

On a cluster of several machines the actors open the input files by the paths
the driver was given, so the inputs must be at the same path on every node (a
shared filesystem); only the driver writes the output. A node lost mid-job is
survived: Ray Data restarts its actors elsewhere (``max_restarts``) and runs
again the units they had not finished (``max_task_retries``), and the driver still
writes the chunks in input order, so the output does not depend on which node
encoded what. A driver lost mid-job leaves its complete shards and checkpoints:
``resume`` continues from them.

Only file inputs go through Ray: standard input and Python iterables live in
the driver process and are prepared with the local engine.
"""

from __future__ import annotations

import logging
import pickle
from typing import Any, Iterator

from .._lazy import np
from .._ray import init_ray
from ..errors import InvalidArgumentError, PrepareError
from .encoder import Encoded, encodable, encode_texts
from .sources import ReadOptions, Source, Unit, plan_units, read_unit

#: Target size of one unit (a byte range of a file) on Ray.
UNIT_BYTES = 32 << 20
#: Ray Data's block size for the encoded results: below one chunk's payload, so that
#: every chunk is its own block and streams to the driver when it is ready.
BLOCK_BYTES = 1 << 20


class _UnitEncoder:
    """One actor of the pool: holds one tokenizer; reads each unit it is given with
    the local engine's reader and yields its chunks encoded, in order. A unit's first
    ``skip`` items (written before an interrupted run stopped) are read, not encoded.
    ``count``: only the number of items and input bytes of each unit (where a resumed
    run starts again)."""

    def __init__(self, tok_ref: list[Any], sources: list[Source], opts: ReadOptions, want_bytes: bool,
                 count: bool = False) -> None:
        import ray

        self.tok = pickle.loads(ray.get(tok_ref[0]))
        self.cutter = self.tok.stream_cutter()
        self.sources = sources
        self.opts = opts
        self.want_bytes = want_bytes
        self.count = count

    def __call__(self, batch: dict[str, np.ndarray]) -> Iterator[dict[str, np.ndarray]]:
        for u, (src, start, end) in enumerate(zip(batch["source"], batch["start"], batch["end"])):
            unit = Unit(int(src), int(start), None if int(end) < 0 else int(end))
            index = np.array([int(batch["index"][u])], dtype=np.int64)
            chunks = encodable(read_unit(self.sources, unit, self.opts), self.cutter)
            if self.count:
                items = nbytes = 0
                for chunk in chunks:
                    items += len(chunk.flags)
                    nbytes += chunk.nbytes
                yield {"unit": index, "items": np.array([items], np.int64), "nbytes": np.array([nbytes], np.int64)}
                continue
            skip = int(batch["skip"][u])
            seen = 0
            for seq, chunk in enumerate(chunks):
                seen += len(chunk.flags)
                if chunk.texts and seen > skip:
                    ids, lengths, text_bytes = encode_texts(self.tok, chunk.texts, 1, self.want_bytes)
                else:  # nothing to encode, or written before: the driver only counts its items
                    ids, lengths = np.zeros(0, np.uint32), np.zeros(len(chunk.flags), np.int64)
                    text_bytes = np.zeros(len(chunk.flags), np.int64) if self.want_bytes else None
                # the small fields pickled; the ids (most of the bytes) as a tensor column,
                # which Ray moves through its object store without pickling them
                meta = (chunk.source, bytes(chunk.flags), bytes(chunk.val), chunk.nbytes, chunk.empty,
                        lengths, text_bytes)
                yield {
                    "unit": index,
                    "seq": np.array([seq], dtype=np.int64),
                    "meta": np.array([pickle.dumps(meta, protocol=5)], dtype=object),
                    "ids": np.ascontiguousarray(ids, dtype=np.uint32)[None, :],
                }


def ray_batches(tok: Any, workers: int | None, sources: list[Source], opts: ReadOptions, skip_before: int,
                want_bytes: bool, address: str | None) -> Iterator[Encoded]:
    """Encoded chunks in input order, computed on Ray by ``workers`` actors (None: one
    per CPU of the cluster). A local cluster of ``workers`` CPUs (every core for None)
    is started when none is running and no ``address`` is given."""
    if any(not s.is_file for s in sources):
        raise InvalidArgumentError(
            "the ray engine reads files; standard input and Python iterables are prepared with engine='local'"
        )
    ray = init_ray(workers, address, data=True)
    # A private copy of the caller's Ray Data settings (their own datasets are unchanged):
    # results in input order, no Ray progress bars (tokenforge shows its own), and blocks
    # of about one encoded chunk, so each chunk reaches the writer as soon as it is encoded
    # instead of when its whole unit is done.
    ctx = ray.data.DataContext.get_current().copy()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    if hasattr(ctx, "print_on_execution_start"):
        ctx.print_on_execution_start = False
    ctx.target_max_block_size = BLOCK_BYTES
    units = plan_units(sources, opts, UNIT_BYTES)
    rows = [{"index": k, "source": u.source, "start": u.start, "end": -1 if u.end is None else u.end, "skip": 0}
            for k, u in enumerate(units)]
    cpus = int(ray.cluster_resources().get("CPU", workers or 1))
    size = max(1, cpus if workers is None else min(workers, cpus))
    # The tokenizer goes to the object store on its own, as Ray Data advises for large
    # objects (the UDF it serializes stays small): its reference inside a list, which Ray
    # passes as is; each actor (a restarted one too: the driver holds the reference for
    # the whole run) fetches it once.
    tok_ref = ray.put(pickle.dumps(tok, protocol=5))

    def pool(rows: list[dict[str, int]], count: bool) -> Any:
        with ray.data.DataContext.current(ctx):  # datasets keep the context they were made in
            ds = ray.data.from_items(rows, override_num_blocks=max(len(rows), 1))
            # no more actors than units; fault tolerance: Ray Data creates the pool's actors
            # with max_restarts=-1 and max_task_retries=-1 (an actor lost with its node is
            # started again, as often as it takes, and the unit it was encoding runs again).
            # Passing them here is deprecated (``ray_remote_args``, to go in Ray 2.64);
            # tests/prepare/test_ray_cluster.py removes a node mid-job to check it.
            return ds.map_batches(_UnitEncoder, fn_constructor_args=([tok_ref], sources, opts, want_bytes, count),
                                  batch_size=1, compute=ray.data.ActorPoolStrategy(size=max(1, min(size, len(rows)))),
                                  num_cpus=1)

    # Ray Data's own notices (progress bars off, "execution finished") are not the user's
    # concern: tokenforge reports the run. Its error logs are quiet too: a failure reaches
    # the caller as the exception this raises (an input error as the same error as locally),
    # not as Ray's tracebacks printed before it.
    data_log = logging.getLogger("ray.data")
    level = data_log.level
    data_log.setLevel(max(logging.CRITICAL, level))
    try:
        first_item = 0
        if skip_before:
            # a resumed run: the units written before are counted (read, not encoded) and
            # left out; the one the checkpoint falls in skips its items written before
            done: list[Encoded] = []
            counted = iter(pool(rows, True).iter_rows())
            try:
                for row in counted:
                    end = first_item + int(row["items"])
                    if end > skip_before:
                        k = int(row["unit"])
                        rows = rows[k:]
                        rows[0] = {**rows[0], "skip": skip_before - first_item}
                        break
                    done.append(_placeholder(end, int(row["nbytes"]), want_bytes))
                    first_item = end
                else:
                    rows = []
            finally:
                close = getattr(counted, "close", None)
                if close is not None:
                    close()  # the counting actors go: their CPUs are for the encoding ones
            yield from done
        if rows:
            yield from _rows(pool(rows, False), first_item, skip_before, want_bytes)
    except Exception as exc:
        cause = _tokenforge_cause(exc)
        if cause is not None:  # an input error raised inside an actor: the same error as locally
            raise cause from None
        raise
    finally:
        data_log.setLevel(level)
        del tok_ref


def _tokenforge_cause(exc: BaseException) -> BaseException | None:
    """The TokenforgeError a Ray exception wraps (Ray keeps it as ``cause``), if any."""
    from ..errors import TokenforgeError

    seen = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, TokenforgeError) and type(e).__module__.startswith("tokenforge"):
            _drop_retry_note(e)
            return e
        todo.extend([getattr(e, "cause", None), e.__cause__, e.__context__])
    return None


def _drop_retry_note(exc: BaseException) -> None:
    """Take out of ``exc``'s message the paragraph Ray Data appends to a failed task's
    exception ("Failed to apply UDF transform after 1/1 attempts ... retried_map_errors"):
    about Ray's retry settings, not about the input."""
    if exc.args and isinstance(exc.args[0], str):
        msg = exc.args[0]
        k = msg.find("\nFailed to ")
        if k >= 0 and "attempts (total backoff" in msg[k:]:
            exc.args = (msg[:k], *exc.args[1:])


def _placeholder(item: int, nbytes: int, want_bytes: bool) -> Encoded:
    """Input written before an interrupted run stopped, up to ``item``: no items, only its bytes."""
    return Encoded(item, np.zeros(0, np.int32), np.zeros(0, np.uint8), np.zeros(0, bool), np.zeros(0, np.int64),
                   np.zeros(0, np.uint32), np.zeros(0, np.int64) if want_bytes else None, nbytes, {})


def _rows(ds: Any, item: int, skip_before: int, want_bytes: bool) -> Iterator[Encoded]:
    """The chunks of ``ds`` (its first item is ``item``) as batches; those before
    ``skip_before`` as placeholders."""
    last = (-1, -1)
    for row in ds.iter_rows():
        key = (int(row["unit"]), int(row["seq"]))
        if key <= last:
            raise PrepareError(f"Ray returned chunk {key} after {last}: input order was not preserved")
        last = key
        source, flags, val, nbytes, empty, lengths, text_bytes = pickle.loads(row["meta"])
        ids = np.asarray(row["ids"], dtype=np.uint32).reshape(-1)
        n = len(flags)
        first_item = item
        item += n
        if item <= skip_before and skip_before:
            yield _placeholder(item, nbytes, want_bytes)
            continue
        if first_item < skip_before:
            raise PrepareError("cannot resume: the checkpoint does not fall between two chunks of the input")
        yield Encoded(
            first_item=first_item,
            source=np.full(n, source, dtype=np.int32),
            flags=np.frombuffer(flags, dtype=np.uint8),
            val=np.frombuffer(val, dtype=np.uint8).astype(bool),
            lengths=lengths,
            ids=ids,
            text_bytes=text_bytes,
            nbytes=nbytes,
            empty={source: empty} if empty else {},
        )
