"""Dequantizes a compressed-tensors checkpoint (pack-quantized int4/int8, symmetric or with zero points,
float-quantized FP8, nvfp4-pack-quantized) into dense BF16 weights from the format as compressed-tensors
defines it (offset-binary words of 8 int4 or 4 int8 values, per-group scales, D = rnd_bf16(q·s), with zero
points D = rnd_bf16(rnd_bf16(q − z)·s); E4M3 weights times their row scale; FP4 nibbles, low one first, times
the E4M3 group scale over the global scale), for the reference loop to run the quantized draft the product
exported. torch 1.13 has no float8 dtype: E4M3 codes are decoded by hand, and FP8 activations are rounded by
hand (fp8_inputs, e4m3_round)."""
import json
from pathlib import Path

import torch

import stio

FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e4m3(codes: torch.Tensor) -> torch.Tensor:
    """float8_e4m3fn codes (uint8) to float32: (−1)^S · 2^(E−7) · (1 + M/8), subnormal 2^-6 · M/8."""
    c = codes.to(torch.int32)
    sign = torch.where((c & 0x80) != 0, -1.0, 1.0)
    e = (c >> 3) & 0xF
    m = (c & 0x7).float()
    normal = torch.pow(2.0, (e - 7).float()) * (1 + m / 8)
    sub = 2.0 ** -6 * m / 8
    value = torch.where(e == 0, sub, normal)
    value = torch.where((e == 15) & ((c & 7) == 7), torch.tensor(float("nan")), value)
    return sign * value


def unpack_int(words: torch.Tensor, bits: int, cols: int) -> torch.Tensor:
    """I32 words, element per·j + t at bits·t (offset binary, u = q + 2^(bits−1)) → q [rows, cols]."""
    per = 32 // bits
    w = words.to(torch.int64) & 0xFFFFFFFF
    parts = [(w >> (bits * t)) & ((1 << bits) - 1) for t in range(per)]
    u = torch.stack(parts, dim=-1).reshape(words.shape[0], -1)[:, :cols]
    return u - (1 << (bits - 1))


def dequantize_int(packed, scale, shape, bits, zero_point=None) -> torch.Tensor:
    rows, cols = shape
    q = unpack_int(packed, bits, cols).float()
    group = cols // scale.shape[1]
    s = scale.float().repeat_interleave(group, dim=1)
    if zero_point is not None:
        # Zero points are packed along the output dimension: word [j][g] holds rows 8j..8j+7 of group g.
        z = unpack_int(zero_point.t().contiguous(), bits, rows).t().float()
        q = (q - z.repeat_interleave(group, dim=1)).to(torch.bfloat16).float()
    return (q * s).to(torch.bfloat16)  # rnd_dt(q · s): the product is exact in float32


def dequantize_fp8(codes, scale) -> torch.Tensor:
    return (e4m3(codes) * scale.float()).to(torch.bfloat16)


def e4m3_round(x: torch.Tensor) -> torch.Tensor:
    """x (|x| ≤ 448) rounded to the nearest float8_e4m3fn value, ties to even: three mantissa bits above
    2^-6, steps of 2^-9 below (subnormals)."""
    e = torch.floor(torch.log2(x.abs().clamp(min=2.0 ** -6)))
    step = torch.pow(2.0, e - 3)
    return torch.round(x / step) * step  # torch.round: half to even


def fp8_per_token(x: torch.Tensor) -> torch.Tensor:
    """vLLM's dynamic per-token FP8 input quantization (QuantFP8, per-token group shape): per row,
    scale = max(absmax / 448, 1 / (448·512)), values x / scale clamped to ±448 and rounded to E4M3."""
    scale = (x.abs().amax(-1, keepdim=True) / 448.0).clamp(min=1.0 / (448.0 * 512.0))
    return e4m3_round((x / scale).clamp(-448.0, 448.0)) * scale


def fp8_inputs(folder: Path) -> set:
    """Modules (draft names, no "model.") whose inputs vLLM quantizes to FP8 per token: those stored as FP8
    weights, when every float 8-bit weight group of the config declares dynamic per-token FP8 input
    activations (the only FP8 scheme the product writes; anything else is refused here)."""
    config = json.loads((folder / "config.json").read_text()).get("quantization_config", {})
    for name, group in config.get("config_groups", {}).items():
        w, a = group.get("weights") or {}, group.get("input_activations")
        if w.get("type") == "float" and w.get("num_bits") == 8:
            assert a and a.get("type") == "float" and a.get("num_bits") == 8 and a.get("strategy") == "token" \
                and a.get("dynamic"), f"{folder}: group {name}: FP8 weights without dynamic per-token FP8 inputs"
    tensors = {}
    for f in sorted(folder.glob("*.safetensors")):
        tensors.update(stio.load(f)[0])
    return {name[:-len(".weight")].removeprefix("model.") for name, t in tensors.items()
            if name.endswith(".weight") and t.dtype == torch.uint8 and name[:-7] + ".weight_scale" in tensors}


def dequantize_nvfp4(packed, scale_codes, global_scale) -> torch.Tensor:
    low, high = packed.to(torch.int64) & 0xF, (packed.to(torch.int64) >> 4) & 0xF
    nibbles = torch.stack([low, high], dim=-1).reshape(packed.shape[0], -1)
    values = FP4[nibbles & 7] * torch.where((nibbles & 8) != 0, -1.0, 1.0)
    se = (e4m3(scale_codes) / global_scale.float()).float()  # f32(sg / gs)
    se = se.repeat_interleave(16, dim=1)
    return (values * se).to(torch.bfloat16)


def dense_tensors(folder: Path) -> dict:
    """Every tensor of the checkpoint with each quantized module's weight dequantized as `module.weight`."""
    tensors = {}
    for f in sorted(folder.glob("*.safetensors")):
        tensors.update(stio.load(f)[0])
    out = {}
    for name, t in tensors.items():
        if name.endswith(".weight_packed"):
            module = name[:-len(".weight_packed")]
            if module + ".weight_global_scale" in tensors:
                out[module + ".weight"] = dequantize_nvfp4(t, tensors[module + ".weight_scale"],
                                                           tensors[module + ".weight_global_scale"])
            else:
                shape = tensors[module + ".weight_shape"].tolist()
                bits = 4 if t.shape[1] * 4 < shape[1] else 8  # 8 values per I32 word, or 4
                out[module + ".weight"] = dequantize_int(t, tensors[module + ".weight_scale"], shape, bits,
                                                         tensors.get(module + ".weight_zero_point"))
        elif name.endswith(".weight") and t.dtype == torch.uint8 and name[:-7] + ".weight_scale" in tensors:
            out[name] = dequantize_fp8(t, tensors[name[:-7] + ".weight_scale"])
        elif not any(name.endswith(s) for s in (".weight_scale", ".weight_shape", ".weight_global_scale",
                                                ".weight_zero_point")):
            out[name] = t
    return out
