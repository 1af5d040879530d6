#!/usr/bin/env python3
"""Hugging Face reference for the CUDA backend's bf16 parity test.

Saves randomly initialised Qwen3 models (tiny dims and Qwen3-0.6B dims) with save_pretrained
(safetensors, bf16 weights) and, for each, reference.json: the last-position logits of a fixed
prompt and 128 greedy tokens with each step's top-2 logit margin, computed by transformers in
float32 on the CPU (no TF32 anywhere) on those same bf16 weights (upcast exactly).

    python3 tests/gpu/hf_reference.py OUT_DIR [--only tiny]

tests/gpu/cuda_backend_parity_test.cpp reads OUT_DIR from ATLAS_HF_REF_DIR (required on a GPU machine).
"""
import json
import os
import sys

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

PROMPT = [(i * 7919 + 13) % 1000 for i in range(16)]
NEW_TOKENS = 128

CONFIGS = {
    "tiny": dict(vocab_size=1024, hidden_size=128, intermediate_size=344, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=64, max_position_embeddings=512,
                 rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=False, initializer_range=0.1),
    "qwen3-0.6b": dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                       rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, initializer_range=0.02),
}


def make(name, out_dir, device):
    torch.manual_seed(1234)
    spec = CONFIGS[name]
    cfg = Qwen3Config(**spec)
    # transformers 5 keeps RoPE settings in rope_parameters; make sure theta is the one asked for.
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict):
        rp["rope_theta"] = spec["rope_theta"]
    cfg.use_cache = True
    model = Qwen3ForCausalLM(cfg).to(torch.bfloat16)
    path = os.path.join(out_dir, name)
    model.save_pretrained(path, safe_serialization=True)
    # The engine reads the top-level rope_theta (transformers 4 layout); write it in any case.
    with open(os.path.join(path, "config.json")) as f:
        saved = json.load(f)
    saved["rope_theta"] = spec["rope_theta"]
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(saved, f, indent=2)
    # Reference in float32 on exactly the saved bf16 values, from a fresh load: casting the live
    # model to bf16 and back would also have rounded its RoPE inv_freq buffer to bf16 (seen: a
    # 1.6e-3 relative logit error against an exact float32 engine).
    try:
        model = Qwen3ForCausalLM.from_pretrained(path, dtype=torch.float32)
    except TypeError:
        model = Qwen3ForCausalLM.from_pretrained(path, torch_dtype=torch.float32)
    model = model.to(device).eval()
    ids = torch.tensor([PROMPT], device=device)
    with torch.no_grad():
        logits = model(ids).logits[0, -1].float().cpu()
        tokens, margins = [], []
        past = None
        cur = ids
        for _ in range(NEW_TOKENS):
            out = model(cur, past_key_values=past, use_cache=True)
            past = out.past_key_values
            last = out.logits[0, -1].float()
            top2 = torch.topk(last, 2)
            tok = int(top2.indices[0])
            tokens.append(tok)
            margins.append(float(top2.values[0] - top2.values[1]))
            cur = torch.tensor([[tok]], device=device)
    rot = model.model.rotary_emb
    print(f"{name}: rope {getattr(cfg, 'rope_parameters', None)} rope_theta attr {getattr(cfg, 'rope_theta', None)} "
          f"inv_freq[:3] {rot.inv_freq[:3].tolist()} eps {cfg.rms_norm_eps}")
    # Diagnostics: the same weights under nearby conventions, so a mismatch names its cause.
    variants = {}
    if name == "tiny":
        sd = model.state_dict()
        for vname, changes in {"theta_1e4": {"rope_theta": 10000.0}, "eps_1e-5": {"rms_norm_eps": 1e-5}}.items():
            vspec = dict(spec, **changes)
            vcfg = Qwen3Config(**vspec)
            vrp = getattr(vcfg, "rope_parameters", None)
            if isinstance(vrp, dict):
                vrp["rope_theta"] = vspec["rope_theta"]
            vm = Qwen3ForCausalLM(vcfg).to(torch.float32)
            vm.load_state_dict(sd)
            vm.eval()
            with torch.no_grad():
                variants[vname] = vm(ids).logits[0, -1].float().tolist()
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump({"prompt_ids": PROMPT, "last_logits": logits.tolist(), "greedy_tokens": tokens,
                   "top2_margins": margins, "transformers_dtype": "float32 on bf16 weights",
                   "variants": variants}, f)
    print(f"{name}: saved to {path}; first tokens {tokens[:8]}; min margin {min(margins):.4g}")


def main():
    out_dir = sys.argv[1]
    only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--only" else None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # The CPU: float32 matrix products there never use TF32 (a GPU reference may, ~1e-3 error).
    device = "cpu"
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    os.makedirs(out_dir, exist_ok=True)
    for name in CONFIGS:
        if only is None or name == only:
            make(name, out_dir, device)


if __name__ == "__main__":
    main()
