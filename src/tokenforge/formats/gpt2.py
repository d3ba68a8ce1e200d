"""GPT-2 ``vocab.json`` + ``merges.txt`` (Radford et al., 2019; OpenAI's GPT-2 ``encoder.py``).

Both files spell token bytes in GPT-2's printable byte alphabet
(:mod:`tokenforge.bytelevel`). ``merges.txt`` may start with a
``#version: ...`` line; every other non-empty line is ``left right``.
Special tokens (by default ``<|endoftext|>`` when present) are taken out of
the mergeable vocabulary and registered as specials with their ids.

The ids are HF tokenizers' (``models.BPE.from_file``), which apply the merges
in file order. When the merges are the ones the token ids imply (merge ``k``
makes a token whose id grows with ``k``, every token longer than one byte that
merging by id could reach is made by a merge, all 256 bytes are tokens, and
merging by id reproduces every merge: true of every file OpenAI, HF and
tokenforge write), the model is a rank :class:`~tokenforge.models.bpe.BPE`, as
fast as tiktoken. Any other pair of files (a merge deleted or moved, an empty
``merges.txt``) gives a :class:`~tokenforge.models.bpe.PieceBPE` that merges by
the list, as HF does: merging by id there would give other ids.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from pathlib import Path

from .. import bytelevel
from .._io import atomic_write_files, parse_json, read_text
from ..errors import FileFormatError, SpecialTokenError
from ..models.bpe import BPE, PieceBPE


def read_vocab_json(path: str | os.PathLike) -> dict[str, int]:
    text = read_text(path)
    vocab = parse_json(text, path, standard=True)  # as HF reads it
    if not isinstance(vocab, dict):
        raise FileFormatError(f"expected a JSON object of token -> id, found {type(vocab).__name__}", path=path)
    seen: dict[int, str] = {}
    for tok, i in vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise FileFormatError(f"token {tok!r} has id {i!r}; ids must be non-negative integers", path=path)
        if i in seen:
            raise FileFormatError(f"id {i} is given to both {seen[i]!r} and {tok!r}", path=path)
        seen[i] = tok
    return vocab


def read_merges_txt(path: str | os.PathLike) -> list[tuple[int, str, str]]:
    """``[(line_number, left, right), ...]`` in file order."""
    merges = []
    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        if lineno == 1 and line.startswith("#version"):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise FileFormatError(f"expected two tokens separated by one space, found {line!r}", path=path, line=lineno)
        merges.append((lineno, parts[0], parts[1]))
    return merges


def load_gpt2_model(
    vocab_path: str | os.PathLike,
    merges_path: str | os.PathLike,
    special_tokens: Collection[str] | Mapping[str, int] | None = None,
    pattern: str = "gpt2",
) -> tuple[BPE | PieceBPE, dict[str, int]]:
    """Read the two files; return the model and the special tokens ``{str: id}``.

    The model is a rank :class:`BPE` when merging by id gives the ids of merging by the
    list, else a :class:`PieceBPE` over the printable strings (see the module docstring),
    which needs :func:`byte_level_stages` as its pre-tokenizer and decoder. ``pattern`` is
    the split pattern the tokenizer will use (a name or a regex)."""
    vocab = read_vocab_json(vocab_path)
    if special_tokens is None:
        special_names = [t for t in ("<|endoftext|>",) if t in vocab]
        specials = {t: vocab[t] for t in special_names}
    elif isinstance(special_tokens, Mapping):
        specials = dict(special_tokens)
    else:
        specials = {}
        for t in special_tokens:
            if t in specials:
                raise SpecialTokenError(f"special token {t!r} is listed twice")
            if t not in vocab:
                raise SpecialTokenError(f"special token {t!r} is not in {vocab_path}")
            specials[t] = vocab[t]
    model_vocab: dict[int, bytes] = {}
    for tok, i in vocab.items():
        if tok in specials:
            if specials[tok] != i:
                raise SpecialTokenError(f"special token {tok!r} has id {i} in {vocab_path}, not {specials[tok]}")
            continue
        try:
            model_vocab[i] = bytelevel.decode_string(tok)
        except KeyError:
            bad = next(c for c in tok if c not in bytelevel.unicode_to_bytes())
            raise FileFormatError(
                f"token {tok!r} (id {i}) has {bad!r}, which is not in GPT-2's byte alphabet; "
                "list it in special_tokens= if it is a special token",
                path=vocab_path,
            ) from None
    ranks = {t: i for i, t in sorted(model_vocab.items(), reverse=True)}
    merges: list[tuple[bytes, bytes]] = []
    pairs: list[tuple[str, str]] = []
    last_id = -1
    in_id_order = True
    for lineno, left, right in read_merges_txt(merges_path):
        try:
            a = bytelevel.decode_string(left)
            b = bytelevel.decode_string(right)
        except KeyError:
            raise FileFormatError(
                f"merge {left!r} {right!r} has a character outside GPT-2's byte alphabet", path=merges_path, line=lineno
            ) from None
        for part, shown in ((a, left), (b, right), (a + b, left + right)):
            if part not in ranks:
                raise FileFormatError(
                    f"merge {left!r} {right!r}: token {shown!r} is not in {Path(vocab_path).name}",
                    path=merges_path,
                    line=lineno,
                )
        merged_id = ranks[a + b]
        if merged_id <= last_id:
            in_id_order = False
        last_id = max(last_id, merged_id)
        merges.append((a, b))
        pairs.append((left, right))
    if in_id_order and len(ranks) == len(model_vocab) and all(bytes([b]) in ranks for b in range(256)):
        try:
            model = BPE(model_vocab, merges)
        except FileFormatError as exc:
            raise FileFormatError(str(exc), path=vocab_path) from None
        if _ranks_imply_merges(model, pattern):
            return model, specials
    # merging by id would give other ids than merging by the list: merge by the list, as HF
    try:
        return PieceBPE(vocab, pairs), specials
    except FileFormatError as exc:
        raise FileFormatError(str(exc), path=vocab_path) from None


def _ranks_imply_merges(model: BPE, pattern: str) -> bool:
    """Does merging by rank give the ids of merging by ``model.merges`` in order?

    A token that no merge makes must be out of reach of rank merging: not two tokens
    joined, and never a whole piece of ``pattern``'s split (rank BPE takes a piece that
    is a token whole, as tiktoken does). Then :meth:`BPE.first_underived_merge` must find
    nothing (natively when the core is there: it takes a second in Python for GPT-2)."""
    merges = model.merges or []
    ranks = model.ranks
    made = {a + b for a, b in merges}
    unmade = [t for t in ranks if len(t) > 1 and t not in made]
    if unmade:
        from ..pretokenizers import compile_tiktoken, resolve_pattern

        split = compile_tiktoken(resolve_pattern(pattern)[1]).findall
        for t in unmade:
            if any(t[:k] in ranks and t[k:] in ranks for k in range(1, len(t))):
                return False  # rank merging can join it, the merge list cannot
            try:
                text = t.decode("utf-8")
            except UnicodeDecodeError:
                continue  # never a piece of text
            if split(text) == [text]:
                return False  # a piece can be this token whole
    core = model.native_encoder()
    if core is None:
        return model.first_underived_merge() < 0
    return core.first_underived_merge([(ranks[a], ranks[b]) for a, b in merges]) < 0


def byte_level_stages(pattern: str) -> dict:
    """The pre-tokenizer and decoder of a :class:`PieceBPE` over GPT-2's printable
    alphabet (``Tokenizer(model, **byte_level_stages(pattern))``), as in HF's files."""
    from .. import decoders, pretokenizers

    split = pretokenizers.Split(pretokenizers.resolve_pattern(pattern)[1], "isolated")
    pre = pretokenizers.Sequence([split, pretokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    return {"pre_tokenizer": pre, "decoder": decoders.ByteLevel()}


def tokenizer_args(
    vocab_path: str | os.PathLike,
    merges_path: str | os.PathLike,
    special_tokens: Collection[str] | Mapping[str, int] | None = None,
    pattern: str = "gpt2",
) -> dict:
    """The arguments of ``Tokenizer(**args)`` for GPT-2's two files, as :func:`tokenforge.load`
    reads them: a rank model split by ``pattern``, or (merges that ranks do not imply) HF's
    merge order with its stages."""
    model, specials = load_gpt2_model(vocab_path, merges_path, special_tokens, pattern)
    if not isinstance(model, BPE):
        return {"model": model, **byte_level_stages(pattern), "special_tokens": specials}
    return {"model": model, "pre_tokenizer": pattern, "special_tokens": specials}


def save_gpt2(model: BPE, special_tokens: Mapping[str, int], directory: str | os.PathLike) -> None:
    """Write ``vocab.json`` and ``merges.txt`` into ``directory`` (each atomically)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    merges = model.derive_merges()
    vocab = {bytelevel.encode_bytes(t): i for i, t in sorted(model.vocab.items())}
    if len(vocab) != len(model.vocab):
        raise FileFormatError("this model has two ids with the same bytes, which vocab.json cannot express")
    for tok, i in sorted(special_tokens.items(), key=lambda kv: kv[1]):
        if tok in vocab:
            raise FileFormatError(f"special token {tok!r} collides with an ordinary token in vocab.json form")
        vocab[tok] = i
    merges_text = "#version: 0.2\n" + "".join(
        f"{bytelevel.encode_bytes(a)} {bytelevel.encode_bytes(b)}\n" for a, b in merges
    )
    atomic_write_files(
        {directory / "vocab.json": json.dumps(vocab, ensure_ascii=False), directory / "merges.txt": merges_text}
    )
