#!/usr/bin/env python3
"""Renders tests/fixtures/chat/*.jinja as Hugging Face's apply_chat_template
does (one user message, add_generation_prompt=True) into
tests/fixtures/chat/cases.txt, which check_chat compares attnscope's
chat_render with.

The environment is the one transformers' chat template utilities build: a
sandboxed Jinja2 environment with trim_blocks and lstrip_blocks, the
loopcontrols extension, raise_exception, and tojson.  strftime_now is left
undefined, so Llama 3.1's templates name their fallback date (26 Jul 2024),
which the test passes to chat_render.  An oracle only: make never runs it.

    python3 tests/oracle/chat_fixtures.py
"""
import json
import os

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
CHAT = os.path.join(HERE, "..", "fixtures", "chat")

# (template file, bos_token, eos_token) as each model's tokenizer_config.json names them
TEMPLATES = [
    ("qwen3.jinja", "", "<|im_end|>"),
    ("Qwen-Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>"),
    ("llama3.jinja", "<|begin_of_text|>", "<|end_of_text|>"),
    ("meta-llama-Llama-3.2-3B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>"),
    ("gemma3.jinja", "<bos>", "<end_of_turn>"),
    ("google-gemma-2-2b-it.jinja", "<bos>", "<eos>"),
    ("microsoft-Phi-3.5-mini-instruct.jinja", "<s>", "<|endoftext|>"),
    ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "<s>", "</s>"),
]

USERS = [
    "What is attention?",
    "  Why does the mask hide the future?\n",
    "Übersetze: the cat sat on the mat.",
    "one\ntwo\n\nthree",
    # (white space Jinja's trim strips beyond ASCII's: an ideographic space, a no-break space,
    # a separator; issue 60's fuzz run)
    "\u3000\u00a0\x1e 注意力とは?\u2003\u3000",
]


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def render(text, bos, eos, user):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(text).render(messages=[{"role": "user", "content": user}],
                                        add_generation_prompt=True, bos_token=bos,
                                        eos_token=eos)


def main():
    lines = ["# made by tests/oracle/chat_fixtures.py: template, bos, user, then the rendered "
             "text, each a JSON string"]
    for name, bos, eos in TEMPLATES:
        with open(os.path.join(CHAT, name), encoding="utf-8") as f:
            text = f.read()
        for user in USERS:
            lines.append("case " + json.dumps(name))
            lines.append("bos " + json.dumps(bos))
            lines.append("user " + json.dumps(user, ensure_ascii=False))
            lines.append("text " + json.dumps(render(text, bos, eos, user), ensure_ascii=False))
    with open(os.path.join(CHAT, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
