#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ (docs/fuzzing.md).

usage: fuzz/make_seeds.py DATA_DIR [RECORD_JSON]
       ATLAS_SEEDS_ONLY=generated|TARGET[,TARGET...] fuzz/make_seeds.py DATA_DIR

Seeds are small on purpose (libFuzzer mutates whole inputs). Two kinds:
- checked in: text seeds made from the repo's own files (chat templates, suite configs, baseline,
  a trimmed real record, BFCL model outputs from tests/bfcl/differential_verdicts.jsonl, ...);
- generated, never committed (GENERATED: .gitignore lists them; fuzz/run.sh and the ctest fixture
  of fuzz_corpus run ATLAS_SEEDS_ONLY=generated): model files (synthetic GGUF and llama2.c
  checkpoints with a few-hundred-parameter body) and what is taken from the data directory at run
  time (the stories260K tokenizer, the header-only prefixes of the real model files). Files of the
  data directory are never copied into the project.
Files named crash-* / regress-* are regression inputs found by fuzzing (tiny, hand-minimized,
checked in): this script never touches them.
"""
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data")
RECORD = sys.argv[2] if len(sys.argv) > 2 else None


# Targets whose seeds are generated at run time (model files, data-directory files): never committed.
GENERATED = ("gguf", "llama2c", "llama2c_tokenizer")


class MissingData(Exception):
    """A file of the data directory that a seed is taken from is absent."""


def data_file(rel):
    """The bytes of DATA/rel; MissingData names the path when it cannot be read."""
    path = os.path.join(DATA, rel)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise MissingData(f"{path}: {e.strerror} (the data directory is make_seeds.py's first argument)") from e


def out(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- GGUF
GT = dict(u8=0, i8=1, u16=2, i16=3, u32=4, i32=5, f32=6, bool=7, str=8, arr=9, u64=10, i64=11, f64=12)


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gval(t, v):
    if t == "str":
        return gstr(v)
    fmt = {"u8": "B", "i8": "b", "u16": "H", "i16": "h", "u32": "I", "i32": "i", "f32": "f", "bool": "?", "u64": "Q", "i64": "q", "f64": "d"}[t]
    return struct.pack("<" + fmt, v)


def gkv(key, t, v):
    if t.startswith("arr:"):
        et = t[4:]
        body = struct.pack("<IQ", GT[et], len(v)) + b"".join(gval(et, x) for x in v)
        return gstr(key) + struct.pack("<I", GT["arr"]) + body
    return gstr(key) + struct.pack("<I", GT[t]) + gval(t, v)


def f16(x):
    return struct.pack("<e", x)


def bf16(x):
    return struct.pack("<f", x)[2:]


def q8_0(vals):
    out_b = b""
    for i in range(0, len(vals), 32):
        blk = vals[i:i + 32]
        amax = max(abs(v) for v in blk) or 1.0
        d = amax / 127
        out_b += f16(d) + bytes((int(round(v / d)) & 0xFF) for v in blk)
    return out_b


GGML = dict(F32=0, F16=1, Q8_0=8, BF16=30)


def tensor_bytes(dtype, vals):
    if dtype == "F32":
        return b"".join(struct.pack("<f", v) for v in vals)
    if dtype == "F16":
        return b"".join(f16(v) for v in vals)
    if dtype == "BF16":
        return b"".join(bf16(v) for v in vals)
    return q8_0(vals)


def gguf(kvs, tensors, version=3, align=32):
    """tensors: [(name, ne list (ne0 first), dtype)]"""
    h = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(gkv(*kv) for kv in kvs)
    datas, off = [], 0
    infos = b""
    for i, (name, ne, dt) in enumerate(tensors):
        n = 1
        for d in ne:
            n *= d
        vals = [((i * 31 + k * 7) % 13 - 6) / 16.0 for k in range(n)]
        b = tensor_bytes(dt, vals)
        infos += gstr(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<q", d) for d in ne) + struct.pack("<IQ", GGML[dt], off)
        pad = (-len(b)) % align
        datas.append(b + b"\0" * pad)
        off += len(b) + pad
    h += infos
    h += b"\0" * ((-len(h)) % align)
    return h + b"".join(datas)


def model_tensors(arch, dim, hidden, layers, heads, kv_heads, vocab, dtype, qk_norm=False, tied=True):
    hd = dim // heads
    t = [("token_embd.weight", [dim, vocab], dtype), ("output_norm.weight", [dim], "F32")]
    if not tied:
        t.append(("output.weight", [dim, vocab], dtype))
    for l in range(layers):
        p = f"blk.{l}."
        t += [(p + "attn_norm.weight", [dim], "F32"), (p + "attn_q.weight", [dim, heads * hd], dtype),
              (p + "attn_k.weight", [dim, kv_heads * hd], dtype), (p + "attn_v.weight", [dim, kv_heads * hd], dtype),
              (p + "attn_output.weight", [heads * hd, dim], dtype), (p + "ffn_norm.weight", [dim], "F32"),
              (p + "ffn_gate.weight", [dim, hidden], dtype), (p + "ffn_up.weight", [dim, hidden], dtype),
              (p + "ffn_down.weight", [hidden, dim], dtype)]
        if qk_norm:
            t += [(p + "attn_q_norm.weight", [hd], "F32"), (p + "attn_k_norm.weight", [hd], "F32")]
    return t


def config_kvs(arch, dim, hidden, layers, heads, kv_heads, ctx=64):
    return [("general.architecture", "str", arch), ("general.name", "str", "fuzz-seed"),
            (arch + ".embedding_length", "u32", dim), (arch + ".feed_forward_length", "u32", hidden),
            (arch + ".block_count", "u32", layers), (arch + ".attention.head_count", "u32", heads),
            (arch + ".attention.head_count_kv", "u32", kv_heads), (arch + ".context_length", "u32", ctx),
            (arch + ".attention.layer_norm_rms_epsilon", "f32", 1e-5), (arch + ".rope.freq_base", "f32", 10000.0)]


def read_gguf_tokenizer_kvs(b):
    """The tokenizer.ggml.* key/values of a real GGUF file's bytes (parsed just enough)."""
    _, _, n_t, n_kv = struct.unpack_from("<4sIQQ", b, 0)
    p = 24
    kvs = []

    def rstr(p):
        (n,) = struct.unpack_from("<Q", b, p)
        return b[p + 8:p + 8 + n].decode(), p + 8 + n

    def rval(t, p):
        inv = {v: k for k, v in GT.items()}[t]
        if inv == "str":
            return rstr(p)
        fmt = {"u8": "B", "i8": "b", "u16": "H", "i16": "h", "u32": "I", "i32": "i", "f32": "f", "bool": "?", "u64": "Q", "i64": "q", "f64": "d"}[inv]
        return struct.unpack_from("<" + fmt, b, p)[0], p + struct.calcsize(fmt)

    for _ in range(n_kv):
        key, p = rstr(p)
        (t,) = struct.unpack_from("<I", b, p)
        p += 4
        if t == GT["arr"]:
            et, n = struct.unpack_from("<IQ", b, p)
            p += 12
            vals = []
            for _ in range(n):
                v, p = rval(et, p)
                vals.append(v)
            tname = "arr:" + {v: k for k, v in GT.items()}[et]
            v = vals
        else:
            v, p = rval(t, p)
            tname = {v2: k for k, v2 in GT.items()}[t]
        if key.startswith("tokenizer."):
            kvs.append((key, tname, v))
    return kvs


def gguf_seeds():
    # qwen3 + a byte-level BPE vocabulary (gpt2 model, qwen2 split), F16, untied
    b2u = byte_to_unicode()
    toks = [b2u[b] for b in range(256)] + ["\u0120h", "\u0120hi", "<|im_start|>", "<|im_end|>", "<|endoftext|>"]
    types = [1] * 258 + [3, 3, 3]
    bpe_kvs = [("tokenizer.ggml.model", "str", "gpt2"), ("tokenizer.ggml.pre", "str", "qwen2"), ("tokenizer.ggml.tokens", "arr:str", toks),
               ("tokenizer.ggml.token_type", "arr:i32", types), ("tokenizer.ggml.merges", "arr:str", ["\u0120 h", "\u0120h i"]),
               ("tokenizer.ggml.eos_token_id", "u32", 259), ("tokenizer.ggml.bos_token_id", "u32", 260),
               ("tokenizer.ggml.add_bos_token", "bool", False),
               ("tokenizer.chat_template", "str", "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}")]
    out("gguf", "qwen3-bpe-f16.gguf", gguf(config_kvs("qwen3", 8, 16, 1, 2, 1) + [("qwen3.attention.key_length", "u32", 4)] + bpe_kvs,
                                           model_tensors("qwen3", 8, 16, 1, 2, 1, len(toks), "F16", qk_norm=True, tied=False)))
    # Q8_0 and BF16 bodies (ne0 a multiple of 32), no tokenizer, GGUF v2
    out("gguf", "llama-q8_0-v2.gguf", gguf(config_kvs("llama", 32, 32, 1, 2, 2), model_tensors("llama", 32, 32, 1, 2, 2, 8, "Q8_0"), version=2))
    out("gguf", "llama-bf16-align64.gguf", gguf(config_kvs("llama", 32, 32, 1, 1, 1) + [("general.alignment", "u32", 64)],
                                                model_tensors("llama", 32, 32, 1, 1, 1, 4, "BF16"), align=64))
    # From the data directory: llama + the real SentencePiece vocabulary and a tiny body, and the
    # header-only prefix of the real file (metadata and tensor infos, no data).
    raw = data_file("models/stories260K-gguf/stories260K.gguf")
    tok_kvs = read_gguf_tokenizer_kvs(raw)
    vocab = len(next(v for k, t, v in tok_kvs if k == "tokenizer.ggml.tokens"))
    out("gguf", "llama-spm-f32.gguf", gguf(config_kvs("llama", 8, 16, 1, 2, 1) + tok_kvs, model_tensors("llama", 8, 16, 1, 2, 1, vocab, "F32")))
    out("gguf", "stories260K-header-prefix.gguf", raw[:24 + 16384])


# ---------------------------------------------------------------- safetensors
def st(tensors, meta=None, pad=True):
    h = {}
    if meta:
        h["__metadata__"] = meta
    data = b""
    for name, dt, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        vals = [(k % 7 - 3) / 4.0 for k in range(n)]
        b = tensor_bytes(dt, vals)
        h[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    hs = json.dumps(h, separators=(",", ":")).encode()
    if pad:
        hs += b" " * ((-len(hs)) % 8)
    return struct.pack("<Q", len(hs)) + hs + data


def safetensors_seeds():
    out("safetensors", "mixed.safetensors", st([("model.embed_tokens.weight", "F32", [4, 2]), ("model.norm.weight", "F16", [2]),
                                                 ("lm_head.weight", "BF16", [4, 2])], {"format": "pt"}))
    out("safetensors", "zero-length.safetensors", st([("a", "F32", [0]), ("b", "F16", [3, 0]), ("c", "BF16", [1])]))
    out("safetensors", "empty.safetensors", st([], {"format": "pt"}))
    out("safetensors", "layers.safetensors", st([(f"model.layers.{l}.self_attn.{p}_proj.weight", "F16", [2, 2]) for l in range(2) for p in "qkvo"]))
    # The replayed bug report: v_proj aliasing k_proj (must be rejected).
    h = {"k_proj.weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]},
         "v_proj.weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}
    hs = json.dumps(h).encode()
    out("safetensors", "regress-alias.safetensors", struct.pack("<Q", len(hs)) + hs + b"\0" * 64)


# ---------------------------------------------------------------- llama2.c
def llama2c_body(dim, hidden, layers, heads, kv, vocab, seq, shared=True):
    hd = dim // heads
    sizes = [vocab * dim, layers * dim, layers * dim * dim, layers * dim * kv * hd, layers * dim * kv * hd, layers * dim * dim,
             layers * dim, layers * dim * hidden, layers * hidden * dim, layers * dim * hidden, dim, seq * hd // 2, seq * hd // 2]
    if not shared:
        sizes.append(vocab * dim)
    n = sum(sizes)
    return b"".join(struct.pack("<f", ((k % 11) - 5) / 8.0) for k in range(n))


def llama2c_seeds():
    dim, hidden, layers, heads, kv, vocab, seq = 8, 16, 1, 2, 1, 16, 8
    out("llama2c", "legacy-shared.bin", struct.pack("<7i", dim, hidden, layers, heads, kv, vocab, seq) + llama2c_body(dim, hidden, layers, heads, kv, vocab, seq))
    out("llama2c", "legacy-untied.bin", struct.pack("<7i", dim, hidden, layers, heads, kv, -vocab, seq) + llama2c_body(dim, hidden, layers, heads, kv, vocab, seq, False))
    # fuzz_llama2c's finding: a legacy header alone with vocab_size INT_MIN (-vocab_size overflowed);
    # generated like every model-file seed, its unit test is in tests/engine/llama2c_format_test.cpp.
    out("llama2c", "regress-vocab-int-min.bin", struct.pack("<7i", dim, hidden, layers, heads, kv, -2**31, seq))
    # ak42 version 1: header padded to 256, float32 norms then matrices
    hd = dim // heads
    hdr1 = struct.pack("<Ii7iB", 0x616B3432, 1, dim, hidden, layers, heads, kv, vocab, seq, 1)
    hdr1 += b"\0" * (256 - len(hdr1))
    n1 = layers * dim * 2 + dim + vocab * dim + layers * (dim * dim * 2 + 2 * dim * kv * hd + 3 * dim * hidden)
    out("llama2c", "ak42-v1.bin", hdr1 + b"".join(struct.pack("<f", (k % 5 - 2) / 4.0) for k in range(n1)))
    # ak42 version 2 (Q8_0 groups of 8): norms float32, then each matrix int8 + float32 scales
    gs = 8
    hdr2 = struct.pack("<Ii7iBi", 0x616B3432, 2, dim, hidden, layers, heads, kv, vocab, seq, 1, gs)
    hdr2 += b"\0" * (256 - len(hdr2))
    body = b"".join(struct.pack("<f", 1.0) for _ in range(layers * dim * 2 + dim))
    mats = [vocab * dim] + [layers * dim * dim, layers * dim * kv * hd, layers * dim * kv * hd, layers * dim * dim,
                            layers * dim * hidden, layers * hidden * dim, layers * dim * hidden]
    for m in mats:
        body += bytes(((k % 9) - 4) & 0xFF for k in range(m)) + b"".join(struct.pack("<f", 0.01) for _ in range(m // gs))
    out("llama2c", "ak42-v2.bin", hdr2 + body)
    # From the data directory: the real checkpoint's legacy header and first weights.
    out("llama2c", "stories260K-header-prefix.bin", data_file("models/stories260K/stories260K.bin")[:512])


def llama2c_tokenizer_seeds():
    small = struct.pack("<i", 8)
    for piece, score in [(b"<unk>", 0.0), (b"\n<s>\n", 0.0), (b"\n</s>\n", 0.0), (b"<0x0A>", 0.0), (b" a", -1.0), (b"b", -2.0), (b" ab", -0.5), (b"\xc3\xa9", -3.0)]:
        small += struct.pack("<fi", score, len(piece)) + piece
    out("llama2c_tokenizer", "tok8.bin", small)
    # From the data directory: the real stories260K tokenizer (512 tokens).
    out("llama2c_tokenizer", "tok512.bin", data_file("models/stories260K/tok512.bin"))


# ---------------------------------------------------------------- tokenizer.json
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""


def byte_to_unicode():
    """GPT-2's byte-level BPE alphabet: byte -> the printable character that stands for it
    (bytes_to_unicode in openai/gpt-2 encoder.py)."""
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def byte_vocab():
    """The 256 byte tokens of a byte-level BPE vocabulary: character -> id (= the byte)."""
    m = byte_to_unicode()
    return {m[b]: b for b in range(256)}


def tokenizer_json_seeds():
    v = byte_vocab()
    v["\u0120h"] = 256
    v["\u0120hi"] = 257
    base = {"version": "1.0", "normalizer": None, "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": v, "merges": ["\u0120 h", ["\u0120h", "i"]]}}
    gpt2 = dict(base, added_tokens=[{"id": 258, "content": "<s>", "special": True}, {"id": 259, "content": "<|eot_id|>", "special": True}],
                pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True, "use_regex": True},
                post_processor={"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]})
    out("tokenizer_json", "gpt2.json", json.dumps(gpt2, ensure_ascii=False))
    for name, rx in [("qwen2", QWEN2), ("llama3", LLAMA3)]:
        t = dict(base, added_tokens=[{"id": 258, "content": "<|im_end|>", "special": True, "lstrip": False, "rstrip": False, "normalized": False},
                                     {"id": 259, "content": "<|endoftext|>", "special": True}],
                 pre_tokenizer={"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": rx}, "behavior": "Isolated", "invert": False},
                                                                     {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
                 post_processor={"type": "Sequence", "processors": [{"type": "ByteLevel"}]})
        out("tokenizer_json", name + ".json", json.dumps(t, ensure_ascii=False))


# ---------------------------------------------------------------- Jinja
def jinja_seeds():
    tdir = os.path.join(ROOT, "tests/chat/templates")
    for f in sorted(os.listdir(tdir)):
        if f.endswith(".jinja"):
            out("jinja", f, open(os.path.join(tdir, f), "rb").read())
    snippets = {
        "loop.jinja": "{% for m in messages %}{{ loop.index }}{% if loop.first %}F{% endif %}{{ m.role | upper }}: {{ m.content | trim }}{% if not loop.last %}\n{% endif %}{% else %}none{% endfor %}",
        "ns.jinja": "{% set ns = namespace(t=0, s='') %}{% for x in range(5) %}{% set ns.t = ns.t + x %}{% endfor %}{{ ns.t }}{{ messages[-1]['content'][1:3] }}",
        "tools.jinja": "{%- if tools %}{% for t in tools %}{{ t | tojson(indent=2) }}{{ t.function.name ~ '!' }}{% endfor %}{% endif -%}\n{{- (messages | length) // 2 }}{{ 7 % 3 }}{{ 'x' if add_generation_prompt else 'y' }}",
        "dict.jinja": "{% for k, v in {'a': 1, 'b': [1, 2]}.items() %}{{ k }}={{ v | string }};{% endfor %}{{ messages[0].get('role', 'none') }}{{ 'abc'.startswith('a') }}{{ none is none }}{{ 3 is number }}",
        "raise.jinja": "{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}",
        "filters.jinja": "{{ messages | map(attribute='role') | join(',') }}{{ 'a,b'.split(',') | first }}{{ [3,1,2] | reverse | list }}{{ '5' | int + 1 }}{{ 'X' | lower | default('d') }}{{ 'hello world' | title | replace('o', '0') }}",
        "ws.jinja": "a  {{- 'x' -}}  b\n  {% if true %}\nT\n  {% endif %}\n{#- comment -#}\n{%+ if true %}y{% endif %}",
    }
    for k, s in snippets.items():
        out("jinja", k, s)


# ---------------------------------------------------------------- OpenAI request bodies
def openai_request_seeds():
    bodies = {
        "chat-basic.json": {"model": "stories260K", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8, "temperature": 0},
        "chat-tools.json": {"model": "m", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "1+2?"}]},
                                                     {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1}"}}]},
                                                     {"role": "tool", "tool_call_id": "c0", "content": "3"}],
                            "tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
                            "tool_choice": "auto", "stream": True, "stream_options": {"include_usage": True}, "seed": 7, "top_p": 0.9, "top_k": 5,
                            "stop": ["\n\n", "END"], "max_completion_tokens": 16, "ignore_eos": True, "add_generation_prompt": False},
        "completion-text.json": {"model": "m", "prompt": "Once upon a time", "max_tokens": 4, "stop": "x", "stream": False},
        "completion-ids.json": {"model": "m", "prompt": [1, 2, 3, 4], "max_tokens": 0, "temperature": 1.5, "min_p": 0.1, "repetition_penalty": 1.1},
        "huge-max-tokens.json": {"model": "m", "prompt": "x", "max_tokens": 10 ** 18},
    }
    for k, b in bodies.items():
        out("openai_request", k, json.dumps(b))
    out("openai_request", "truncated.json", json.dumps(bodies["chat-basic.json"])[:40])
    out("openai_request", "deep.json", '{"model": "m", "messages": ' + "[" * 200 + "]" * 200 + "}")


# ---------------------------------------------------------------- SSE + OpenAI stream
def sse_seeds():
    def ev(d):
        return "data: " + json.dumps(d) + "\n\n"
    chat = ev({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
    chat += ev({"choices": [{"index": 0, "delta": {"content": "Hel"}}]}) + ev({"choices": [{"index": 0, "delta": {"reasoning_content": "hmm"}}]})
    chat += ev({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_0", "type": "function", "function": {"name": "add", "arguments": "{\"a\""}}]}}]})
    chat += ev({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}, "finish_reason": "tool_calls"}]})
    chat += ev({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 2}}}) + "data: [DONE]\n\n"
    out("sse_stream", "chat.sse", b"\x05" + chat.encode())
    comp = ": ping\r\n\r\n" + "event: message\r\ndata: " + json.dumps({"choices": [{"index": 0, "text": "Once", "finish_reason": None}]}) + "\r\n\r\n"
    comp += "data: " + json.dumps({"choices": [{"index": 0, "text": " upon", "finish_reason": "length"}]}) + "\r\r" + "data: [DONE]\n\n"
    out("sse_stream", "completion-crlf.sse", b"\x02" + b"\xef\xbb\xbf" + comp.encode())
    out("sse_stream", "error.sse", b"\x00" + ev({"error": {"message": "boom", "type": "server_error"}}).encode() + b"data: {not json\n\n")
    out("sse_stream", "multiline.sse", b"\x0b" + b"id: 1\nretry: 10\ndata: {\"choices\":\ndata: [{\"index\":0,\"text\":\"\xc3\xa9\"}]}\n\ndata: [DONE]")


# ---------------------------------------------------------------- BFCL outputs
def bfcl_seeds():
    seen = set()
    n = 0
    with open(os.path.join(ROOT, "tests/bfcl/differential_verdicts.jsonl")) as f:
        for line in f:
            r = json.loads(line)["result"]
            if not isinstance(r, str) or r in seen or len(r) > 400:
                continue
            key = (r[:1], len(r) // 50, "(" in r, "'" in r, "**" in r)
            if key in seen:
                continue
            seen.add(key)
            seen.add(r)
            out("bfcl_python", f"verdict-{n:03d}.txt", r)
            n += 1
            if n >= 40:
                break
    extra = ["[f(a=1, b=-2.5e3, c='x', d=\"y\", e=[1, 2], f={'k': (1,)}, g=None, h=True)]", "[m.f(x=2**10, y=10**-2, z='a'+'b', w=[1,2][0])]",
             "[f(**{'a': 1}), g(*[1])]", "```python\n[f(a=1)]\n```", "[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]", "f(a=b'bytes', c=1j, d=0x1F, e=1_000)"]
    for i, e in enumerate(extra):
        out("bfcl_python", f"extra-{i}.txt", e)


# ---------------------------------------------------------------- records, baselines, suite configs
def shrink(v, keep=2):
    """The first `keep` entries of every list and object, recursively: a few-KiB record seed
    has every field kind; a 24 KiB one made each execution ~5x slower for no new coverage."""
    if isinstance(v, list):
        return [shrink(x, keep) for x in v[:keep]]
    if isinstance(v, dict):
        return {k: shrink(x, keep) for k, x in list(v.items())[:max(keep, 3)]}
    return v


def without_machine_paths(v):
    """Absolute paths of the machine that made a record, made relative to its checkout (a seed
    names no machine's folders): "/x/checkout/suites/a.json" -> "suites/a.json", the data
    directory -> "../shared/data"."""
    if isinstance(v, list):
        return [without_machine_paths(x) for x in v]
    if isinstance(v, dict):
        return {k: without_machine_paths(x) for k, x in v.items()}
    if isinstance(v, str) and v.startswith("/"):
        for marker in ("/shared/data", "/suites/", "/baselines/", "/models/"):
            if marker in v:
                at = v.index(marker)
                return ".." + v[at:] if marker == "/shared/data" else v[at + 1:]
    return v


def json_seeds():
    for f in sorted(os.listdir(os.path.join(ROOT, "suites/config"))):
        out("suite_config", f, open(os.path.join(ROOT, "suites/config", f), "rb").read())
    bdir = os.path.join(ROOT, "baselines")
    for mc in sorted(os.listdir(bdir)):
        if os.path.isdir(os.path.join(bdir, mc)):
            for f in sorted(os.listdir(os.path.join(bdir, mc))):
                b = json.load(open(os.path.join(bdir, mc, f)))
                if isinstance(b.get("history"), list):
                    b["history"] = b["history"][-3:]
                # a few metrics of each kind (timed, counted, accuracy, identity), two history entries each
                keep, kinds = {}, {}
                for k, m in b.get("metrics", {}).items():
                    kind = (m.get("kind"), m.get("better"), "tolerance" in m)
                    if kinds.get(kind, 0) < 2:
                        kinds[kind] = kinds.get(kind, 0) + 1
                        if isinstance(m.get("history"), list):
                            m["history"] = m["history"][:2]
                        keep[k] = m
                b["metrics"] = keep
                out("baseline", mc + "-" + f, json.dumps(b, indent=1))
    if RECORD:
        r = json.load(open(RECORD))
        for s in r.get("suites", {}).values():
            ms = s.get("metrics", {})
            for k in list(ms)[3:]:
                del ms[k]
            for m in ms.values():
                if isinstance(m.get("samples"), list):
                    m["samples"] = m["samples"][:4]
            s["details"] = shrink(s.get("details"))
        out("record", "pr-record.json", json.dumps(without_machine_paths(r), indent=1))


# ---------------------------------------------------------------- tool calls in model output
def tool_calls_seeds():
    # First byte: the streaming chunk size (1 + b % 17); the rest is what a model generated.
    texts = {
        "hermes-one.txt": 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
        "hermes-two.txt": '<tool_call>{"name": "a", "arguments": {"x": [1, 2.5, null, true]}}</tool_call>\n'
                          '<tool_call>{"name": "b", "parameters": "{\\"y\\": \\"z\\"}"}</tool_call> done',
        "hermes-bad-body.txt": 'text <tool_call>{"name": 3}</tool_call> more <tool_call>{"name": "f"',
        "hermes-unclosed.txt": '<tool_call>{"name": "f", "arguments": {"q": "\\u00e9\\ud83d\\ude00"}}',
        "python-list.txt": "[get_weather(city='Paris', days=3), lookup(q=\"a\\nb\", n=-1.5e3, flags=[True, None], m={'k': (1, 2)},)]",
        "python-empty-args.txt": "  [f(), g.h-i(x=1_000)]  ",
        "plain.txt": "Once upon a time there was a <tool_ call> and a </tool_call> and <tool_call",
    }
    for i, (name, t) in enumerate(sorted(texts.items())):
        out("tool_calls", name, bytes([i * 5 % 256]) + t.encode())


# ---------------------------------------------------------------- Hugging Face config.json
def hf_config_seeds():
    ref = os.path.join(ROOT, "tests/engine/qwen3_next_reference")
    for f in ("config.json", "config-variant.json"):
        out("hf_config", "qwen3-next-" + f, open(os.path.join(ref, f), "rb").read())
    out("hf_config", "llama.json", json.dumps({
        "architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 5,
        "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 512, "max_position_embeddings": 512,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": True, "hidden_act": "silu",
        "rope_scaling": None, "attention_bias": False}, indent=1))
    out("hf_config", "qwen3.json", json.dumps({
        "model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
        "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0}, "sliding_window": None}, indent=1))


SEEDS = {"gguf": gguf_seeds, "safetensors": safetensors_seeds, "llama2c": llama2c_seeds, "llama2c_tokenizer": llama2c_tokenizer_seeds,
         "tokenizer_json": tokenizer_json_seeds, "jinja": jinja_seeds, "openai_request": openai_request_seeds, "sse_stream": sse_seeds,
         "bfcl_python": bfcl_seeds, "json": json_seeds, "tool_calls": tool_calls_seeds, "hf_config": hf_config_seeds}

if __name__ == "__main__":
    # The GENERATED targets' seeds are never committed: fuzz/run.sh and the ctest fixture of
    # fuzz_corpus make them (ATLAS_SEEDS_ONLY=generated); a list of targets makes just those.
    only = os.environ.get("ATLAS_SEEDS_ONLY")
    names = list(SEEDS) if not only else list(GENERATED) if only == "generated" else only.split(",")
    unknown = [n for n in names if n not in SEEDS]
    if unknown:
        sys.exit(f"make_seeds.py: ATLAS_SEEDS_ONLY names no seed set {unknown} (known: generated, {', '.join(SEEDS)})")
    missing = []
    for n in names:
        try:
            SEEDS[n]()
        except MissingData as e:  # the other targets' seeds are still written
            missing.append(f"{n}: {e}")
    if missing:
        sys.exit("make_seeds.py: seeds not written, a data file is missing:\n  " + "\n  ".join(missing))
