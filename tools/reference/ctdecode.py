"""Dequantizes a compressed-tensors checkpoint (pack-quantized int4/int8 symmetric, nvfp4-pack-quantized)
into dense BF16 weights from the format as compressed-tensors defines it (offset-binary words of 8 int4 or 4
int8 values, per-group scales, D = rnd_bf16(q·s); FP4 nibbles, low one first, times the E4M3 group scale
over the global scale), for the reference loop to run the quantized draft the product exported. torch 1.13 has no float8 dtype: E4M3 scale codes are
decoded by hand."""
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


def dequantize_int(packed, scale, shape, bits) -> torch.Tensor:
    rows, cols = shape
    q = unpack_int(packed, bits, cols).float()
    group = cols // scale.shape[1]
    s = scale.float().repeat_interleave(group, dim=1)
    return (q * s).to(torch.bfloat16)  # rnd_dt(q · s): the product is exact in float32


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

                out[module + ".weight"] = dequantize_int(t, tensors[module + ".weight_scale"], shape, bits)
        elif not any(name.endswith(s) for s in (".weight_scale", ".weight_shape", ".weight_global_scale",
                                                ".weight_zero_point")):
            out[name] = t
    return out
