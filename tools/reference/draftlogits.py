"""The PyTorch drafts' logits on the trained capture: what check_product.py and golden_logits.py hold the
product's forward against."""
import json

import numpy as np
import torch

import common
import stio
from drafts import Draft, load_shared


def captured():
    tensors, meta = stio.load(common.TRAINED / "capture" / "hidden_states.safetensors")
    return tensors, json.loads(meta["layer_ids"])


@torch.no_grad()
def reference_logits(family: str, samples, positions, tensors, layer_ids, k: int, serving: bool = False):
    """The PyTorch draft's logits [M, k, draft vocabulary] at the anchors (samples[i], positions[i]) of the
    trained capture, fed its BF16 features; @p serving rounds every operation's output to BF16."""
    shared = load_shared(common.TRAINED / "target")
    draft = Draft.load(common.TRAINED / family, shared)
    if serving:
        draft.serve_bf16()
    slots = [layer_ids.index(i) for i in draft.spec.aux_ids]
    off = tensors["sample_offsets"].tolist()
    out = torch.zeros(len(samples), k, draft.spec.draft_vocab)
    for s in sorted(set(samples.tolist())):
        rows = np.nonzero(samples == s)[0]
        tokens = tensors["token_ids"][off[s]:off[s + 1]].long()
        h = tensors["hidden_states"][off[s]:off[s + 1]][:, slots].float()
        aux = h.reshape(h.shape[0], -1)
        length = int(positions[rows].max())
        ctx = draft.context(aux[:length], tokens)
        _, logits = draft.propose(ctx, tokens, torch.from_numpy(positions[rows]), k)
        out[torch.from_numpy(rows)] = logits
    return out
