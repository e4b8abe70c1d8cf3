"""The config.json of every draft the reference tooling makes, in the layouts vLLM / speculators load, and
their initial tensors. All drafts read the same captured target layers, so one capture serves them all:
aux ids 1, 3, 5 (the residual stream entering those layers of the 6-layer target) plus 6, the last layer's
output, which the capture keeps for the target head."""
import numpy as np
import torch

from target import TargetConfig

TARGET = TargetConfig()
AUX_IDS = [1, 3, 5]
CAPTURE_IDS = AUX_IDS + [TARGET.num_hidden_layers]
MASK_TOKEN = 3
K = 4  # proposals per verify cycle the drafts are trained and evaluated at
EAGLE3_DRAFT_VOCAB = 1024
MARKOV_RANK = 64
DRAFT_LAYERS = 2


def _layer_fields(layers: int) -> dict:
    t = TARGET
    return {"hidden_size": t.hidden_size, "num_hidden_layers": layers, "num_attention_heads": t.num_attention_heads,
            "num_key_value_heads": t.num_key_value_heads, "head_dim": t.head_dim,
            "intermediate_size": t.intermediate_size, "vocab_size": t.vocab_size, "rms_norm_eps": t.rms_norm_eps,
            "hidden_act": "silu", "max_position_embeddings": t.max_position_embeddings, "rope_theta": t.rope_theta,
            "attention_bias": False, "tie_word_embeddings": False}


def eagle3() -> dict:
    c = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama"}
    c.update(_layer_fields(1))
    c.update({"draft_vocab_size": EAGLE3_DRAFT_VOCAB, "target_hidden_size": TARGET.hidden_size,
              "eagle_config": {"use_aux_hidden_state": True, "eagle_aux_hidden_state_layer_ids": AUX_IDS},
              "norm_before_residual": False, "target_num_hidden_layers": TARGET.num_hidden_layers,
              "torch_dtype": "bfloat16"})
    return c


def qwen3_dflash() -> dict:
    c = {"architectures": ["DFlashDraftModel"], "model_type": "qwen3"}
    c.update(_layer_fields(DRAFT_LAYERS))
    c.update({"block_size": K + 1, "torch_dtype": "bfloat16",
              "dflash_config": {"mask_token_id": MASK_TOKEN, "target_layer_ids": [i - 1 for i in AUX_IDS],
                                "num_target_layers": TARGET.num_hidden_layers}})
    return c


def dspark() -> dict:
    layer = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}
    layer.update(_layer_fields(DRAFT_LAYERS))
    return {"architectures": ["DSparkSpeculator"], "speculators_model_type": "dspark",
            "transformer_layer_config": layer, "draft_vocab_size": TARGET.vocab_size, "block_size": K,
            "target_hidden_size": TARGET.hidden_size, "aux_hidden_state_layer_ids": AUX_IDS,
            "mask_token_id": MASK_TOKEN, "sliding_window_non_causal": True, "sample_from_anchor": True,
            "markov_rank": MARKOV_RANK, "markov_head_type": "vanilla", "enable_confidence_head": False,
            "speculators_config": {"algorithm": "dspark",
                                   "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": K}],
                                   "default_proposal_method": "greedy",
                                   "verifier": {"name_or_path": "sparkulator/tiny-stdlib-target",
                                                "architectures": ["LlamaForCausalLM"]}},
            "speculators_version": "0.3.0", "torch_dtype": "bfloat16"}


def laguna_dflash() -> dict:
    """Untrained (seeded random weights), for the forward checks: mixed layer types, a sliding window
    shorter than the captured context, per-type RoPE and partial rotary."""
    c = {"architectures": ["DFlashLagunaForCausalLM"], "model_type": "laguna"}
    c.update(_layer_fields(3))
    c.update({"draft_vocab_size": TARGET.vocab_size, "layer_types": ["sliding_attention", "full_attention",
                                                                     "sliding_attention"],
              "sliding_window": 64, "gating": "per-head", "partial_rotary_factor": 0.5,
              "rope_parameters": {"rope_theta": 500000.0, "rope_type": "default"},
              "swa_rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
              "dflash_config": {"block_size": K + 1, "mask_token_id": MASK_TOKEN, "num_target_layers": 6,
                                "target_layer_ids": [i - 1 for i in AUX_IDS], "causal": False},
              "torch_dtype": "bfloat16"})
    return c


def _normal(shape, std, gen):
    return torch.randn(*shape, generator=gen) * std


def initial_tensors(config: dict, family: str, target_tensors: dict, counts: np.ndarray, seed: int) -> dict:
    """Block drafts start from the target's last layers, EAGLE-3's o_proj and MLP from its last layer; fc
    starts as the identity on the last aux slice (the draft first sees the target's own stream)."""
    gen = torch.Generator().manual_seed(seed)
    t = TARGET
    H = t.hidden_size
    out = {}
    src = lambda layer, name: target_tensors[f"model.layers.{layer}.{name}"].float().clone()
    fc = torch.zeros(H, len(AUX_IDS) * H)
    fc[:, -H:] = torch.eye(H)
    out["fc.weight"] = fc + _normal(fc.shape, 0.002, gen)
    ones = lambda n: torch.ones(n)
    if family == "eagle3":
        p = "midlayer"
        for name in ("q_proj", "k_proj", "v_proj"):
            w = src(t.num_hidden_layers - 1, f"self_attn.{name}.weight")
            out[f"{p}.self_attn.{name}.weight"] = torch.cat([w * 0.5, w * 0.5], dim=1)
        for name in ("self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
            out[f"{p}.{name}.weight"] = src(t.num_hidden_layers - 1, f"{name}.weight")
        for name in ("input_layernorm", "hidden_norm", "post_attention_layernorm"):
            out[f"{p}.{name}.weight"] = ones(H)
        out["norm.weight"] = target_tensors["model.norm.weight"].float().clone()
        # Draft vocabulary: the most frequent training tokens, in target-id order (d2t = target − draft).
        keep = np.sort(np.argsort(-counts, kind="stable")[:EAGLE3_DRAFT_VOCAB])
        out["lm_head.weight"] = target_tensors["lm_head.weight"].float()[torch.from_numpy(keep)].clone()
        out["d2t"] = torch.from_numpy(keep - np.arange(len(keep))).to(torch.int64)
        t2d = torch.zeros(t.vocab_size, dtype=torch.bool)
        t2d[torch.from_numpy(keep)] = True
        out["t2d"] = t2d
        return out
    layers = config.get("transformer_layer_config", config)["num_hidden_layers"]
    for i in range(layers):
        s = t.num_hidden_layers - layers + i
        p = f"layers.{i}"
        if family == "laguna-dflash":
            out[f"{p}.self_attn.qkv_proj.weight"] = torch.cat(
                [src(s, "self_attn.q_proj.weight"), src(s, "self_attn.k_proj.weight"),
                 src(s, "self_attn.v_proj.weight")])
            out[f"{p}.self_attn.g_proj.weight"] = _normal((t.num_attention_heads, H), 0.02, gen)
        else:
            for name in ("q_proj", "k_proj", "v_proj"):
                out[f"{p}.self_attn.{name}.weight"] = src(s, f"self_attn.{name}.weight")
        for name in ("self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
            out[f"{p}.{name}.weight"] = src(s, f"{name}.weight")
        out[f"{p}.input_layernorm.weight"] = src(s, "input_layernorm.weight")
        out[f"{p}.post_attention_layernorm.weight"] = src(s, "post_attention_layernorm.weight")
        out[f"{p}.self_attn.q_norm.weight"] = ones(t.head_dim)
        out[f"{p}.self_attn.k_norm.weight"] = ones(t.head_dim)
    out["hidden_norm.weight"] = ones(H)
    out["norm.weight"] = target_tensors["model.norm.weight"].float().clone()
    if family == "laguna-dflash":
        for i in range(len(AUX_IDS)):
            out[f"aux_hidden_norms.{i}.weight"] = ones(H) + _normal((H,), 0.1, gen)
    if family == "dspark":
        out["markov_head.markov_w1.weight"] = _normal((t.vocab_size, MARKOV_RANK), 0.02, gen)
        out["markov_head.markov_w2.weight"] = torch.zeros(t.vocab_size, MARKOV_RANK)
    return out
