"""The tiny Llama-style target (GQA, RoPE, SwiGLU, RMSNorm, untied head) in Hugging Face's LlamaForCausalLM
layout, with the hidden-state capture vLLM hands to drafts: aux layer id i is the residual stream entering
layer i (the output of layer i-1), and id L (the layer count) the last layer's output before the final norm."""
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

import stio


@dataclass
class TargetConfig:
    vocab_size: int = 2048
    hidden_size: int = 256
    num_hidden_layers: int = 6
    num_attention_heads: int = 8
    num_key_value_heads: int = 2
    head_dim: int = 32
    intermediate_size: int = 768
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    max_position_embeddings: int = 1024

    def hf_config(self) -> dict:
        c = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
             "tie_word_embeddings": False, "attention_bias": False, "torch_dtype": "bfloat16",
             "bos_token_id": 1, "eos_token_id": 2}
        c.update(asdict(self))
        return c


def rms_norm(x, weight, eps):
    x32 = x.float()
    return weight.float() * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps))


def rope_tables(positions, rot_dim, theta, llama3=None):
    """cos/sin [T, rot_dim/2] for neox-style RoPE; @p llama3: (factor, low, high, original_max) or None."""
    inv = 1.0 / (theta ** (torch.arange(0, rot_dim, 2, dtype=torch.float64) / rot_dim))
    if llama3 is not None:
        factor, low, high, original = llama3
        low_wavelen, high_wavelen = original / low, original / high
        wavelen = 2 * math.pi / inv
        smooth = (original / wavelen - low) / (high - low)
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        mid = (1 - smooth) * scaled / factor + smooth * scaled
        is_mid = (wavelen <= low_wavelen) & (wavelen >= high_wavelen)
        inv = torch.where(is_mid, mid, scaled)
    angles = positions.to(torch.float64).unsqueeze(-1) * inv
    return torch.cos(angles).float(), torch.sin(angles).float()


def apply_rope(x, cos, sin, rot_dim):
    """x [..., T, heads, hd], cos/sin [..., T, rot/2]; rotates pairs (j, j + rot/2) of the first rot_dim
    dims of every head (neox style)."""
    half = rot_dim // 2
    x1, x2, rest = x[..., :half], x[..., half:rot_dim], x[..., rot_dim:]
    c, s = cos.unsqueeze(-2), sin.unsqueeze(-2)
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s, rest], dim=-1)


def attention(q, k, v, mask):
    """q [..., Tq, nh, hd], k/v [..., Tk, nkv, hd], mask [..., Tq, Tk] bool (True = may attend); a GQA
    query head h reads KV head h // (nh / nkv). FP32 softmax."""
    group = q.shape[-2] // k.shape[-2]
    k = k.repeat_interleave(group, dim=-2)
    v = v.repeat_interleave(group, dim=-2)
    scores = torch.einsum("...qhd,...khd->...hqk", q, k) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
    return torch.einsum("...hqk,...khd->...qhd", torch.softmax(scores.float(), dim=-1), v)


_LAYER_NAMES = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj", "o": "self_attn.o_proj",
                "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}


class Target(torch.nn.Module):
    def __init__(self, config: TargetConfig):
        super().__init__()
        self.config = c = config
        self.embed = torch.nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = torch.nn.ModuleList()
        for _ in range(c.num_hidden_layers):
            layer = torch.nn.Module()
            layer.q = torch.nn.Linear(c.hidden_size, c.num_attention_heads * c.head_dim, bias=False)
            layer.k = torch.nn.Linear(c.hidden_size, c.num_key_value_heads * c.head_dim, bias=False)
            layer.v = torch.nn.Linear(c.hidden_size, c.num_key_value_heads * c.head_dim, bias=False)
            layer.o = torch.nn.Linear(c.num_attention_heads * c.head_dim, c.hidden_size, bias=False)
            layer.gate = torch.nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
            layer.up = torch.nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
            layer.down = torch.nn.Linear(c.intermediate_size, c.hidden_size, bias=False)
            layer.input_norm = torch.nn.Parameter(torch.ones(c.hidden_size))
            layer.post_norm = torch.nn.Parameter(torch.ones(c.hidden_size))
            self.layers.append(layer)
        self.norm = torch.nn.Parameter(torch.ones(c.hidden_size))
        self.head = torch.nn.Linear(c.hidden_size, c.vocab_size, bias=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                torch.nn.init.normal_(p, std=0.02 / (math.sqrt(2 * c.num_hidden_layers) if name.endswith(("o.weight", "down.weight")) else 1))

    def forward(self, ids, cache=None, capture=False):
        """ids [B, T] (or [T] with @p cache, a list of per-layer (k, v) extended in place).
        Returns logits [B, T, V] and, with @p capture, the residual streams [B, T, L+1, H] (aux ids 0..L)."""
        c = self.config
        batched = ids.dim() == 2
        if not batched:
            ids = ids[None]
        B, T = ids.shape
        start = cache[0][0].shape[0] if cache and cache[0] is not None else 0
        pos = torch.arange(start, start + T)
        cos, sin = rope_tables(pos, c.head_dim, c.rope_theta)
        x = self.embed(ids)
        streams = [x] if capture else None
        mask = torch.ones(T, start + T, dtype=torch.bool).tril(diagonal=start)
        for i, layer in enumerate(self.layers):
            h = rms_norm(x, layer.input_norm, c.rms_norm_eps)
            q = layer.q(h).view(B, T, c.num_attention_heads, c.head_dim)
            k = layer.k(h).view(B, T, c.num_key_value_heads, c.head_dim)
            v = layer.v(h).view(B, T, c.num_key_value_heads, c.head_dim)
            q, k = apply_rope(q, cos, sin, c.head_dim), apply_rope(k, cos, sin, c.head_dim)
            if cache is not None:
                assert B == 1
                if cache[i] is not None:
                    k = torch.cat([cache[i][0], k[0]])[None]
                    v = torch.cat([cache[i][1], v[0]])[None]
                cache[i] = (k[0], v[0])
            a = attention(q, k, v, mask)
            x = x + layer.o(a.reshape(B, T, -1))
            h = rms_norm(x, layer.post_norm, c.rms_norm_eps)
            x = x + layer.down(F.silu(layer.gate(h)) * layer.up(h))
            if capture:
                streams.append(x)
        logits = self.head(rms_norm(x, self.norm, c.rms_norm_eps))
        if not batched:
            logits = logits[0]
        if capture:
            s = torch.stack(streams, dim=2)
            return logits, (s if batched else s[0])
        return logits

    def hf_names(self) -> dict:
        """Checkpoint name (LlamaForCausalLM) -> parameter name here."""
        out = {"model.embed_tokens.weight": "embed.weight", "model.norm.weight": "norm",
               "lm_head.weight": "head.weight"}
        for i in range(self.config.num_hidden_layers):
            for short, long in _LAYER_NAMES.items():
                out[f"model.layers.{i}.{long}.weight"] = f"layers.{i}.{short}.weight"
            out[f"model.layers.{i}.input_layernorm.weight"] = f"layers.{i}.input_norm"
            out[f"model.layers.{i}.post_attention_layernorm.weight"] = f"layers.{i}.post_norm"
        return out

    def hf_tensors(self) -> dict:
        params = dict(self.named_parameters())
        return {hf: params[own].detach().to(torch.bfloat16) for hf, own in self.hf_names().items()}

    def save(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.config.hf_config(), indent=2) + "\n")
        stio.save(folder / "model.safetensors", self.hf_tensors())

    @classmethod
    def load(cls, folder: Path) -> "Target":
        """The committed BF16 target, computing in FP32 on the BF16 values."""
        cfg = json.loads((folder / "config.json").read_text())
        model = cls(TargetConfig(**{k: cfg[k] for k in TargetConfig.__dataclass_fields__}))
        tensors, _ = stio.load(folder / "model.safetensors")
        names = model.hf_names()
        assert set(names) == set(tensors), "the checkpoint's tensors differ from the model's"
        params = dict(model.named_parameters())
        with torch.no_grad():
            for hf, own in names.items():
                params[own].copy_(tensors[hf].float())
        return model.eval()
