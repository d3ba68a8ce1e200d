"""Rendering a Jinja chat template: tokenforge's ``apply_chat_template`` against transformers'.

tokenforge renders in Jinja's sandbox with per-character provenance (which characters the
template wrote) and encodes the user text with special-token matching off; transformers renders
one string and encodes it. Both get the same tokenizer (cl100k_base with ChatML's two control
tokens, written with ``save_pretrained`` and read by ``AutoTokenizer``), the same template and
the same conversation (lines of ``shared/data/text/tinystories_valid_sample.txt``); the ids are
checked equal before anything is timed. Reported: best-of-``--repeat`` wall time per render,
string (``tokenize=False``) and ids (``tokenize=True``), and the ratio tokenforge ÷ transformers.

    python benchmarks/bench_chat_template.py [--messages 10 100 1000] [--repeat 5]

Run it with ``PYTHONPATH=<another checkout>/src`` to time another tokenforge the same way.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import tokenforge
from _common import DATA_DIR

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] | trim"
          " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
TOOLS = (
    "{%- if tools %}<|im_start|>system\n# Tools\n<tools>{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n"
    "</tools><|im_end|>\n{% endif %}"
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | trim }}<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOOL_LIST = [{"type": "function", "function": {"name": f"tool_{i}", "description": f"Does thing {i}.",
                                                "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}}
             for i in range(8)]


def best(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import transformers

    enc = tokenforge.get_encoding("cl100k_base")
    tok = tokenforge.Tokenizer(enc.model, pre_tokenizer=enc.pattern,
                               special_tokens={**enc.special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265})
    with tempfile.TemporaryDirectory() as d:
        tok.save_pretrained(Path(d) / "chat")
        auto = transformers.AutoTokenizer.from_pretrained(str(Path(d) / "chat"))
    lines = [s for s in (Path(DATA_DIR) / "text" / "tinystories_valid_sample.txt").read_text().splitlines() if s.strip()]
    print(f"# tokenforge {tokenforge.__file__} | transformers {transformers.__version__}")
    print("| template | messages | tokenforge string ms | transformers string ms | ratio | tokenforge ids ms"
          " | transformers ids ms | ratio |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for name, template, tools in (("ChatML", CHATML, None), ("ChatML + 8 tools (tojson)", TOOLS, TOOL_LIST)):
        for n in args.messages:
            msgs = [{"role": ("user", "assistant")[i % 2], "content": lines[i % len(lines)]} for i in range(n)]
            kw = {"chat_template": template, "tools": tools, "add_generation_prompt": True}
            want = auto.apply_chat_template(msgs, tokenize=True, **kw)
            want = list(want["input_ids"]) if hasattr(want, "keys") else list(want)
            assert tok.apply_chat_template(msgs, **kw) == want, "different ids"
            cells = []
            for tokenize in (False, True):
                ours = best(lambda: tok.apply_chat_template(msgs, tokenize=tokenize, **kw), args.repeat)
                theirs = best(lambda: auto.apply_chat_template(msgs, tokenize=tokenize, **kw), args.repeat)
                cells += [f"{ours * 1e3:.2f}", f"{theirs * 1e3:.2f}", f"{ours / theirs:.2f}"]
            print(f"| {name} | {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
