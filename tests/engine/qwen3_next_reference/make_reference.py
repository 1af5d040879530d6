#!/usr/bin/env python3
"""Hugging Face reference for the engine's Qwen3-Next CPU forward pass.

Builds a random-init Qwen3NextForCausalLM (transformers >= 5) with the dimensions of the
engine's `qwen3-next-tiny` preset, fills every weight with the engine's deterministic generator
(engine/formats/qwen3_next_tensors.cpp: per-tensor splitmix64 stream keyed by the FNV-1a 64 hash
of the Hugging Face tensor name, power-of-two scales), runs it in float32 on the CPU and writes
  reference.json: per prompt the prompt ids, the last-position logits (float32 LE, base64),
                  128 greedy tokens (each step fed back: teacher forcing for the engine's test)
                  and HF's top-1 minus top-2 logit margin per step;
  config.json:    the config.json HF's save_pretrained writes for this model.
The engine's test builds `preset:qwen3-next-tiny@17` (same values) and compares.

Usage: python3 make_reference.py OUT_DIR [VARIANT]
VARIANT "tiny" (default) is the preset's config; "variant" changes what the preset cannot show:
norm_topk_prob false, a dense SwiGLU layer (mlp_only_layers [5]) and a layer_types list that no
full_attention_interval gives. Its files are reference-variant.json / config-variant.json.
"""
import base64
import json
import os
import sys

import numpy as np
import torch

SEED = 17
VOCAB = 512
PROMPT_LENGTHS = [7, 70, 150]  # none a multiple of the GDN chunk (64)
GENERATE = 128

M64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def splitmix64_np(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h ^= b
        h = (h * 0x100000001B3) & M64
    return h


def init_kind(name):
    if name.endswith("embed_tokens.weight"):
        return "embedding"
    if name.endswith("linear_attn.norm.weight"):
        return "norm"
    if name.endswith(("layernorm.weight", "model.norm.weight", "q_norm.weight", "k_norm.weight")):
        return "zero_centred_norm"
    if name.endswith("A_log"):
        return "a_log"
    if name.endswith("dt_bias"):
        return "dt_bias"
    return "matrix"


def values(name, shape):
    """The engine's qwen3_next_random_values for HF tensor `name` of `shape` (HF value space)."""
    kind = init_kind(name)
    offset, scale = 0.0, 1.0
    if kind == "matrix":
        lg = int(shape[-1]).bit_length() - 1
        scale = 2.0 ** -(lg // 2)
    elif kind == "zero_centred_norm":
        scale = 0.125
    elif kind == "norm":
        offset, scale = 1.0, 0.125
    elif kind == "a_log":
        offset, scale = -1.0, 0.5
    elif kind == "dt_bias":
        offset, scale = 1.0, 0.25
    n = int(np.prod(shape))
    stream = splitmix64(SEED ^ fnv1a64(name))
    with np.errstate(over="ignore"):
        bits = splitmix64_np(np.uint64(stream) + np.arange(n, dtype=np.uint64))
    u = ((bits >> np.uint64(40)).astype(np.int64) - (1 << 23)).astype(np.float32) * np.float32(2.0 ** -23)
    v = np.float32(offset) + np.float32(scale) * u  # scale is a power of two: the product is exact
    return torch.from_numpy(v.astype(np.float32).reshape(shape))


def main():
    out_dir = sys.argv[1]
    variant = sys.argv[2] if len(sys.argv) > 2 else "tiny"
    suffix = "" if variant == "tiny" else "-" + variant
    os.makedirs(out_dir, exist_ok=True)
    from transformers import Qwen3NextConfig, Qwen3NextForCausalLM
    import transformers

    torch.manual_seed(0)
    cfg = Qwen3NextConfig(
        vocab_size=VOCAB, hidden_size=256, intermediate_size=5632, num_hidden_layers=8,
        num_attention_heads=4, num_key_value_heads=1, head_dim=128, hidden_act="silu",
        max_position_embeddings=4096, rms_norm_eps=1e-6, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25},
        attention_bias=False, linear_conv_kernel_dim=4, linear_key_head_dim=64, linear_value_head_dim=64,
        linear_num_key_heads=4, linear_num_value_heads=8, decoder_sparse_step=1, moe_intermediate_size=64,
        shared_expert_intermediate_size=64, num_experts_per_tok=4, num_experts=32, norm_topk_prob=True,
        mlp_only_layers=[], full_attention_interval=4, dtype="float32")
    if variant == "variant":
        cfg.norm_topk_prob = False
        cfg.mlp_only_layers = [5]
        cfg.intermediate_size = 96
        cfg.layer_types = ["linear_attention", "full_attention", "linear_attention", "linear_attention",
                           "full_attention", "linear_attention", "linear_attention", "full_attention"]
    elif variant != "tiny":
        raise SystemExit("unknown variant " + variant)
    cfg._attn_implementation = "eager"
    model = Qwen3NextForCausalLM(cfg).to(torch.float32).eval()
    print("transformers", transformers.__version__, "torch", torch.__version__)
    print("layer_types", cfg.layer_types)
    print("rope", getattr(cfg, "rope_parameters", None))

    # Fill every parameter from the engine's generator (fused expert tensors from per-expert ones).
    sd = model.state_dict()
    filled = 0
    with torch.no_grad():
        for name, p in sd.items():
            if name.endswith("mlp.experts.gate_up_proj"):
                base = name[: -len("gate_up_proj")]
                E, two_i, d = p.shape
                i = two_i // 2
                for e in range(E):
                    p[e, :i] = values(f"{base}{e}.gate_proj.weight", (i, d))
                    p[e, i:] = values(f"{base}{e}.up_proj.weight", (i, d))
            elif name.endswith("mlp.experts.down_proj"):
                base = name[: -len("down_proj")]
                E, d, i = p.shape
                for e in range(E):
                    p[e] = values(f"{base}{e}.down_proj.weight", (d, i))
            else:
                p.copy_(values(name, tuple(p.shape)))
            filled += 1
    print("filled", filled, "tensors;", sum(p.numel() for p in model.parameters()), "parameters")

    model.save_pretrained(os.path.join(out_dir, "hf_model" + suffix))
    rng = np.random.RandomState(1234)
    cases = []
    for length in PROMPT_LENGTHS:
        prompt = [int(t) for t in rng.randint(0, VOCAB, size=length)]
        with torch.no_grad():
            out = model(torch.tensor([prompt]), use_cache=True, output_router_logits=True)
            routing = routing_fingerprint(getattr(out, "router_logits", None), model.config.num_experts_per_tok)
            past = out.past_key_values
            logits = out.logits[0, -1].float()
            last_logits = logits.numpy().astype("<f4")
            tokens, margins = [], []
            for _ in range(GENERATE):
                top2 = torch.topk(logits, 2)
                tok = int(top2.indices[0])
                tokens.append(tok)
                margins.append(float(top2.values[0] - top2.values[1]))
                out = model(torch.tensor([[tok]]), past_key_values=past, use_cache=True)
                past = out.past_key_values
                logits = out.logits[0, -1].float()
        case = {"prompt": prompt}
        if routing is not None:
            case["routing_fingerprint_prompt"] = "0x%016x" % routing
        cases.append({**case,
                      "last_logits_f32_b64": base64.b64encode(last_logits.tobytes()).decode(),
                      "greedy": tokens,
                      "margins": [round(m, 6) for m in margins]})
        print("prompt", length, "greedy[:16]", tokens[:16], "min margin", min(margins))

    ref = {"made_by": "tests/engine/qwen3_next_reference/make_reference.py",
           "transformers": transformers.__version__, "torch": torch.__version__,
           "preset": "qwen3-next-tiny" if variant == "tiny" else None, "variant": variant, "seed": SEED, "cases": cases}
    with open(os.path.join(out_dir, "reference" + suffix + ".json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    with open(os.path.join(out_dir, "hf_model" + suffix, "config.json")) as f:
        hf_cfg = json.load(f)
    with open(os.path.join(out_dir, "config" + suffix + ".json"), "w") as f:
        json.dump(hf_cfg, f, indent=1, sort_keys=True)
    if variant != "tiny":
        return
    # The shapes HF saved, for checking the engine's HF loader names.
    from safetensors import safe_open
    names = {}
    for fn in sorted(os.listdir(os.path.join(out_dir, "hf_model"))):
        if fn.endswith(".safetensors"):
            with safe_open(os.path.join(out_dir, "hf_model", fn), "pt") as st:
                for k in st.keys():
                    names[k] = list(st.get_slice(k).get_shape())
    with open(os.path.join(out_dir, "saved_tensor_names.json"), "w") as f:
        json.dump(names, f, indent=0, sort_keys=True)


def routing_fingerprint(router_logits, k):
    """The engine's routing fingerprint (engine/routing_fingerprint.hpp) of one forward, from
    HF's router logits (one [tokens, experts] tensor per moe layer, in layer order): per layer
    h = (h ^ (id + 1)) * FNV prime over the rows in token order and each row's top-k ids
    highest-probability first; the layers combined by the same step. None when HF returned no
    router logits."""
    if not router_logits:
        print("warning: no router_logits returned: the reference gets no routing fingerprint")
        return None
    prime, mask = 0x100000001B3, (1 << 64) - 1
    model_hash = 0
    for logits in router_logits:
        ids = torch.topk(torch.softmax(logits.float(), dim=-1), k, dim=-1).indices
        h = 0
        for row in ids.reshape(-1, k).tolist():
            for e in row:
                h = ((h ^ (e + 1)) * prime) & mask
        model_hash = ((model_hash ^ h) * prime) & mask
    return model_hash


if __name__ == "__main__":
    main()
