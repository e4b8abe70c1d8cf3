"""The four draft graphs Sparkulator runs (EAGLE-3, Qwen3 DFlash, Laguna DFlash, DSpark), written in PyTorch
from the serving semantics (docs/spec/draft-forward.md), independently of the product's C++ forward. A draft reads
its own config.json keys, keeps its tensors under their checkpoint names, and takes the target's
embed_tokens / lm_head when it ships none.

Every function works on FP32 copies of the weights; a draft loaded from BF16 computes in FP32 on the BF16
values, as the product does. Greedy choices take the lowest index on ties (torch.argmax)."""
import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F

import stio
from ctdecode import fp8_per_token
from target import apply_rope, attention, rms_norm, rope_tables

# ---------------------------------------------------------------------------------------------------------
# Configuration: what each family reads from config.json.


def family_of(config: dict) -> str:
    arch = (config.get("architectures") or [""])[0]
    kind = config.get("speculators_model_type", "")
    if arch == "DFlashLagunaForCausalLM":
        return "laguna-dflash"
    if kind == "dspark" or arch in ("DSparkSpeculator", "Qwen3DSparkModel"):
        return "dspark"
    if arch == "DFlashDraftModel" or kind == "dflash":
        return "qwen3-dflash"
    if arch in ("LlamaForCausalLMEagle3", "Eagle3LlamaForCausalLM") or kind == "eagle3":
        return "eagle3"
    raise ValueError(f"not a draft family: {arch or kind}")


class Rope:
    """RoPE of one layer: theta, rotated dims (head_dim · partial_rotary_factor) and llama3 scaling."""

    def __init__(self, params: dict, fallback: dict, head_dim: int):
        get = lambda key, default: params.get(key, fallback.get(key, default))
        self.theta = float(get("rope_theta", 1e6))
        self.rot = int(head_dim * float(get("partial_rotary_factor", 1.0))) // 2 * 2
        scaling = params if "rope_type" in params else (fallback.get("rope_scaling") or {})
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        self.llama3 = None
        if kind == "llama3":
            self.llama3 = (float(scaling.get("factor", 8.0)), float(scaling.get("low_freq_factor", 1.0)),
                           float(scaling.get("high_freq_factor", 4.0)),
                           float(scaling.get("original_max_position_embeddings", 8192)))
        elif kind not in ("default", None):
            raise ValueError(f"rope_type {kind} is not modelled")

    def __call__(self, x, positions):
        cos, sin = rope_tables(positions, self.rot, self.theta, self.llama3)
        return apply_rope(x, cos, sin, self.rot)


class Spec:
    def __init__(self, config: dict):
        self.config = config
        self.family = family_of(config)
        m = config.get("transformer_layer_config", config) if self.family == "dspark" else config
        self.hidden = m["hidden_size"]
        self.layers = m["num_hidden_layers"]
        self.heads = m["num_attention_heads"]
        self.kv_heads = m.get("num_key_value_heads", self.heads)
        self.head_dim = m.get("head_dim", self.hidden // self.heads)
        self.intermediate = m["intermediate_size"]
        self.vocab = m["vocab_size"]
        self.eps = m.get("rms_norm_eps", 1e-6)
        self.draft_vocab = config.get("draft_vocab_size", self.vocab)
        self.target_hidden = config.get("target_hidden_size", self.hidden)
        self.logit_scale = float(config.get("logit_scale", 1.0))
        dflash = config.get("dflash_config", {})
        types = config.get("layer_types") or m.get("layer_types") or ["full_attention"] * self.layers
        self.layer_types = list(types)
        self.window = [0] * self.layers
        self.block_causal = False
        self.sample_from_anchor = False
        self.markov_rank = 0
        self.qk_norm = self.family != "eagle3"
        self.fused_qkv = self.output_gate = self.aux_norms = self.context_input_norm = False
        if self.family in ("qwen3-dflash", "laguna-dflash"):
            self.aux_ids = [i + 1 for i in dflash["target_layer_ids"]]
            self.mask_token = dflash.get("mask_token_id", config.get("mask_token_id"))
            self.block_causal = bool(dflash.get("causal", False))
            if self.family == "qwen3-dflash" and dflash.get("use_swa", False):
                self.window = [dflash["swa_window_size"]] * self.layers
        if self.family == "laguna-dflash":
            self.fused_qkv = self.output_gate = self.aux_norms = self.context_input_norm = True
            self.gate_per_head = config.get("gating", "per-head") != "per-element"
        if self.family == "dspark":
            self.aux_ids = list(config["aux_hidden_state_layer_ids"])
            self.mask_token = config["mask_token_id"]
            self.sample_from_anchor = bool(config.get("sample_from_anchor", True))
            self.markov_rank = int(config.get("markov_rank", 0))
            # vLLM's speculators translation: dflash_config.causal = not sliding_window_non_causal.
            self.block_causal = not bool(config.get("sliding_window_non_causal", True))
        for i, t in enumerate(self.layer_types):
            if t == "sliding_attention":
                self.window[i] = config.get("sliding_window", m.get("sliding_window"))
        if self.family == "eagle3":
            self.aux_ids = list(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"])
            self.norm_before_residual = bool(config.get("norm_before_residual", False))
        self.ropes = [self._rope(m, t) for t in self.layer_types]

    def _rope(self, m: dict, layer_type: str) -> Rope:
        params = m.get("rope_parameters") or {}
        if isinstance(params.get(layer_type), dict):  # nested by layer type
            params = params[layer_type]
        if layer_type == "sliding_attention" and m.get("swa_rope_parameters"):
            params = m["swa_rope_parameters"]
        return Rope(params, m, self.head_dim)

    def layer_name(self, i: int) -> str:
        return "midlayer" if self.family == "eagle3" else f"layers.{i}"


# ---------------------------------------------------------------------------------------------------------
# The graphs.


class Draft(torch.nn.Module):
    """A draft's tensors under their checkpoint names (as parameters) and its four graph functions."""

    def __init__(self, config: dict, shared: dict):
        super().__init__()
        self.spec = Spec(config)
        self.config = config
        self.weights = torch.nn.ParameterDict()
        self.buffers_ = {}
        # The target's embed_tokens / lm_head, frozen, used when the draft ships none.
        self.shared = {k: v.float() for k, v in shared.items()}
        self.fp8_inputs = set()  # modules whose inputs the serving kernel quantizes to FP8 per token
        self.stored = lambda x: x  # how every operation's output is stored (serve_bf16(): rounded to BF16)

    def serve_bf16(self) -> "Draft":
        """Serving numerics: every operation's output rounded to BF16 as vLLM stores a BF16 model's
        activations, FP32 inside each operation; the weights BF16 too (a dequantized weight rounded, as
        compressed-tensors decompresses into the model's dtype)."""
        self.stored = lambda x: x.to(torch.bfloat16).float()
        with torch.no_grad():
            for p in self.weights.values():
                p.copy_(p.to(torch.bfloat16).float())
        self.shared = {k: v.to(torch.bfloat16).float() for k, v in self.shared.items()}
        return self

    # -- tensors ------------------------------------------------------------------------------------------
    def add(self, name: str, tensor: torch.Tensor):
        if tensor.dtype in (torch.int64, torch.bool):
            self.buffers_[name] = tensor
        else:
            self.weights[name.replace(".", "__")] = torch.nn.Parameter(tensor.float())

    def has(self, name: str) -> bool:
        return name.replace(".", "__") in self.weights or name in self.buffers_

    def w(self, name: str) -> torch.Tensor:
        key = name.replace(".", "__")
        if key in self.weights:
            return self.weights[key]
        if name in ("embed_tokens.weight", "lm_head.weight"):
            return self.shared[name]
        return self.buffers_[name]

    def tensors(self) -> dict:
        out = {k.replace("__", "."): v.detach().to(torch.bfloat16) for k, v in self.weights.items()}
        out.update(self.buffers_)
        return out

    def save(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.config, indent=2) + "\n")
        stio.save(folder / "model.safetensors", self.tensors())

    @classmethod
    def load(cls, folder: Path, shared: dict, tensors: dict | None = None, fp8_inputs=()) -> "Draft":
        """@p fp8_inputs: modules whose inputs the serving kernel quantizes to FP8 per token (ctdecode)."""
        config = json.loads((folder / "config.json").read_text())
        draft = cls(config, shared)
        draft.fp8_inputs = set(fp8_inputs)
        if tensors is None:
            tensors, _ = stio.load(folder / "model.safetensors")
        for name, t in tensors.items():
            draft.add(name.removeprefix("model."), t)
        return draft.eval()

    def linear(self, name: str, x: torch.Tensor) -> torch.Tensor:
        if name in self.fp8_inputs:
            x = fp8_per_token(x)
        return self.stored(x @ self.w(name + ".weight").t())

    def norm(self, name: str, x: torch.Tensor) -> torch.Tensor:
        return self.stored(rms_norm(x, self.w(name + ".weight"), self.spec.eps))

    def rope(self, i: int, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return self.stored(self.spec.ropes[i](x, positions))

    def qkv(self, p: str, h: torch.Tensor):
        s = self.spec
        qw, kw = s.heads * s.head_dim, s.kv_heads * s.head_dim
        if s.fused_qkv:
            out = self.linear(p + ".self_attn.qkv_proj", h)
            q, k, v = out[..., :qw], out[..., qw:qw + kw], out[..., qw + kw:]
        else:
            q = self.linear(p + ".self_attn.q_proj", h)
            k = self.linear(p + ".self_attn.k_proj", h)
            v = self.linear(p + ".self_attn.v_proj", h)
        shape = h.shape[:-1]
        return (q.reshape(*shape, s.heads, s.head_dim), k.reshape(*shape, s.kv_heads, s.head_dim),
                v.reshape(*shape, s.kv_heads, s.head_dim))

    def mlp(self, p: str, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(p + ".post_attention_layernorm", x)
        return self.linear(p + ".mlp.down_proj", self.stored(
            F.silu(self.linear(p + ".mlp.gate_proj", h)) * self.linear(p + ".mlp.up_proj", h)))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.w("embed_tokens.weight")[ids]

    def to_target(self, draft_ids: torch.Tensor) -> torch.Tensor:
        if self.has("d2t"):
            return draft_ids + self.buffers_["d2t"][draft_ids]
        return draft_ids

    # -- context: once per captured sequence ---------------------------------------------------------------
    def aux_input(self, aux: torch.Tensor) -> torch.Tensor:
        """aux [T, n_aux · H_t] in the order of aux_ids; Laguna normalises each slice first."""
        s = self.spec
        aux = self.stored(aux)
        if s.aux_norms:
            parts = aux.split(s.target_hidden, dim=-1)
            aux = torch.cat([self.norm(f"aux_hidden_norms.{i}", part) for i, part in enumerate(parts)], dim=-1)
        return self.linear("fc", aux)

    def context(self, aux: torch.Tensor, tokens: torch.Tensor, start: int = 0) -> dict:
        """K/V of every context position in every layer (block drafts), or EAGLE-3's step-0 inputs, for the
        positions start … start + T − 1 of @p aux's rows. Each position's entries depend on its own features
        (and EAGLE-3's on the next token) alone, so contexts of consecutive ranges concatenate."""
        s = self.spec
        T = aux.shape[-2]
        pos = torch.arange(start, start + T)
        g = self.aux_input(aux)
        if s.family == "eagle3":
            p = "midlayer"
            u = torch.cat([self.norm(p + ".input_layernorm", self.embed(tokens[..., start + 1:start + T + 1])),
                           self.norm(p + ".hidden_norm", g)], dim=-1)
            _, k, v = self.qkv(p, u)
            return {"g": g, "u": u, "k": [self.rope(0, k, pos)], "v": [v]}
        hidden = self.norm("hidden_norm", g)
        keys, values = [], []
        for i in range(s.layers):
            p = s.layer_name(i)
            h = self.norm(p + ".input_layernorm", hidden) if s.context_input_norm else hidden
            _, k, v = self.qkv(p, h)  # vLLM reads K/V with the raw fused weight: the same values
            if s.qk_norm:
                k = self.norm(p + ".self_attn.k_norm", k)
            keys.append(self.rope(i, k, pos))
            values.append(v)
        return {"k": keys, "v": values}

    # -- block drafts (DFlash, DSpark) --------------------------------------------------------------------
    def block_logits(self, ctx: dict, tokens: torch.Tensor, anchors: torch.Tensor, k: int,
                     previous: torch.Tensor | None = None):
        """Logits [A, k, V_d] of the block at each anchor. DFlash: [bonus, mask×k], rows 1..k predict their
        own positions; DSpark: [anchor, mask×(k−1)], every row predicts the next position, plus the Markov
        term on @p previous [A, k] (teacher forcing; None: the greedy walk in propose())."""
        s = self.spec
        Q = k if s.sample_from_anchor else k + 1
        A = anchors.shape[0]
        ids = torch.full((A, Q), s.mask_token, dtype=torch.long)
        ids[:, 0] = tokens[anchors]
        pos = anchors[:, None] + torch.arange(Q)[None, :]
        T = ctx["k"][0].shape[0]
        cpos = torch.arange(T)
        x = self.embed(ids)
        block_mask = torch.ones(Q, Q, dtype=torch.bool)
        if s.block_causal:
            block_mask = block_mask.tril()
        for i in range(s.layers):
            p = s.layer_name(i)
            h = self.norm(p + ".input_layernorm", x)
            q, kk, v = self.qkv(p, h)
            if s.qk_norm:
                q = self.norm(p + ".self_attn.q_norm", q)
                kk = self.norm(p + ".self_attn.k_norm", kk)
            q, kk = self.rope(i, q, pos), self.rope(i, kk, pos)
            ctx_mask = cpos[None, :] < anchors[:, None]
            if s.window[i]:
                ctx_mask &= cpos[None, :] >= anchors[:, None] - s.window[i]
            mask = torch.cat([ctx_mask[:, None, :].expand(A, Q, T), block_mask.expand(A, Q, Q)], dim=-1)
            keys = torch.cat([ctx["k"][i].expand(A, T, *kk.shape[-2:]), kk], dim=1)
            values = torch.cat([ctx["v"][i].expand(A, T, *v.shape[-2:]), v], dim=1)
            a = self.stored(attention(q, keys, values, mask))
            if s.output_gate:
                gate = F.softplus(self.linear(p + ".self_attn.g_proj", h))
                a = self.stored(a * (gate[..., None] if s.gate_per_head else gate.reshape(a.shape)))
            x = self.stored(x + self.linear(p + ".self_attn.o_proj", a.reshape(A, Q, -1)))
            x = self.stored(x + self.mlp(p, x))
        x = self.norm("norm", x)
        rows = x[:, :k] if s.sample_from_anchor else x[:, 1:]
        logits = self.stored(s.logit_scale * self.linear("lm_head", rows))
        if previous is not None and s.markov_rank:
            logits = self.stored(logits + s.logit_scale * self.markov(previous))
        return logits, rows

    def markov(self, previous: torch.Tensor) -> torch.Tensor:
        return self.linear("markov_head.markov_w2", self.w("markov_head.markov_w1.weight")[previous])

    # -- EAGLE-3 chain ------------------------------------------------------------------------------------
    def chain_logits(self, ctx: dict, anchors: torch.Tensor, k: int, forced: torch.Tensor | None = None):
        """k chain steps at each anchor (step 0 at p = anchor − 1 with the bonus token, step j at p + j with
        the previous step's token and pre-norm hidden state). @p forced [A, k−1]: the tokens fed to steps
        1..k−1 (training); None: the draft's own greedy tokens."""
        s = self.spec
        pfx = "midlayer"
        A = anchors.shape[0]
        p = anchors - 1
        T = ctx["k"][0].shape[0]
        cpos = torch.arange(T)
        u, g = ctx["u"][p], ctx["g"][p]
        own_k, own_v, out, tokens = [], [], [], []
        for step in range(k):
            pos = p + step
            if step > 0:
                prev = forced[:, step - 1] if forced is not None else tokens[-1]
                u = torch.cat([self.norm(pfx + ".input_layernorm", self.embed(prev)),
                               self.norm(pfx + ".hidden_norm", g)], dim=-1)
            q, kk, v = self.qkv(pfx, u)
            q = self.rope(0, q[:, None], pos[:, None])
            if step > 0:
                own_k.append(self.rope(0, kk[:, None], pos[:, None])[:, 0])
                own_v.append(v)
            ctx_mask = (cpos[None, :] <= p[:, None])[:, None, :]
            keys, values, mask = ctx["k"][0].expand(A, T, *kk.shape[-2:]), ctx["v"][0].expand(A, T, *v.shape[-2:]), ctx_mask
            if own_k:
                keys = torch.cat([keys, torch.stack(own_k, 1)], dim=1)
                values = torch.cat([values, torch.stack(own_v, 1)], dim=1)
                mask = torch.cat([mask, torch.ones(A, 1, len(own_k), dtype=torch.bool)], dim=-1)
            a = self.stored(attention(q, keys, values, mask)[:, 0])
            y = self.norm(pfx + ".hidden_norm", g) if s.norm_before_residual else g
            y = self.stored(y + self.linear(pfx + ".self_attn.o_proj", a.reshape(A, -1)))
            y = self.stored(y + self.mlp(pfx, y))
            logits = self.stored(s.logit_scale * self.linear("lm_head", self.norm("norm", y)))
            out.append(logits)
            tokens.append(self.to_target(logits.argmax(-1)))
            g = y
        return torch.stack(out, 1), torch.stack(tokens, 1)

    # -- proposals ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def propose(self, ctx: dict, tokens: torch.Tensor, anchors: torch.Tensor, k: int):
        """Greedy proposals [A, k] (target ids) and final logits [A, k, V_d] at each anchor."""
        s = self.spec
        if s.family == "eagle3":
            logits, out = self.chain_logits(ctx, anchors, k)
            return out, logits
        logits, _ = self.block_logits(ctx, tokens, anchors, k)
        if not s.markov_rank:
            return self.to_target(logits.argmax(-1)), logits
        previous = tokens[anchors]
        final, out = [], []
        for j in range(k):
            row = self.stored(logits[:, j] + s.logit_scale * self.markov(previous))
            final.append(row)
            previous = self.to_target(row.argmax(-1))
            out.append(previous)
        return torch.stack(out, 1), torch.stack(final, 1)


def extend_context(ctx: dict | None, more: dict) -> dict:
    """@p ctx followed by @p more (the next positions), along the position dimension."""
    if ctx is None:
        return more
    return {key: ([torch.cat([a, b]) for a, b in zip(ctx[key], more[key])] if isinstance(ctx[key], list)
                  else torch.cat([ctx[key], more[key]])) for key in ctx}


def load_shared(target_folder: Path) -> dict:
    tensors, _ = stio.load(target_folder / "model.safetensors")
    return {"embed_tokens.weight": tensors["model.embed_tokens.weight"],
            "lm_head.weight": tensors["lm_head.weight"]}
