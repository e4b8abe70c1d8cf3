"""The capture as other tools write it, for the product's capture readers and health checks
(tests/tst_capturereaders.cpp). Each layout follows its writer's source, not the product's reader:

  capture-vllm/            vLLM's ExampleHiddenStatesConnector (vllm/distributed/kv_transfer/kv_connector/v1/
                           example_hidden_states_connector.py): one {request id}.safetensors per request with
                           hidden_states [T, n_ids, H] in the model dtype (BF16) and token_ids [T] int64, no
                           metadata, a {file}.lock companion the client removes or not; the ids are the draft
                           config's eagle_aux_hidden_state_layer_ids plus the last layer, recorded nowhere.
  capture-hs-fp8/          speculators' FP8 hidden-states backend (speculators#1028, hs_connectors/fp8_utils.py):
                           hidden_states float8_e4m3fn [T, n_ids, H], hidden_states_scales float32 [T, 1, 1]
                           (one scale per token across its layers: amax / 448, at least 1e-12; the codes are
                           round-to-nearest-even of x / scale), token_ids int64; renamed hs_{i}.safetensors by
                           speculators' data generation, with the capture.json sidecar the product reads.
  capture-fp8-dequantized/ the product's own format holding exactly those FP8 values dequantized (code · scale
                           in FP32), so that both must replay alike.
  capture-deepspec/        DeepSpec's target cache v2 (deepspec/data/target_cache_dataset.py): manifest.json,
                           samples.idx of '<QIIQQQQQ' records, raw shards of input_ids int32, attention_mask and
                           loss_mask uint8, target_hidden_states bfloat16 [T, n_ids * H] of the layers whose
                           *output* DeepSpec hooks (its ids 0, 2, 4 are vLLM's 1, 3, 5) and
                           target_last_hidden_states, the backbone's output after the final norm; two samples a
                           shard.
  capture-shifted/         all residual streams 0..6 labelled 1..7: a capture whose writer counted layers one
                           off (the layer-id probe must name the shift).
  capture-postnorm/        ids 1, 3, 5, 6 with the last stream after the target's final norm (as SpecForge and
                           DeepSpec store it), where vLLM's is before it.

  tests/fuzz/corpus-capture/  the seeds of the capture readers' fuzz target: each layout cut to a few tokens,
                           prefixed by the byte that picks the reader (0 the product's file, 1 a speculators
                           folder, 2 a vLLM connector folder, 3 a DeepSpec cache's index record and shard).

  python3 capture_formats.py   (after decode.py capture; reads the target and the product's capture file)
"""
import json
import struct

import numpy as np
import torch

import common
import draftconfigs as dc
import stio
from decode import CAPTURE, PROMPT
from target import Target, rms_norm

FORMAT_SAMPLES = 4  # sequences copied into each tool's layout (the first of the capture)
PROBE_SAMPLES = 2  # sequences of the shifted and post-norm captures (they hold more layers or are re-run)
E4M3_MAX = 448.0


def e4m3_values() -> np.ndarray:
    """The value of every float8_e4m3fn code 0..255 (OCP FP8: bias 7, no infinities, S.1111.111 is NaN)."""
    out = np.zeros(256, dtype=np.float64)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exponent, mantissa = (code >> 3) & 0xF, code & 0x7
        if exponent == 0xF and mantissa == 0x7:
            out[code] = np.nan
        elif exponent == 0:
            out[code] = sign * mantissa / 8.0 * 2.0 ** -6
        else:
            out[code] = sign * (1.0 + mantissa / 8.0) * 2.0 ** (exponent - 7)
    return out


def to_e4m3(x: np.ndarray) -> np.ndarray:
    """Codes of float32 @p x (|x| < 464) rounded to the nearest E4M3 value, ties to the even code."""
    values = e4m3_values()
    positive = values[:0x7F]  # codes 0x00..0x7E, increasing
    magnitude = np.abs(x.astype(np.float64))
    assert magnitude.max() < 464.0  # x / scale may exceed 448 by an ulp; it rounds to 448 as torch does
    upper = np.clip(np.searchsorted(positive, magnitude), 1, len(positive) - 1)
    lower = upper - 1
    below, above = magnitude - positive[lower], positive[upper] - magnitude
    code = np.where(below < above, lower, upper)
    tie = below == above
    code = np.where(tie, np.where(lower % 2 == 0, lower, upper), code)
    code = np.where(magnitude == 0, 0, code)
    sign = np.signbit(x).astype(np.int64) << 7  # -0.0 and negatives that round to zero keep the sign
    return (code | sign).astype(np.uint8)


def quantize_per_token(hidden: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """speculators' per-token rule on [T, n_ids, H]: one float32 scale per token over all its layers."""
    x = hidden.float().numpy()
    amax = np.abs(x).reshape(x.shape[0], -1).max(axis=1).astype(np.float32)
    scale = np.maximum(amax / np.float32(E4M3_MAX), np.float32(1e-12)).astype(np.float32)
    codes = to_e4m3((x / scale[:, None, None]).astype(np.float32))
    return codes, scale.reshape(-1, 1, 1)


def dequantize(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return (e4m3_values()[codes].astype(np.float32) * scale).astype(np.float32)


def request_id(tokens: torch.Tensor) -> str:
    """A request id of vLLM's shape (cmpl-<hex>-0), fixed by the sequence so the files are reproducible."""
    return "cmpl-" + common.sha256_bytes(tokens.numpy().tobytes())[:32] + "-0"


def product_capture(path, hidden: torch.Tensor | np.ndarray, tokens: list[torch.Tensor], ids: list[int],
                    meta: dict, extra: dict):
    n = len(tokens)
    length = tokens[0].shape[0]
    mask = torch.zeros(n * length, dtype=torch.uint8)
    for s in range(n):
        mask[s * length + PROMPT:(s + 1) * length] = 1
    hidden = torch.from_numpy(hidden) if isinstance(hidden, np.ndarray) else hidden
    path.parent.mkdir(parents=True, exist_ok=True)
    stio.save(path, {"hidden_states": hidden, "token_ids": torch.cat(tokens).to(torch.int32),
                     "sample_offsets": torch.arange(0, (n + 1) * length, length, dtype=torch.int64),
                     "loss_mask": mask},
              {**meta, "layer_ids": json.dumps(ids), "hidden_size": str(hidden.shape[2]), **extra})


DEEPSPEC_RECORD = struct.Struct("<QIIQQQQQ")
DEEPSPEC_PER_SHARD = 2


def deepspec_cache(target: Target, sequences: list[torch.Tensor], hidden: list[torch.Tensor], ids: list[int]):
    folder = common.TRAINED / "capture-deepspec"
    folder.mkdir(parents=True, exist_ok=True)
    aux = ids[:-1]  # the draft's layers; DeepSpec stores the last one apart, after the norm
    shards, index, blobs = [], b"", {}
    for s, (tokens, h) in enumerate(zip(sequences, hidden)):
        shard = s // DEEPSPEC_PER_SHARD
        if shard == len(shards):
            shards.append({"shard_id": shard, "file_name": f"shard-{shard:05d}.bin"})
            blobs[shard] = b""
        length = tokens.shape[0]
        last = rms_norm(target(tokens, capture=True)[1][:, -1], target.norm, dc.TARGET.rms_norm_eps)
        mask = torch.zeros(length, dtype=torch.uint8)
        mask[PROMPT:] = 1
        parts = [tokens.to(torch.int32).numpy().tobytes(), torch.ones(length, dtype=torch.uint8).numpy().tobytes(),
                 mask.numpy().tobytes(), h[:, :len(aux)].contiguous().view(torch.int16).numpy().tobytes(),
                 last.to(torch.bfloat16).view(torch.int16).numpy().tobytes()]
        offsets = []
        for part in parts:
            offsets.append(len(blobs[shard]))
            blobs[shard] += part
        index += DEEPSPEC_RECORD.pack(s, shard, length, *offsets)
    for shard, blob in blobs.items():
        (folder / shards[shard]["file_name"]).write_bytes(blob)
    (folder / "samples.idx").write_bytes(index)
    common.write_json(folder / "manifest.json", {
        "version": 2, "num_samples": len(sequences), "num_shards": len(shards),
        "target_layer_ids": [i - 1 for i in aux], "hidden_dtype": "bfloat16", "token_dtype": "int32",
        "mask_dtype": "uint8", "index_record_size": DEEPSPEC_RECORD.size, "hidden_size": dc.TARGET.hidden_size,
        "shards": shards, "target_model_name_or_path": "tiny-stdlib-target"})


SEED_TOKENS = 3


def fuzz_seeds(hidden: torch.Tensor, tokens: torch.Tensor, ids: list[int], meta: dict):
    folder = common.REPO / "tests" / "fuzz" / "corpus-capture"
    folder.mkdir(parents=True, exist_ok=True)
    codes, scale = quantize_per_token(hidden)
    seeds = {
        "product": (0, {"hidden_states": hidden, "token_ids": tokens.to(torch.int32),
                        "sample_offsets": torch.tensor([0, 1, len(tokens)]),
                        "loss_mask": torch.tensor([0] + [1] * (len(tokens) - 1), dtype=torch.uint8)},
                    {**meta, "layer_ids": json.dumps(ids), "hidden_size": str(hidden.shape[2])}),
        "speculators-fp8": (1, {"hidden_states": stio.Float8E4M3(torch.from_numpy(codes)),
                                "hidden_states_scales": torch.from_numpy(scale), "token_ids": tokens}, {}),
        "vllm": (2, {"hidden_states": hidden, "token_ids": tokens}, {}),
    }
    record = DEEPSPEC_RECORD.pack(0, 0, len(tokens), 0, 4 * len(tokens), 5 * len(tokens), 6 * len(tokens),
                                  6 * len(tokens) + hidden.shape[0] * 3 * hidden.shape[2] * 2)
    shard = (tokens.to(torch.int32).numpy().tobytes() + bytes([1]) * len(tokens) + bytes([0, 1, 1]) +
             hidden[:, :3].contiguous().view(torch.int16).numpy().tobytes() +
             hidden[:, 3].contiguous().view(torch.int16).numpy().tobytes())
    (folder / "deepspec").write_bytes(bytes([3]) + record + shard)
    for name, (reader, tensors, metadata) in seeds.items():
        image = folder / (name + ".tmp")
        stio.save(image, tensors, metadata)
        (folder / name).write_bytes(bytes([reader]) + image.read_bytes())
        image.unlink()


@torch.no_grad()
def main():
    common.threads()
    tensors, meta = stio.load(common.TRAINED / CAPTURE / "hidden_states.safetensors")
    off = tensors["sample_offsets"].tolist()
    ids = json.loads(meta["layer_ids"])
    sequences = [tensors["token_ids"][off[s]:off[s + 1]].to(torch.int64) for s in range(FORMAT_SAMPLES)]
    hidden = [tensors["hidden_states"][off[s]:off[s + 1]] for s in range(FORMAT_SAMPLES)]
    sidecar = {"layer_ids": ids, "greedy": True, "skip_tokens": PROMPT, "last_layer_included": True}

    vllm = common.TRAINED / "capture-vllm"
    vllm.mkdir(parents=True, exist_ok=True)
    for tokens, h in zip(sequences, hidden):
        name = request_id(tokens) + ".safetensors"
        stio.save(vllm / name, {"hidden_states": h, "token_ids": tokens}, {})
        (vllm / (name + ".lock")).write_bytes(b"")

    fp8 = common.TRAINED / "capture-hs-fp8"
    fp8.mkdir(parents=True, exist_ok=True)
    dequantized = []
    for s, (tokens, h) in enumerate(zip(sequences, hidden)):
        codes, scale = quantize_per_token(h)
        stio.save(fp8 / f"hs_{s}.safetensors",
                  {"hidden_states": stio.Float8E4M3(torch.from_numpy(codes)),
                   "hidden_states_scales": torch.from_numpy(scale), "token_ids": tokens}, {})
        dequantized.append(dequantize(codes, scale))
    common.write_json(fp8 / "capture.json", sidecar)
    product_capture(common.TRAINED / "capture-fp8-dequantized" / "hidden_states.safetensors",
                    np.concatenate(dequantized), sequences, ids, meta,
                    {"capture": "speculators FP8 hidden states (capture-hs-fp8), dequantized in FP32",
                     "dtype": "float32"})

    target = Target.load(common.TRAINED / "target")
    deepspec_cache(target, sequences, hidden, ids)
    probe = sequences[:PROBE_SAMPLES]
    streams = [target(tokens, capture=True)[1] for tokens in probe]  # [T, L + 1, H] FP32
    all_ids = list(range(dc.TARGET.num_hidden_layers + 1))
    product_capture(common.TRAINED / "capture-shifted" / "hidden_states.safetensors",
                    torch.cat([s.to(torch.bfloat16) for s in streams]), probe, [i + 1 for i in all_ids], meta,
                    {"capture": "every residual stream, labelled one layer off", "target_num_layers": "7"})
    c = dc.TARGET
    post = [torch.cat([s[:, ids[:-1]], rms_norm(s[:, -1:], target.norm, c.rms_norm_eps)], dim=1) for s in streams]
    product_capture(common.TRAINED / "capture-postnorm" / "hidden_states.safetensors",
                    torch.cat([p.to(torch.bfloat16) for p in post]), probe, ids, meta,
                    {"capture": "the last layer after the target's final norm"})
    fuzz_seeds(hidden[0][:SEED_TOKENS], sequences[0][:SEED_TOKENS], ids, meta)
    print(f"capture formats: {FORMAT_SAMPLES} sequences per layout, {PROBE_SAMPLES} per probe capture")


if __name__ == "__main__":
    main()
