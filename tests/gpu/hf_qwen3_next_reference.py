#!/usr/bin/env python3
"""Hugging Face reference for the CUDA backend's Qwen3-Next bf16 parity test.

Reads a Qwen3-Next directory (config.json + model.safetensors, bf16) that atlas-bench wrote
(`atlas-bench make-model --preset qwen3-next-tiny --format safetensors --dtype bf16 --out DIR`),
loads it with transformers' Qwen3NextForCausalLM in float32 on the CPU (the bf16 values upcast
exactly; no TF32), and writes DIR/reference.json: the last-position logits of a fixed prompt and
NEW_TOKENS greedy tokens, each step's top-2 logit margin and the smallest gap between the k-th
and (k+1)-th router probability of any moe layer at that step, and every step's logits (torch.topk promises no order on
ties, so the C++ test skips steps whose routing is that close); and, as the yardstick for a bf16
engine, the relative L2 of transformers' own bfloat16 logits against those float32 ones.

    python3 tests/gpu/hf_qwen3_next_reference.py DIR

tests/gpu/cuda_hybrid_test.cpp reads DIR from ATLAS_HF_QWEN3_NEXT_DIR.
"""
import json
import os
import sys

import torch
from transformers import Qwen3NextForCausalLM

PROMPT = [(i * 7919 + 13) % 500 for i in range(16)]
NEW_TOKENS = 48


def main():
    path = sys.argv[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    try:
        model = Qwen3NextForCausalLM.from_pretrained(path, dtype=torch.float32)
    except TypeError:
        model = Qwen3NextForCausalLM.from_pretrained(path, torch_dtype=torch.float32)
    model = model.eval()
    k = model.config.num_experts_per_tok
    gaps = []

    def hook(_module, _inputs, output):
        # The router's logits for the last position: the k-th vs (k+1)-th probability.
        logits = output[0] if isinstance(output, tuple) else output
        assert logits.shape[-1] == model.config.num_experts, f"router output {tuple(logits.shape)} is not [tokens, experts]"
        p = torch.softmax(logits[-1].float(), dim=-1)
        top = torch.topk(p, k + 1).values
        gaps.append(float(top[k - 1] - top[k]))

    handles = [m.register_forward_hook(hook) for name, m in model.named_modules() if name.endswith("mlp.gate")]
    # Without a hook on every router the tie check would pass every step silently.
    assert len(handles) == model.config.num_hidden_layers, f"{len(handles)} router hooks for {model.config.num_hidden_layers} moe layers"
    ids = list(PROMPT)
    tokens, margins, route_gaps, step_logits = [], [], [], []
    with torch.no_grad():
        logits0 = None
        for step in range(NEW_TOKENS):
            # No cache: the whole sequence each step (tiny model), so the reference does not
            # depend on transformers' hybrid cache.
            gaps.clear()
            out = model(torch.tensor([ids])).logits[0, -1].float()
            if logits0 is None:
                logits0 = out.tolist()
            step_logits.append(out.tolist())
            top2 = torch.topk(out, 2)
            tok = int(top2.indices[0])
            tokens.append(tok)
            margins.append(float(top2.values[0] - top2.values[1]))
            route_gaps.append(min(gaps) if gaps else 1.0)
            ids.append(tok)
    for h in handles:
        h.remove()
    # The yardstick for a bf16 implementation: transformers itself in bfloat16 (on the GPU when
    # there is one), teacher-forced on the same tokens, against its float32 logits above. A bf16
    # engine cannot be expected closer to float32 than the reference's own bf16 run.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    bf = model.to(device=device, dtype=torch.bfloat16)
    bf16_rel = []
    with torch.no_grad():
        seq = list(PROMPT)
        for step in range(NEW_TOKENS):
            out = bf(torch.tensor([seq], device=device)).logits[0, -1].float().cpu()
            want = torch.tensor(step_logits[step])
            bf16_rel.append(float(torch.linalg.vector_norm(out - want) / torch.linalg.vector_norm(want)))
            seq.append(tokens[step])
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump({"prompt_ids": PROMPT, "last_logits": logits0, "greedy_tokens": tokens, "top2_margins": margins,
                   "min_router_gaps": route_gaps, "step_logits": step_logits, "transformers_dtype": "float32 on bf16 weights",
                   "hf_bf16_rel_l2": bf16_rel, "hf_bf16_device": device}, f)
    print(f"saved {path}/reference.json; hooks on {len(handles)} routers; first tokens {tokens[:8]}; "
          f"min margin {min(margins):.4g}; min router gap {min(route_gaps):.3g}; transformers bf16 ({device}) vs float32: "
          f"relative L2 prompt {bf16_rel[0]:.4g}, median {sorted(bf16_rel)[len(bf16_rel) // 2]:.4g}, max {max(bf16_rel):.4g}")


if __name__ == "__main__":
    main()
