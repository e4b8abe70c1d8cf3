"""Minimal safetensors reader and writer (the format: an 8-byte little-endian header length, a JSON header
of {name: {dtype, shape, data_offsets}} plus string __metadata__, then the tensors' bytes back to back).
Written here because Debian 12 packages no safetensors module; only torch and numpy are used."""
import json
import struct

import numpy as np
import torch

_TO_NUMPY = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32, "I16": np.int16,
             "U8": np.uint8, "I8": np.int8, "BOOL": np.bool_, "F64": np.float64}
_FROM_TORCH = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64",
               torch.int32: "I32", torch.uint8: "U8", torch.int8: "I8", torch.bool: "BOOL",
               torch.float64: "F64", torch.int16: "I16"}


class Float8E4M3:
    """uint8 codes to be stored as F8_E4M3 (torch 1.13 has no float8 dtype)."""

    def __init__(self, codes: torch.Tensor):
        assert codes.dtype == torch.uint8
        self.codes = codes
        self.shape = codes.shape

    def element_size(self) -> int:
        return 1


def _dtype_name(t) -> str:
    return "F8_E4M3" if isinstance(t, Float8E4M3) else _FROM_TORCH[t.dtype]


def _raw_bytes(t) -> bytes:
    if isinstance(t, Float8E4M3):
        return t.codes.contiguous().numpy().tobytes()
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save(path, tensors: dict, metadata: dict | None = None):
    """Writes @p tensors (name -> torch tensor or Float8E4M3) in the reference layout: sorted by dtype
    (descending) and name, header padded with spaces to 8 bytes. Metadata {} writes none, as safetensors'
    save_file does without metadata."""
    items = sorted(tensors.items(), key=lambda kv: (-_dtype_rank(kv[1]), kv[0]))
    header, offset, blobs = {}, 0, []
    for name, t in items:
        blob = _raw_bytes(t)
        header[name] = {"dtype": _dtype_name(t), "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    if metadata is None:
        metadata = {"format": "pt"}
    if metadata:
        header["__metadata__"] = dict(metadata)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def _dtype_rank(t) -> int:
    # Alignment first, as the reference writer does (larger element sizes first).
    return t.element_size()


def load(path) -> tuple[dict, dict]:
    """Returns ({name: torch tensor}, metadata). BF16 comes back as torch.bfloat16."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        shape = info["shape"]
        if info["dtype"] == "BF16":
            arr = np.frombuffer(raw, dtype=np.int16).copy().reshape(shape)
            out[name] = torch.from_numpy(arr).view(torch.bfloat16)
        elif info["dtype"] in ("F8_E4M3", "F8_E5M2"):
            out[name] = torch.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy().reshape(shape))
        else:
            out[name] = torch.from_numpy(np.frombuffer(raw, dtype=_TO_NUMPY[info["dtype"]]).copy().reshape(shape))
    return out, meta
