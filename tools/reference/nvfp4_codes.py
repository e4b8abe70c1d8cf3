"""The `codes` rounding of NVFP4A16, written from its definition and compressed-tensors' arithmetic
(docs/spec/schemes-spec.md §2.5, §2.6, §3.4; docs/spec/rounding.md §7), independently of the product's C++:
every 16-value block tries each finite positive float8_e4m3fn scale code and keeps the one with the least
sum of f32((D - w)^2) in f64, starting from compressed-tensors' own code, so a tie keeps that code and then
the smaller one. The global scale and the FP4 rounding stay compressed-tensors'.

Writes tests/data/golden-rounding/expected-NVFP4A16-codes-{BF16,F16,F32}.safetensors from the folder's
inputs (gate_proj and up_proj one fused set, o_proj alone), read by tests/tst_roundinggolden.cpp.

    /usr/bin/python3 tools/reference/nvfp4_codes.py
"""
import pathlib

import numpy as np
import torch

import stio

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDER = ROOT / "tests" / "data" / "golden-rounding"
MODULES = ["model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj", "model.layers.0.self_attn.o_proj"]
FUSED = {MODULES[0]: "gate_up", MODULES[1]: "gate_up", MODULES[2]: "o_proj"}
DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}
TINY = {"BF16": 2.0 ** -126, "F16": 2.0 ** -14, "F32": 2.0 ** -126}
FP4_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)


def e4m3_values() -> np.ndarray:
    """The float32 value of every code 0x00..0x7E (0x7F is NaN)."""
    out = []
    for code in range(0x7F):
        e, m = code >> 3, code & 7
        out.append(2.0 ** -6 * m / 8 if e == 0 else 2.0 ** (e - 7) * (1 + m / 8))
    return np.array(out, dtype=np.float32)


E4M3 = e4m3_values()


def rnd(x: np.ndarray, dt) -> np.ndarray:
    """float32 values rounded to the weight dtype (nearest even), back as float32."""
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(dt).float().numpy()


def e4m3_code(p: np.ndarray) -> np.ndarray:
    """Nearest e4m3 code of p in [0, 448], ties to the even code (the even mantissa)."""
    dist = np.abs(p[..., None].astype(np.float64) - E4M3.astype(np.float64))
    best = dist.min(axis=-1, keepdims=True)
    ties = dist == best
    even = ties & (np.arange(0x7F) % 2 == 0)
    pick = np.where(even.any(axis=-1, keepdims=True), even, ties)
    return pick.argmax(axis=-1).astype(np.uint8)


def fp4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """compressed-tensors' cast of x (clamped to [-6, 6]): magnitude index with ties to the even index, and
    the sign bit of every x < 0 (a -0.0 quotient keeps +)."""
    dist = np.abs(np.abs(x)[..., None] - FP4_GRID)
    best = dist.min(axis=-1, keepdims=True)
    ties = dist == best
    even = ties & (np.arange(8) % 2 == 0)
    pick = np.where(even.any(axis=-1, keepdims=True), even, ties)
    return pick.argmax(axis=-1).astype(np.uint8), (x < 0).astype(np.uint8)


def block_error(w: np.ndarray, se: np.ndarray, dt) -> tuple[np.ndarray, np.ndarray]:
    """Nibbles and the f64 sum of f32((D - w)^2) of blocks w [..., 16] under effective scales se [...]."""
    x = np.clip((w / se[..., None]).astype(np.float32), -6.0, 6.0)
    index, sign = fp4(x)
    value = np.where(sign == 1, -FP4_GRID[index], FP4_GRID[index]).astype(np.float32)
    d = (rnd(value * se[..., None], dt) - w).astype(np.float32)
    return index | (sign << 3), (d * d).astype(np.float64).sum(axis=-1)


def global_scale(absmax: float, name: str, dt) -> np.float32:
    a = max(np.float32(absmax), np.float32(TINY[name]))
    reciprocal = rnd(np.float32(1.0) / np.array([a], dtype=np.float32), dt)
    gs = rnd(reciprocal * np.float32(2688.0), dt)[0]
    return np.float32(1.0) if not np.isfinite(gs) else np.float32(gs)


def quantize(w: np.ndarray, gs: np.float32, dt) -> dict:
    rows, cols = w.shape
    blocks = w.reshape(rows, cols // 16, 16)
    local = rnd(np.abs(blocks).max(axis=-1) / np.float32(6.0), dt)
    product = np.clip((gs * local).astype(np.float32), -448.0, 448.0)
    rtn = e4m3_code(product)
    rtn = np.where(rtn == 0, np.uint8(0x20), rtn)
    best_code = rtn.copy()
    best_nibbles, best_error = block_error(blocks, (E4M3[rtn] / gs).astype(np.float32), dt)
    for code in range(1, 0x7F):
        se = np.full(rtn.shape, E4M3[code] / gs, dtype=np.float32)
        nibbles, error = block_error(blocks, se, dt)
        better = (error < best_error) & (rtn != code)
        best_code = np.where(better, np.uint8(code), best_code)
        best_error = np.where(better, error, best_error)
        best_nibbles = np.where(better[..., None], nibbles, best_nibbles)
    flat = best_nibbles.reshape(rows, cols)
    packed = (flat[:, 0::2] | (flat[:, 1::2] << 4)).astype(np.uint8)
    return {"weight_packed": torch.from_numpy(packed),
            "weight_scale": stio.Float8E4M3(torch.from_numpy(best_code.astype(np.uint8))),
            "weight_global_scale": torch.tensor([gs], dtype=torch.float32)}


def main():
    for name, dt in DTYPES.items():
        tensors, _ = stio.load(FOLDER / f"input-{name}.safetensors")
        weights = {m: tensors[m + ".weight"].float().numpy() for m in MODULES}
        absmax = {}
        for m in MODULES:
            absmax[FUSED[m]] = max(absmax.get(FUSED[m], 0.0), float(np.abs(weights[m]).max()))
        out = {}
        for m in MODULES:
            for suffix, t in quantize(weights[m], global_scale(absmax[FUSED[m]], name, dt), dt).items():
                out[f"{m}.{suffix}"] = t
        stio.save(FOLDER / f"expected-NVFP4A16-codes-{name}.safetensors", out)
        print(f"expected-NVFP4A16-codes-{name}.safetensors")


if __name__ == "__main__":
    main()
