#!/usr/bin/env python3
"""Replays inputs modelled on public bug reports and advisories against the loaders (docs/fuzzing.md, "Replay of public bug reports").

usage: fuzz/replay_reports.py BUILD_DIR [OUT_DIR] [CASE_PREFIX...]

Each case builds a small synthetic input (no model weights: a few hundred parameters) shaped as
the report describes, runs it through the library harness (atlas_fuzz_replay <target>, which
aborts on any exception other than the documented typed error) or through
`atlas-bench generate` (directories, and the forward pass), under a 30 s timeout and a 4 GiB
address-space limit, and prints one line per case: the outcome (typed error with its message,
accepted, crash, hang, out of memory). docs/fuzzing.md ("Replay of public bug reports") lists
the sources and what each case showed before and after the fixes.
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_seeds as ms  # noqa: E402  (gguf / safetensors / llama2.c builders)

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
OUT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/atlas-replay"
ONLY = sys.argv[3:]

CASES = []


def case(cid, source, what, target):
    def reg(fn):
        CASES.append((cid, source, what, target, fn))
        return fn
    return reg


# ------------------------------------------------------------------ GGUF builders
BYTES = ["<0x%02X>" % b for b in range(256)]
SPM_TOKENS = ["<unk>", "<s>", "</s>"] + BYTES + ["\u2581h", "\u2581hi", "i"]
SPM_TYPES = [2, 3, 3] + [6] * 256 + [1, 1, 1]
SPM_SCORES = [0.0, 0.0, 0.0] + [0.0] * 256 + [-1.0, -0.5, -2.0]
DIM, HID, LAY, HEADS, KVH = 8, 16, 1, 2, 1


def spm_kvs(tokens=None, types=None, scores=None, extra=()):
    tokens = SPM_TOKENS if tokens is None else tokens
    kv = [("tokenizer.ggml.model", "str", "llama"), ("tokenizer.ggml.tokens", "arr:str", tokens)]
    if scores is not False:
        kv.append(("tokenizer.ggml.scores", "arr:f32", SPM_SCORES if scores is None else scores))
    if types is not False:
        kv.append(("tokenizer.ggml.token_type", "arr:i32", SPM_TYPES if types is None else types))
    kv += [("tokenizer.ggml.bos_token_id", "u32", 1), ("tokenizer.ggml.eos_token_id", "u32", 2),
           ("tokenizer.ggml.unknown_token_id", "u32", 0)]
    return kv + list(extra)


def model_gguf(kvs=None, tensors=None, vocab=None, cfg=None, **kw):
    vocab = len(SPM_TOKENS) if vocab is None else vocab
    cfg = ms.config_kvs("llama", DIM, HID, LAY, HEADS, KVH) if cfg is None else cfg
    kvs = spm_kvs() if kvs is None else kvs
    tensors = ms.model_tensors("llama", DIM, HID, LAY, HEADS, KVH, vocab, "F32") if tensors is None else tensors
    return ms.gguf(cfg + kvs, tensors, **kw)


def raw_gguf(n_tensors, kv_bytes, tensor_infos=b"", n_kv=None, data=b"", align=32):
    """A GGUF with hand-written key/value and tensor-info bytes (for fields the builder checks)."""
    h = b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv if n_kv is not None else (1 if kv_bytes else 0)) + kv_bytes + tensor_infos
    h += b"\0" * ((-len(h)) % align)
    return h + data


def tinfo(name, ne, ggml_type=0, offset=0):
    return ms.gstr(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<q", d) for d in ne) + struct.pack("<IQ", ggml_type, offset)


def patch_tensor_offset(blob, name, new_offset):
    """Rewrites the offset field of tensor `name` in a builder-made GGUF."""
    key = ms.gstr(name)
    at = blob.index(key) + len(key)
    n_dims = struct.unpack_from("<I", blob, at)[0]
    off_at = at + 4 + 8 * n_dims + 4
    return blob[:off_at] + struct.pack("<Q", new_offset) + blob[off_at + 8:]


def tensor_offset(blob, name):
    key = ms.gstr(name)
    at = blob.index(key) + len(key)
    n_dims = struct.unpack_from("<I", blob, at)[0]
    return struct.unpack_from("<Q", blob, at + 4 + 8 * n_dims + 4)[0]


# ------------------------------------------------------------------ GGUF cases
@case("gguf-ndims-5", "ggml-org/ggml#709 (n_dims > GGML_MAX_DIMS)", "tensor with n_dims 5", "gguf")
def _():
    return raw_gguf(1, b"", tinfo("t", [1, 1, 1, 1, 1]), n_kv=0)


@case("gguf-type-oob", "ggml-org/ggml#709, llama.cpp#19856 (tensor type out of range)", "ggml type 0xFFFFFFFF", "gguf")
def _():
    return raw_gguf(1, b"", tinfo("t", [4], ggml_type=0xFFFFFFFF), n_kv=0, data=b"\0" * 32)


@case("gguf-string-huge", "llama.cpp#19856 (string exhaustion)", "key length 2^64-1", "gguf")
def _():
    return raw_gguf(0, struct.pack("<Q", 2**64 - 1) + b"k")


@case("gguf-array-huge", "llama.cpp#19856 (array elements exhaustion)", "uint8 array of 2^62 items", "gguf")
def _():
    return raw_gguf(0, ms.gstr("a") + struct.pack("<IIQ", 9, 0, 2**62) + b"\0" * 16)


@case("gguf-array-nested", "gguf-py nested ARRAY recursion (GGUF-PY-F001)", "arrays nested 10,000 deep", "gguf")
def _():
    return raw_gguf(0, ms.gstr("a") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 10000 + struct.pack("<IQ", 0, 0))


@case("gguf-align-0", "llama.cpp#19856 (alignment non-zero power of 2)", "general.alignment 0", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(extra=[("general.alignment", "u32", 0)]))


@case("gguf-align-3", "llama.cpp#19856", "general.alignment 3", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(extra=[("general.alignment", "u32", 3)]))


@case("gguf-dup-tensor", "llama.cpp#6836 (enforce unique tensor names)", "token_embd.weight twice", "gguf")
def _():
    t = ms.model_tensors("llama", DIM, HID, LAY, HEADS, KVH, len(SPM_TOKENS), "F32")
    return model_gguf(tensors=t + [t[0]])


@case("gguf-dup-key", "llama.cpp#19856 (gguf-py: error on duplicate keys)", "general.architecture twice", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(extra=[("general.architecture", "str", "qwen3")]))


@case("gguf-empty-key", "llama.cpp#24263 (empty key string)", "a key of length 0", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(extra=[("", "u32", 1)]))


@case("gguf-offset-misaligned", "ggml gguf_init_from_file (offset % alignment)", "tensor offset 4", "gguf")
def _():
    b = model_gguf()
    return patch_tensor_offset(b, "output_norm.weight", tensor_offset(b, "output_norm.weight") + 4)


@case("gguf-offset-alias", "llama.cpp#18674 log ('has offset X, expected Y'); the earlier safetensors alias finding", "attn_v at attn_k's offset", "gguf")
def _():
    b = model_gguf()
    return patch_tensor_offset(b, "blk.0.attn_v.weight", tensor_offset(b, "blk.0.attn_k.weight"))


@case("gguf-offset-past-end", "Ollama CVE-2026-7482 (tensor data past the file)", "offset beyond the file", "gguf")
def _():
    b = model_gguf()
    return patch_tensor_offset(b, "output_norm.weight", 2**40)


@case("gguf-ne-zero", "llama.cpp#24263 (ne == 0: SIGFPE)", "ne [0]", "gguf")
def _():
    return raw_gguf(1, b"", tinfo("t", [0]), n_kv=0)


@case("gguf-ne-negative", "ggml-org/ggml#709", "ne [-1]", "gguf")
def _():
    return raw_gguf(1, b"", tinfo("t", [-1]), n_kv=0)


@case("gguf-ne-overflow", "llama.cpp#27203 (ne product overflow)", "ne (INT64_MAX, 2, 1, 1)", "gguf")
def _():
    return raw_gguf(1, b"", tinfo("t", [2**63 - 1, 2, 1, 1]), n_kv=0)


@case("gguf-nbytes-overflow", "llama.cpp#18674 (2^42+1 x stride wraps)", "ne (1152, 2^42+1) Q8_0", "gguf")
def _():
    return raw_gguf(1, b"", tinfo("t", [1152, 2**42 + 1], ggml_type=8), n_kv=0, data=b"\0" * 64)


@case("gguf-ntensors-huge", "ggml-org/ggml#709 (n_tensors overflow)", "tensor_count 2^63", "gguf")
def _():
    return b"GGUF" + struct.pack("<IQQ", 3, 2**63, 0)


@case("gguf-nkv-huge", "ggml-org/ggml#709", "metadata_kv_count 2^63", "gguf")
def _():
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 2**63)


@case("gguf-token-type-u8", "llama.cpp#26690 (token_type of a narrower element type)", "token_type as uint8[]", "gguf")
def _():
    kv = [k for k in spm_kvs() if k[0] != "tokenizer.ggml.token_type"] + [("tokenizer.ggml.token_type", "arr:u8", SPM_TYPES)]
    return model_gguf(kvs=kv)


@case("gguf-scores-u8", "llama.cpp#26690 (scores of a narrower element type)", "scores as uint8[]", "gguf")
def _():
    kv = [k for k in spm_kvs() if k[0] != "tokenizer.ggml.scores"] + [("tokenizer.ggml.scores", "arr:u8", [0] * len(SPM_TOKENS))]
    return model_gguf(kvs=kv)


@case("gguf-scores-short", "llama.cpp vocab: scores/token_type length mismatch", "scores one entry short", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(scores=SPM_SCORES[:-1]))


@case("gguf-token-type-short", "llama.cpp vocab: length mismatch", "token_type one entry short", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(types=SPM_TYPES[:-1]))


@case("gguf-token-type-unknown", "llama.cpp#26690 (token types from the file)", "token_type 99", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(types=SPM_TYPES[:-1] + [99]))


@case("gguf-tokens-not-strings", "llama.cpp vocab (tokens array type)", "tokens as uint32[]", "gguf")
def _():
    kv = [k for k in spm_kvs() if k[0] != "tokenizer.ggml.tokens"] + [("tokenizer.ggml.tokens", "arr:u32", list(range(len(SPM_TOKENS))))]
    return model_gguf(kvs=kv)


@case("gguf-vocab-gt-embd", "llama.cpp check_tensor_dims (token_embd rows = n_vocab)", "262 tokens, token_embd of 200 rows", "gguf+generate")
def _():
    return model_gguf(vocab=200)


@case("gguf-bos-oob", "llama.cpp vocab (special token id out of range)", "bos_token_id 100000", "gguf")
def _():
    kv = [k for k in spm_kvs() if k[0] != "tokenizer.ggml.bos_token_id"] + [("tokenizer.ggml.bos_token_id", "u32", 100000)]
    return model_gguf(kvs=kv)


@case("gguf-eos-none", "llama.cpp writes -1 as u32 for 'none'", "eos_token_id 0xFFFFFFFF (spm)", "gguf")
def _():
    kv = [k for k in spm_kvs() if k[0] != "tokenizer.ggml.eos_token_id"] + [("tokenizer.ggml.eos_token_id", "u32", 0xFFFFFFFF)]
    return model_gguf(kvs=kv)


@case("gguf-merges-malformed", "llama.cpp vocab (merges without a space: GGML_ASSERT)", "merge 'abc'", "gguf")
def _():
    toks = [bytes([b]).decode("latin-1") for b in range(256)]
    kv = [("tokenizer.ggml.model", "str", "gpt2"), ("tokenizer.ggml.tokens", "arr:str", toks), ("tokenizer.ggml.merges", "arr:str", ["abc"])]
    return model_gguf(kvs=kv, vocab=256)


@case("gguf-scores-nan", "llama2.c tokenizer scores NaN (SPM merge order)", "score NaN", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(scores=SPM_SCORES[:-2] + [float("nan"), -2.0]))


@case("gguf-byte-token-bad", "earlier replay", "BYTE token '<0x-1>'", "gguf")
def _():
    toks = list(SPM_TOKENS)
    toks[3] = "<0x-1>"
    return model_gguf(kvs=spm_kvs(tokens=toks))


@case("gguf-bool-2", "ggml gguf (bool values)", "bool value 2", "gguf")
def _():
    return model_gguf(kvs=spm_kvs(extra=[("tokenizer.ggml.add_space_prefix", "u8", 2)])).replace(
        ms.gstr("tokenizer.ggml.add_space_prefix") + struct.pack("<I", 0), ms.gstr("tokenizer.ggml.add_space_prefix") + struct.pack("<I", 7))


@case("gguf-version-4", "ggml gguf (unsupported version)", "version 4", "gguf")
def _():
    return b"GGUF" + struct.pack("<IQQ", 4, 0, 0)


@case("gguf-arch-not-string", "llama.cpp (general.architecture of the wrong type)", "general.architecture u32", "gguf")
def _():
    cfg = [("general.architecture", "u32", 7)] + ms.config_kvs("llama", DIM, HID, LAY, HEADS, KVH)[1:]
    return model_gguf(cfg=cfg)


@case("gguf-ctx-huge", "llama2.c 'seq_len huge' (KV cache sized by the header)", "context_length 2^31-1", "generate")
def _():
    cfg = [k if not k[0].endswith("context_length") else (k[0], "u32", 2**31 - 1) for k in ms.config_kvs("llama", DIM, HID, LAY, HEADS, KVH)]
    return model_gguf(cfg=cfg)


@case("gguf-rope-nan", "config floats (rope freq_base NaN)", "rope.freq_base NaN", "gguf")
def _():
    cfg = [k if not k[0].endswith("freq_base") else (k[0], "f32", float("nan")) for k in ms.config_kvs("llama", DIM, HID, LAY, HEADS, KVH)]
    return model_gguf(cfg=cfg)


@case("gguf-eps-inf", "config floats (rms eps inf)", "layer_norm_rms_epsilon inf", "gguf")
def _():
    cfg = [k if not k[0].endswith("rms_epsilon") else (k[0], "f32", float("inf")) for k in ms.config_kvs("llama", DIM, HID, LAY, HEADS, KVH)]
    return model_gguf(cfg=cfg)


@case("gguf-heads-not-dividing", "llama.cpp hparams (n_head % n_head_kv)", "head_count 2, head_count_kv 3", "gguf")
def _():
    cfg = [k if not k[0].endswith("head_count_kv") else (k[0], "u32", 3) for k in ms.config_kvs("llama", DIM, HID, LAY, HEADS, KVH)]
    return model_gguf(cfg=cfg)


@case("gguf-gpt2-empty-control", "llama.cpp vocab (control/user-defined token with empty text)", "gpt2 vocab, token_type 3 on ''", "gguf")
def _():
    toks = [bytes([b]).decode("latin-1") for b in range(256)] + [""]
    kv = [("tokenizer.ggml.model", "str", "gpt2"), ("tokenizer.ggml.tokens", "arr:str", toks),
          ("tokenizer.ggml.token_type", "arr:i32", [1] * 256 + [3]), ("tokenizer.ggml.merges", "arr:str", [])]
    return model_gguf(kvs=kv, vocab=257)


@case("gguf-shape-mismatch", "llama.cpp check_tensor_dims (tensor shape vs hparams)", "attn_q of [8, 4]", "gguf")
def _():
    t = [(n, ne if n != "blk.0.attn_q.weight" else [DIM, 4], d) for n, ne, d in ms.model_tensors("llama", DIM, HID, LAY, HEADS, KVH, len(SPM_TOKENS), "F32")]
    return model_gguf(tensors=t)


@case("gguf-missing-tensor", "llama.cpp (missing tensor)", "no blk.0.ffn_up.weight", "gguf")
def _():
    t = [x for x in ms.model_tensors("llama", DIM, HID, LAY, HEADS, KVH, len(SPM_TOKENS), "F32") if x[0] != "blk.0.ffn_up.weight"]
    return model_gguf(tensors=t)


@case("gguf-kv-gt-heads", "llama.cpp hparams (n_head_kv > n_head)", "head_count 2, head_count_kv 4", "gguf")
def _():
    cfg = [k if not k[0].endswith("head_count_kv") else (k[0], "u32", 4) for k in ms.config_kvs("llama", DIM, HID, LAY, HEADS, KVH)]
    return model_gguf(cfg=cfg)


@case("gguf-ok", "control: a valid file", "tiny llama + SPM vocab", "gguf+generate")
def _():
    return model_gguf()


# ------------------------------------------------------------------ safetensors
def st_header(h, data=b"", raw=None):
    hs = raw if raw is not None else json.dumps(h).encode()
    return struct.pack("<Q", len(hs)) + hs + data


@case("st-header-len-huge", "huggingface/safetensors (HeaderTooLarge); leejet/stable-diffusion.cpp#1754", "header length 2^63", "safetensors")
def _():
    return struct.pack("<Q", 2**63) + b"{}"


@case("st-header-not-json", "huggingface/safetensors (InvalidHeaderDeserialization)", "header '{a'", "safetensors")
def _():
    return st_header(None, raw=b"{a")


@case("st-header-array", "huggingface/safetensors", "header '[]'", "safetensors")
def _():
    return st_header(None, raw=b"[]")


@case("st-header-not-utf8", "huggingface/safetensors (InvalidHeader: UTF-8)", "a name with byte 0xFF", "safetensors")
def _():
    return st_header(None, raw=b'{"\xff": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', data=b"\0" * 4)


@case("st-dup-key", "huggingface/safetensors (duplicate tensor names)", "tensor 'a' twice, different dtypes", "safetensors")
def _():
    return st_header(None, raw=b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "a": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}}', data=b"\0" * 8)


@case("st-dtype-unknown", "huggingface/safetensors (unknown dtype)", "dtype 'F8_E9M9'", "safetensors")
def _():
    return st_header({"a": {"dtype": "F8_E9M9", "shape": [1], "data_offsets": [0, 1]}}, b"\0")


@case("st-shape-overflow", "huggingface/safetensors (ValidationOverflow)", "shape [2^62, 2^62]", "safetensors")
def _():
    return st_header({"a": {"dtype": "F32", "shape": [2**62, 2**62], "data_offsets": [0, 4]}}, b"\0" * 4)


@case("st-shape-negative", "0xShug0/audio.cpp#138 (negative values)", "shape [-1]", "safetensors")
def _():
    return st_header({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4)


@case("st-offsets-mismatch", "ml-explore/mlx#3363 (offsets vs dtype x shape)", "1000x1000 F32 in 4 bytes", "safetensors")
def _():
    return st_header({"a": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 4]}}, b"\0" * 4)


@case("st-begin-gt-end", "0xShug0/audio.cpp#138, leejet/stable-diffusion.cpp#1754", "data_offsets [8, 4]", "safetensors")
def _():
    return st_header({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}, b"\0" * 8)


@case("st-alias", "the hostile-input review; ohdearquant/lattice#752; antirez/h3.c#48", "k_proj and v_proj both [0, 64)", "safetensors")
def _():
    return st_header({"k_proj.weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]},
                      "v_proj.weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}, b"\0" * 64)


@case("st-trailing", "huggingface/safetensors (MetadataIncompleteBuffer); runai-model-streamer#121", "16 bytes after the last tensor", "safetensors")
def _():
    return st_header({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 20)


@case("st-metadata-not-string", "huggingface/safetensors (__metadata__ is Dict[str, str])", "__metadata__ {'n': 5}", "safetensors")
def _():
    return st_header({"__metadata__": {"n": 5}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4)


@case("st-deep-json", "kekzl/imp#1613 (JSON nested without a depth cap)", "dtype nested 100,000 deep", "safetensors")
def _():
    deep = b"[" * 100000 + b"]" * 100000
    return st_header(None, raw=b'{"a": {"dtype": ' + deep + b', "shape": [1], "data_offsets": [0, 4]}}', data=b"\0" * 4)


@case("st-header-100mb", "huggingface/safetensors (MAX_HEADER_SIZE 100,000,000); runai-model-streamer#121", "a 101 MB header", "safetensors")
def _():
    pad = b" " * 101_000_000
    return st_header(None, raw=b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}' + pad, data=b"\0" * 4)


# ------------------------------------------------------------------ safetensors directories (config.json, index, tokenizer.json)
def llama_dir(d, vocab=16, config_over=None, index=None, tok=None, tok_cfg=None, files=None):
    os.makedirs(d, exist_ok=True)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": DIM, "intermediate_size": HID,
           "num_hidden_layers": LAY, "num_attention_heads": HEADS, "num_key_value_heads": KVH, "vocab_size": vocab,
           "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": True}
    cfg.update(config_over or {})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    hd = DIM // HEADS
    t = [("model.embed_tokens.weight", "F32", [vocab, DIM]), ("model.norm.weight", "F32", [DIM])]
    for l in range(LAY):
        p = f"model.layers.{l}."
        t += [(p + "input_layernorm.weight", "F32", [DIM]), (p + "self_attn.q_proj.weight", "F32", [HEADS * hd, DIM]),
              (p + "self_attn.k_proj.weight", "F32", [KVH * hd, DIM]), (p + "self_attn.v_proj.weight", "F32", [KVH * hd, DIM]),
              (p + "self_attn.o_proj.weight", "F32", [DIM, HEADS * hd]), (p + "post_attention_layernorm.weight", "F32", [DIM]),
              (p + "mlp.gate_proj.weight", "F32", [HID, DIM]), (p + "mlp.up_proj.weight", "F32", [HID, DIM]),
              (p + "mlp.down_proj.weight", "F32", [DIM, HID])]
    body = ms.st(t)
    name = "model.safetensors"
    if index is not None:
        name = "model-00001-of-00001.safetensors"
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            f.write(index if isinstance(index, str) else json.dumps(index))
    with open(os.path.join(d, name), "wb") as f:
        f.write(body)
    if tok is not None:
        with open(os.path.join(d, "tokenizer.json"), "w") as f:
            f.write(tok if isinstance(tok, str) else json.dumps(tok, ensure_ascii=False))
    if tok_cfg is not None:
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            f.write(tok_cfg if isinstance(tok_cfg, str) else json.dumps(tok_cfg))
    for k, v in (files or {}).items():
        with open(os.path.join(d, k), "w") as f:
            f.write(v)


def gpt2_tok(extra_vocab=None, added=None, merges=None):
    v = ms.byte_vocab()
    v["\u0120h"] = 256
    v.update(extra_vocab or {})
    return {"version": "1.0", "normalizer": None, "decoder": {"type": "ByteLevel"},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            "added_tokens": added if added is not None else [{"id": 257, "content": "<|endoftext|>", "special": True}],
            "model": {"type": "BPE", "vocab": v, "merges": merges if merges is not None else ["\u0120 h"]}}


@case("dir-index-escape", "huggingface/transformers sharded index (weight_map paths)", "weight_map -> ../outside.safetensors", "dir")
def _(d):
    llama_dir(d, index={"weight_map": {"model.norm.weight": "../outside.safetensors"}})


@case("dir-index-missing-shard", "huggingface/transformers (missing shard)", "weight_map -> absent file", "dir")
def _(d):
    llama_dir(d, index={"weight_map": {"model.norm.weight": "model-00002-of-00002.safetensors"}})


@case("dir-config-heads-zero", "config.json num_attention_heads 0 (division by zero)", "num_attention_heads 0", "dir")
def _(d):
    llama_dir(d, config_over={"num_attention_heads": 0})


@case("dir-config-rope-negative", "config.json rope_theta negative", "rope_theta -1", "dir")
def _(d):
    llama_dir(d, config_over={"rope_theta": -1.0})


@case("dir-config-ctx-huge", "config.json max_position_embeddings huge (KV cache)", "max_position_embeddings 2^31-1", "dir")
def _(d):
    llama_dir(d, config_over={"max_position_embeddings": 2**31 - 1})


@case("dir-config-deep", "kekzl/imp#1613 (config.json nested without a depth cap)", "hidden_size nested 100,000 deep", "dir")
def _(d):
    llama_dir(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write('{"model_type": "llama", "hidden_size": ' + "[" * 100000 + "]" * 100000 + "}")


@case("dir-tok-added-id-huge", "huggingface/tokenizers (added token ids)", "added token id 2^31-1", "dir")
def _(d):
    llama_dir(d, vocab=300, tok=gpt2_tok(added=[{"id": 2**31 - 1, "content": "<x>", "special": True}]))


@case("dir-tok-added-id-1e8", "huggingface/tokenizers (added token ids)", "added token id 10^8", "dir")
def _(d):
    llama_dir(d, vocab=300, tok=gpt2_tok(added=[{"id": 100_000_000, "content": "<x>", "special": True}]))


@case("dir-tok-vocab-gt-model", "huggingface/transformers (tokenizer larger than the embedding)", "tokenizer 258 ids, embedding 100 rows", "dir")
def _(d):
    llama_dir(d, vocab=100, tok=gpt2_tok())


@case("dir-tok-merge-oov", "huggingface/tokenizers (MergeTokenOutOfVocabulary)", "merge 'q z' of tokens not in the vocab", "dir")
def _(d):
    llama_dir(d, vocab=300, tok=gpt2_tok(merges=["\u0120 h", "qq zz"]))


@case("dir-tok-deep", "kekzl/imp#1613 (tokenizer.json nested without a depth cap)", "normalizer nested 100,000 deep", "dir")
def _(d):
    t = json.dumps(gpt2_tok())
    t = t.replace('"normalizer": null', '"normalizer": ' + "[" * 100000 + "]" * 100000)
    llama_dir(d, vocab=300, tok=t)


@case("dir-tok-config-not-object", "huggingface/transformers tokenizer_config.json", "tokenizer_config.json '[1]'", "dir")
def _(d):
    llama_dir(d, vocab=300, tok=gpt2_tok(), tok_cfg="[1]")


@case("dir-config-kv-gt-heads", "config.json num_key_value_heads > num_attention_heads", "num_key_value_heads 4 of 2", "dir")
def _(d):
    llama_dir(d, config_over={"num_key_value_heads": 4})


@case("dir-config-vocab-mismatch", "transformers (vocab_size vs embed_tokens rows)", "vocab_size 32, embedding 16 rows", "dir")
def _(d):
    llama_dir(d)
    with open(os.path.join(d, "config.json")) as f:
        c = json.load(f)
    c["vocab_size"] = 32
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(c, f)


@case("dir-config-tie-string", "config.json tie_word_embeddings of the wrong type", "tie_word_embeddings \"yes\"", "dir")
def _(d):
    llama_dir(d, config_over={"tie_word_embeddings": "yes"})


@case("dir-config-eps-nan", "config.json rms_norm_eps NaN", "rms_norm_eps NaN", "dir")
def _(d):
    llama_dir(d)
    p = os.path.join(d, "config.json")
    s = open(p).read().replace('"rms_norm_eps": 1e-05', '"rms_norm_eps": NaN')
    open(p, "w").write(s)


@case("dir-tok-vocab-dup-id", "huggingface/tokenizers (two pieces with one id)", "'a' and 'b' both id 97", "dir")
def _(d):
    t = gpt2_tok()
    t["model"]["vocab"]["zz"] = 97
    llama_dir(d, vocab=300, tok=t)


@case("dir-tok-metaspace", "huggingface/tokenizers (SentencePiece-style BPE, Metaspace)", "pre_tokenizer Metaspace", "dir")
def _(d):
    t = gpt2_tok()
    t["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first"}
    llama_dir(d, vocab=300, tok=t)


@case("dir-tok-added-not-list", "transformers tokenizer files (added_tokens of the wrong type)", "added_tokens an object", "dir")
def _(d):
    t = gpt2_tok()
    t["added_tokens"] = {"id": 257, "content": "<|endoftext|>"}
    llama_dir(d, vocab=300, tok=t)


@case("dir-ok", "control: a valid directory", "tiny llama + GPT-2 style tokenizer.json", "dir")
def _(d):
    llama_dir(d, vocab=300, tok=gpt2_tok())


# ------------------------------------------------------------------ llama2.c
def l2c(dim=DIM, hid=HID, lay=LAY, heads=HEADS, kv=KVH, vocab=16, seq=8, body=None, shared=True):
    b = struct.pack("<7i", dim, hid, lay, heads, kv, vocab if shared else -vocab, seq)
    return b + (ms.llama2c_body(dim, hid, lay, heads, kv, vocab, seq, shared) if body is None else body)


@case("l2c-vocab-negative", "karpathy/llama2.c run.c (negative vocab_size: unshared classifier)", "vocab_size -16 with the classifier", "llama2c+generate")
def _():
    return l2c(shared=False)


@case("l2c-dim-zero", "karpathy/llama2.c (dims zero)", "dim 0", "llama2c+generate")
def _():
    return struct.pack("<7i", 0, HID, LAY, HEADS, KVH, 16, 8) + b"\0" * 64


@case("l2c-heads-zero", "karpathy/llama2.c (n_heads 0: division by zero)", "n_heads 0", "llama2c+generate")
def _():
    return struct.pack("<7i", DIM, HID, LAY, 0, KVH, 16, 8) + b"\0" * 64


@case("l2c-short", "karpathy/llama2.c#502 ('failed read': file shorter than the weights)", "legacy header, half the weights", "llama2c+generate")
def _():
    b = l2c()
    return b[:len(b) // 2]


@case("l2c-seq-huge-v1", "karpathy/llama2.c (seq_len drives the KV cache)", "ak42 v1, seq_len 2^22, dim 64, 4 layers", "generate")
def _():
    dim, hid, lay, heads, kv, vocab, seq = 64, 64, 4, 4, 4, 16, 1 << 22
    hdr = struct.pack("<Ii7iB", 0x616B3432, 1, dim, hid, lay, heads, kv, vocab, seq, 1)
    hdr += b"\0" * (256 - len(hdr))
    hd = dim // heads
    n = lay * dim * 2 + dim + vocab * dim + lay * (dim * dim * 2 + 2 * dim * kv * hd + 3 * dim * hid)
    return hdr + b"\0" * (4 * n)


def tokbin(max_len, entries):
    b = struct.pack("<i", max_len)
    for score, piece in entries:
        b += struct.pack("<fi", score, len(piece)) + piece
    return b


TOK8 = [(0.0, b"<unk>"), (0.0, b"\n<s>\n"), (0.0, b"\n</s>\n"), (0.0, b"<0x0A>"), (-1.0, b" a"), (-2.0, b"b"), (-0.5, b" ab"), (-3.0, b"\xc3\xa9")]


@case("tok-maxlen-negative", "karpathy/llama2.c tokenizer.bin (max_token_length)", "max_token_length -1", "llama2c_tokenizer")
def _():
    return tokbin(-1, TOK8)


@case("tok-len-negative", "karpathy/llama2.c tokenizer.bin (token length)", "token length -5", "llama2c_tokenizer")
def _():
    return struct.pack("<i", 8) + struct.pack("<fi", 0.0, -5)


@case("tok-len-huge", "karpathy/llama2.c tokenizer.bin (token length)", "token length 2^31-1", "llama2c_tokenizer")
def _():
    return struct.pack("<i", 2**31 - 1) + struct.pack("<fi", 0.0, 2**31 - 1) + b"x"


@case("tok-score-nan", "karpathy/llama2.c tokenizer.bin (scores NaN)", "score of ' ab' NaN", "llama2c_tokenizer")
def _():
    e = list(TOK8)
    e[6] = (float("nan"), b" ab")
    return tokbin(8, e)


@case("tok-truncated", "karpathy/llama2.c#502, #263 (vocab_size larger than the file)", "vocab 512 asked, 8 entries", "llama2c_tokenizer")
def _():
    return tokbin(8, TOK8[:5])


# ------------------------------------------------------------------ chat templates (Jinja)
@case("jinja-macro-recursion", "llama.cpp#19085, #26387 (recursive macro)", "{% macro x() %}{{ x() }}{% endmacro %}", "jinja")
def _():
    return b"{% macro x() %}{{ x() }}{% endmacro %}{{ x() }}"


@case("jinja-deep-parens", "llama.cpp#26387, #19087 (parser recursion)", "{{ ((((...1...)))) }} 100,000 deep", "jinja")
def _():
    return b"{{ " + b"(" * 100000 + b"1" + b")" * 100000 + b" }}"


@case("jinja-deep-not", "llama.cpp#26387 (parser recursion)", "{{ not not ... 1 }} 100,000 deep", "jinja")
def _():
    return b"{{ " + b"not " * 100000 + b"1 }}"


@case("jinja-deep-if", "llama.cpp#26387 (block nesting recursion)", "{% if %} nested 20,000 deep", "jinja")
def _():
    return b"{% if true %}" * 20000 + b"x" + b"{% endif %}" * 20000


@case("jinja-deep-list", "llama.cpp#26387 (parser recursion)", "[[[[...]]]] 100,000 deep", "jinja")
def _():
    return b"{{ " + b"[" * 100000 + b"]" * 100000 + b" }}"


@case("jinja-range-huge", "llama.cpp#24140 (range() materialisation)", "range(1000000000)", "jinja")
def _():
    return b"{% for i in range(1000000000) %}x{% endfor %}"


@case("jinja-nested-loops", "deepset-ai/haystack#9402, vllm#52025 (nested loops, no budget)", "two nested range(100000) loops", "jinja")
def _():
    return b"{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"


@case("jinja-string-doubling", "string blow-up (doubling)", "s = s ~ s, 64 times", "jinja")
def _():
    return b"{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}"


@case("jinja-list-doubling", "value blow-up (list doubling)", "a = [a, a], 64 times", "jinja")
def _():
    return b"{% set ns = namespace(a=[1]) %}{% for i in range(64) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a | length }}"


@case("jinja-string-mul", "string multiplication blow-up", "'x' * 1000000000", "jinja")
def _():
    return b"{{ 'x' * 1000000000 }}"


@case("jinja-int-overflow", "integer overflow (UB)", "9223372036854775807 + 1", "jinja")
def _():
    return b"{{ 9223372036854775807 + 1 }}"


@case("jinja-int-mul-overflow", "integer overflow (UB)", "4611686018427387904 * 4", "jinja")
def _():
    return b"{{ 4611686018427387904 * 4 }}"


@case("jinja-llmin-mod", "INT64_MIN % -1 (SIGFPE)", "(-9223372036854775807 - 1) % -1", "jinja")
def _():
    return b"{{ (-9223372036854775807 - 1) % -1 }}"


@case("jinja-float-to-int", "float to int out of range (UB)", "99999999999999999999.0 | int", "jinja")
def _():
    return b"{{ 99999999999999999999.0 | int }}"


@case("jinja-float-range", "float to int out of range (UB)", "range(99999999999999999999.0)", "jinja")
def _():
    return b"{{ range(99999999999999999999.0) | length }}"


@case("jinja-llmin-floordiv", "INT64_MIN // -1 (overflow)", "(-9223372036854775807 - 1) // -1", "jinja")
def _():
    return b"{{ (-9223372036854775807 - 1) // -1 }}"


@case("jinja-range-step-overflow", "range() whose i += step overflows (UB)", "range(9223372036854775800, 9223372036854775807, 100)", "jinja")
def _():
    return b"{{ range(9223372036854775800, 9223372036854775807, 100) | length }}"


@case("jinja-tojson-indent", "tojson(indent=huge)", "tojson(indent=2000000000)", "jinja")
def _():
    return b"{{ messages | tojson(indent=2000000000) }}"


@case("jinja-runtime-deep", "value nested 100,000 deep at run time (printing recurses)", "a = [a] 100,000 times, printed", "jinja")
def _():
    return b"{% set ns = namespace(a=1) %}{% for i in range(100000) %}{% set ns.a = [ns.a] %}{% endfor %}{{ ns.a }}"


@case("jinja-replace-blowup", "replace() blow-up", "'a' * 4096 .replace('a', 16 KiB)", "jinja")
def _():
    return (b"{% set ns = namespace(s='a', t='b') %}{% for i in range(12) %}{% set ns.s = ns.s ~ ns.s %}{% set ns.t = ns.t ~ ns.t %}{% endfor %}"
            b"{% for i in range(2) %}{% set ns.t = ns.t ~ ns.t %}{% endfor %}{{ ns.s.replace('a', ns.t) }}")


@case("jinja-join-blowup", "join() blow-up", "range(100) | join(1 MiB separator)", "jinja")
def _():
    return b"{% set ns = namespace(t='b') %}{% for i in range(20) %}{% set ns.t = ns.t ~ ns.t %}{% endfor %}{{ range(100) | join(ns.t) }}"


@case("jinja-ok", "control: a real template", "qwen2.5-style loop", "jinja")
def _():
    return b"{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


# ------------------------------------------------------------------ runner
def classify(rc, out):
    tail = out.strip().splitlines()
    msg = ""
    for line in reversed(tail):
        if "rejected:" in line or "error" in line.lower():
            msg = line.strip()
            break
    if rc == 124 or rc == -9 and "timeout" in out:
        return "HANG (30 s)", msg
    if "bad_alloc" in out or "out of memory" in out.lower():
        return "OUT OF MEMORY", msg
    if rc < 0 or rc >= 128 or "AddressSanitizer" in out or "runtime error" in out or "terminate called" in out:
        return "CRASH rc=%d" % rc, (tail[-1] if tail else "")
    if "rejected:" in out:
        return "typed error", msg.split("rejected: ", 1)[-1]
    if rc == 0:
        return "accepted", ""
    return "error rc=%d" % rc, msg


def run(cmd, env=None):
    full = ["timeout", "-s", "KILL", "30", "prlimit", "--as=%d" % (4 << 30)] + cmd
    p = subprocess.run(full, capture_output=True, text=True, errors="replace", env=env)
    rc = p.returncode
    if rc == -9 or rc == 137:
        rc = 124
    return rc, p.stdout + p.stderr


def main():
    replay = os.path.join(BUILD, "fuzz", "atlas_fuzz_replay")
    bench = os.path.join(BUILD, "tools", "atlas-bench")
    env = dict(os.environ, ATLAS_FUZZ_VERBOSE="1")
    shutil.rmtree(OUT, ignore_errors=True)
    for cid, source, what, target, fn in CASES:
        if ONLY and not any(cid.startswith(p) for p in ONLY):
            continue
        d = os.path.join(OUT, cid)
        results = []
        if target in ("dir",):
            fn(os.path.join(d, "model"))
            rc, out = run([bench, "generate", "--model", os.path.join(d, "model"), "--prompt", "hi", "--max-tokens", "2"])
            if rc == 0:
                results.append(("generate", "accepted", ""))
            else:
                kind, msg = classify(rc, out)
                results.append(("generate", kind if kind != "error rc=1" else "typed error", out.strip().splitlines()[-1] if out.strip() else ""))
        else:
            data = fn()
            harness = target.split("+")[0]
            if harness != "generate":
                os.makedirs(os.path.join(d, harness), exist_ok=True)
                with open(os.path.join(d, harness, "input"), "wb") as f:
                    f.write(data)
                rc, out = run([replay, d, harness], env)
                results.append((harness,) + classify(rc, out))
            if target.endswith("generate"):
                ext = ".gguf" if data[:4] == b"GGUF" else ".bin"
                os.makedirs(d, exist_ok=True)
                p = os.path.join(d, "model" + ext)
                with open(p, "wb") as f:
                    f.write(data)
                rc, out = run([bench, "generate", "--model", p, "--prompt", "hi", "--max-tokens", "2"])
                if rc == 0:
                    results.append(("generate", "accepted", ""))
                else:
                    kind, msg = classify(rc, out)
                    results.append(("generate", kind if kind != "error rc=1" else "typed error", out.strip().splitlines()[-1] if out.strip() else ""))
        for via, kind, msg in results:
            print(f"{cid:28} {via:18} {kind:14} {msg[:220]}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
