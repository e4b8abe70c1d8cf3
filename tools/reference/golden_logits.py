"""Writes tests/data/golden-logits/<family>.safetensors: the PyTorch drafts' logits at a few fixed anchors of
the trained capture, the golden values tst_forwardgolden holds the product's forward against on every CPU
(natively, and under every emulated aarch64 CPU model, where torch cannot run).

  python3 golden_logits.py

Each file holds anchor_sample and anchor_position [M] (I64) and logits [M, k, draft vocabulary] (F32), with
k in its metadata. The anchors lie in the captured continuations, one per sequence, at positions spread over
the context lengths the drafts see."""
import numpy as np
import torch

import common
import stio
from draftlogits import captured, reference_logits

FAMILIES = ("eagle3", "qwen3-dflash", "dspark")
K = 4
ANCHORS = 8
OUT = common.REPO / "tests" / "data" / "golden-logits"


def anchors(tensors):
    """ANCHORS anchors, one in each of the first ANCHORS sequences, from the first generated token to the last
    with k tokens after it."""
    off = tensors["sample_offsets"].tolist()
    mask = tensors["loss_mask"]
    samples, positions = [], []
    for s in range(ANCHORS):
        generated = np.nonzero(mask[off[s]:off[s + 1]].numpy())[0]
        first, last = int(generated[0]), off[s + 1] - off[s] - K - 1
        samples.append(s)
        positions.append(first + (last - first) * s // (ANCHORS - 1))
    return np.array(samples, dtype=np.int64), np.array(positions, dtype=np.int64)


def main():
    torch.set_num_threads(2)
    tensors, layer_ids = captured()
    samples, positions = anchors(tensors)
    OUT.mkdir(parents=True, exist_ok=True)
    for family in FAMILIES:
        logits = reference_logits(family, samples, positions, tensors, layer_ids, K)
        stio.save(OUT / f"{family}.safetensors",
                  {"anchor_sample": torch.from_numpy(samples), "anchor_position": torch.from_numpy(positions),
                   "logits": logits.float().contiguous()},
                  {"format": "sparkulator.golden-logits/1", "family": family, "k": str(K),
                   "made_by": "tools/reference/golden_logits.py"})
        print(f"{family}: {len(samples)} anchors x {K} steps x {logits.shape[-1]} logits")


if __name__ == "__main__":
    main()
