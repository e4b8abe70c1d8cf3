"""Acceptance when the target samples at a temperature T, computed here independently of the product
(docs/spec/draft-forward.md §11), and the loops and captures that say what it estimates.

  α_j = p_T(x_j)                   greedy drafting (vLLM's draft_sample_method "greedy": the draft's argmax
                                   x_j, accepted with the target's probability of it)
  α_j = Σ_v min(p_T(v), q_T(v))    probabilistic drafting (a sample of the draft at T, accepted by standard
                                   rejection sampling)
  a_i(T) = mean over anchors of ∏_{j≤i} α_j

p_T is softmax(lm_head(rms_norm(h_last)) / T) from the capture's last layer (the target's final norm and
head); q_T is softmax(draft logits / T); the draft is fed the captured tokens y_<j wherever it takes earlier
tokens (EAGLE-3's chain, DSpark's Markov head).

  python3 sampling.py capture --temperature T --seed S --out DIR [--samples N]
      the target's own continuations of the trained capture's prompts, sampled at T (seeded): a capture of
      the product's format whose metadata says greedy false and the temperature
  python3 sampling.py loop FAMILY --temperature T --seed S [--samples N] [--runs R]
      the online loop with a greedy draft and the target sampling at T (standard rejection sampling, the
      residual distribution on a rejection, a bonus token from p_T): τ per cycle and its standard error
      (sequences as clusters), over R seeded runs of the N prompts
  python3 sampling.py bias FAMILY --temperature T --cli CLI [--runs R]
      one row of docs/acceptance.md's bias table: the greedy capture's estimate over all anchors, a capture
      sampled at T replayed (counted and expected form), and the online loop"""
import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import torch

import common
import draftconfigs as dc
import stio
from drafts import Draft, extend_context, load_shared
from target import Target, rms_norm

LENGTH = 256


class TargetDistribution:
    """The target's next-token logits from a capture's last layer: lm_head(rms_norm(h_last))."""

    def __init__(self, target_folder: Path):
        config = json.loads((target_folder / "config.json").read_text())
        tensors, _ = stio.load(target_folder / "model.safetensors")
        self.norm = tensors["model.norm.weight"].float()
        self.head = tensors["lm_head.weight"].float()
        self.eps = config["rms_norm_eps"]

    def logits(self, h_last: torch.Tensor) -> torch.Tensor:
        return rms_norm(h_last.float(), self.norm, self.eps) @ self.head.T


def load_capture(folder: Path):
    tensors, meta = stio.load(folder / "hidden_states.safetensors")
    return tensors, json.loads(meta["layer_ids"])


@torch.no_grad()
def acceptance_probabilities(family: str, capture: Path, samples, positions, k: int, temperature: float,
                             drafting: str) -> torch.Tensor:
    """α [M, k] at the anchors (samples[i], positions[i]) of @p capture."""
    tensors, layer_ids = load_capture(capture)
    target = TargetDistribution(common.TRAINED / "target")
    draft = Draft.load(common.TRAINED / family, load_shared(common.TRAINED / "target"))
    slots = [layer_ids.index(i) for i in draft.spec.aux_ids]
    last = layer_ids.index(max(layer_ids))
    off = tensors["sample_offsets"].tolist()
    alpha = torch.zeros(len(samples), k, dtype=torch.float64)
    for s in sorted(set(samples.tolist())):
        rows = np.nonzero(samples == s)[0]
        tokens = tensors["token_ids"][off[s]:off[s + 1]].long()
        hidden = tensors["hidden_states"][off[s]:off[s + 1]]
        aux = hidden[:, slots].float().reshape(hidden.shape[0], -1)
        anchors = torch.from_numpy(positions[rows])
        ctx = draft.context(aux[:int(anchors.max())], tokens)
        fed = torch.stack([tokens[anchors + j] for j in range(k)], 1)  # y_0 (the anchor) … y_{k−1}
        if draft.spec.family == "eagle3":
            logits, _ = draft.chain_logits(ctx, anchors, k, forced=fed[:, 1:])
        else:
            logits, _ = draft.block_logits(ctx, tokens, anchors, k,
                                           previous=fed if draft.spec.markov_rank else None)
        # p_T for position anchor + j comes from the last layer at anchor + j − 1 … j = 1..k: rows anchor..
        h_last = torch.stack([hidden[anchors + j, last] for j in range(k)], 1)
        p = torch.softmax(target.logits(h_last).double() / temperature, -1)
        if drafting == "greedy":
            x = draft.to_target(logits.argmax(-1))
            alpha[torch.from_numpy(rows)] = p.gather(-1, x[..., None])[..., 0]
        else:
            q_draft = torch.softmax(logits.double() / temperature, -1)
            q = torch.zeros_like(p)
            ids = draft.to_target(torch.arange(logits.shape[-1]))
            q[..., ids] = q_draft
            alpha[torch.from_numpy(rows)] = torch.minimum(p, q).sum(-1)
    return alpha


@torch.no_grad()
def expected_accepted(family: str, capture: Path, samples, positions, k: int,
                      draft_temperatures: list[float]) -> np.ndarray:
    """The target-aware objective on a greedy capture: per draft temperature t, the mean over the anchors
    of Σ_i ∏_{j≤i} q_t(y_j), q_t the draft's softmax at t fed the target's tokens y_<j, y_j = tokens[a+1+j]."""
    tensors, layer_ids = load_capture(capture)
    draft = Draft.load(common.TRAINED / family, load_shared(common.TRAINED / "target"))
    slots = [layer_ids.index(i) for i in draft.spec.aux_ids]
    off = tensors["sample_offsets"].tolist()
    per_anchor = torch.zeros(len(draft_temperatures), len(samples), dtype=torch.float64)
    for s in sorted(set(samples.tolist())):
        rows = torch.from_numpy(np.nonzero(samples == s)[0])
        tokens = tensors["token_ids"][off[s]:off[s + 1]].long()
        hidden = tensors["hidden_states"][off[s]:off[s + 1]]
        aux = hidden[:, slots].float().reshape(hidden.shape[0], -1)
        anchors = torch.from_numpy(positions[rows.numpy()])
        ctx = draft.context(aux[:int(anchors.max())], tokens)
        fed = torch.stack([tokens[anchors + j] for j in range(k)], 1)
        if draft.spec.family == "eagle3":
            logits, _ = draft.chain_logits(ctx, anchors, k, forced=fed[:, 1:])
        else:
            logits, _ = draft.block_logits(ctx, tokens, anchors, k,
                                           previous=fed if draft.spec.markov_rank else None)
        y = torch.stack([tokens[anchors + 1 + j] for j in range(k)], 1)
        ids = draft.to_target(torch.arange(logits.shape[-1]))
        for t, temperature in enumerate(draft_temperatures):
            q_draft = torch.softmax(logits.double() / temperature, -1)
            q = torch.zeros(*q_draft.shape[:-1], max(int(ids.max()), int(y.max())) + 1, dtype=torch.float64)
            q[..., ids] = q_draft
            per_anchor[t, rows] = q.gather(-1, y[..., None])[..., 0].cumprod(-1).sum(-1)
    return per_anchor.mean(-1).numpy()


def a_i(alpha: torch.Tensor) -> np.ndarray:
    return alpha.cumprod(-1).mean(0).numpy()


# -- captures sampled at T -------------------------------------------------------------------------------
@torch.no_grad()
def sampled_capture(out: Path, temperature: float, seed: int, samples: int):
    """The trained capture's prompts (its first positions outside the loss mask) continued by the target
    sampling at @p temperature with a seeded generator, captured as decode.py captures greedy ones."""
    common.threads()
    target = Target.load(common.TRAINED / "target")
    tensors, meta = stio.load(common.TRAINED / "capture" / "hidden_states.safetensors")
    off = tensors["sample_offsets"].tolist()
    generator = torch.Generator().manual_seed(seed)
    sequences, hidden, mask = [], [], []
    for s in range(samples):
        prompt_mask = tensors["loss_mask"][off[s]:off[s + 1]]
        prompt_length = int((prompt_mask == 0).sum())
        seq = tensors["token_ids"][off[s]:off[s] + prompt_length].long().tolist()
        cache = [None] * target.config.num_hidden_layers
        logits = target(torch.tensor(seq), cache=cache)
        while len(seq) < LENGTH:
            p = torch.softmax(logits[-1].double() / temperature, -1)
            nxt = int(torch.multinomial(p, 1, generator=generator))
            seq.append(nxt)
            logits = target(torch.tensor([nxt]), cache=cache)
        seq = torch.tensor(seq)
        _, streams = target(seq, capture=True)
        sequences.append(seq)
        hidden.append(streams[:, dc.CAPTURE_IDS].to(torch.bfloat16))
        m = torch.zeros(LENGTH, dtype=torch.uint8)
        m[prompt_length:] = 1
        mask.append(m)
    meta = dict(meta)
    meta.update({"greedy": "false", "temperature": f"{temperature:g}",
                 "capture": f"tools/reference/sampling.py capture --temperature {temperature:g} --seed {seed}"})
    out.mkdir(parents=True, exist_ok=True)
    offsets = torch.arange(0, (samples + 1) * LENGTH, LENGTH, dtype=torch.int64)
    stio.save(out / "hidden_states.safetensors",
              {"hidden_states": torch.cat(hidden), "token_ids": torch.cat(sequences).to(torch.int32),
               "sample_offsets": offsets, "loss_mask": torch.cat(mask)}, meta)


# -- the online loop at T ----------------------------------------------------------------------------------
@torch.no_grad()
def online_loop(draft: Draft, target: Target, prompt: torch.Tensor, temperature: float, k: int,
                generator: torch.Generator) -> list[int]:
    """Accepted lengths of every cycle of speculative sampling with a greedy draft (fed its own proposals
    and the verify passes' FP32 features) and the target sampling at @p temperature, until LENGTH tokens."""
    cache = [None] * target.config.num_hidden_layers
    logits, streams = target(prompt, cache=cache, capture=True)
    tokens = prompt.tolist()
    aux = streams[:, dc.AUX_IDS].reshape(len(tokens), -1)

    def sample(p):
        return int(torch.multinomial(p, 1, generator=generator))

    bonus = sample(torch.softmax(logits[-1].double() / temperature, -1))
    ctx, done, lengths = None, 0, []
    while len(tokens) + k < LENGTH:
        anchor = len(tokens)
        seq = torch.tensor(tokens + [bonus])
        ctx = extend_context(ctx, draft.context(aux[done:anchor], seq, start=done))
        done = anchor
        proposals, _ = draft.propose(ctx, seq, torch.tensor([anchor]), k)
        proposals = proposals[0].tolist()
        block = [bonus] + proposals
        logits, streams = target(torch.tensor(block), cache=cache, capture=True)
        p = torch.softmax(logits.double() / temperature, -1)  # row j: the target at block position j
        accepted = 0
        while accepted < k and float(torch.rand(1, generator=generator, dtype=torch.float64)) < \
                float(p[accepted, proposals[accepted]]):
            accepted += 1
        if accepted < k:  # the residual max(p − onehot(x), 0), renormalised
            residual = p[accepted].clone()
            residual[proposals[accepted]] = 0
            nxt = sample(residual / residual.sum())
        else:
            nxt = sample(p[k])
        keep = 1 + accepted
        tokens += block[:keep]
        aux = torch.cat([aux, streams[:keep, dc.AUX_IDS].reshape(keep, -1)])
        cache = [(kk[:len(tokens)], vv[:len(tokens)]) for kk, vv in cache]
        bonus = nxt
        lengths.append(accepted)
    return lengths


def online_tau(family: str, temperature: float, seed: int, samples: int, runs: int) -> tuple[float, float, int]:
    """τ per cycle (1 + accepted tokens / cycles) of @p runs seeded loops over the first @p samples prompts,
    with its standard error: a ratio of sums over independent sequences (the delta method, sequences as
    clusters, since a sequence's cycles are not independent)."""
    common.threads()
    target = Target.load(common.TRAINED / "target")
    draft = Draft.load(common.TRAINED / family, load_shared(common.TRAINED / "target"))
    tensors, _ = stio.load(common.TRAINED / "capture" / "hidden_states.safetensors")
    off = tensors["sample_offsets"].tolist()
    accepted, cycles = [], []  # per sequence of every run
    for run in range(runs):
        generator = torch.Generator().manual_seed(seed + run)
        for s in range(samples):
            prompt_length = int((tensors["loss_mask"][off[s]:off[s + 1]] == 0).sum())
            lengths = online_loop(draft, target, tensors["token_ids"][off[s]:off[s] + prompt_length].long(),
                                  temperature, dc.K, generator)
            accepted.append(sum(lengths))
            cycles.append(len(lengths))
    accepted, cycles = np.array(accepted, float), np.array(cycles, float)
    ratio = accepted.sum() / cycles.sum()
    n = len(cycles)
    se = np.sqrt(n / (n - 1) * ((accepted - ratio * cycles) ** 2).sum()) / cycles.sum()
    return 1 + float(ratio), float(se), int(cycles.sum())


def product(cli: str, family: str, capture: Path, extra: list[str]) -> dict:
    cmd = [cli, "acceptance", str(common.TRAINED / family), "--hidden-states", str(capture), "--target-model",
           str(common.TRAINED / "target"), "--k", str(dc.K), "--bf16-only", "--json"] + extra
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {run.returncode}: {run.stderr}")
    return json.loads(run.stdout)


def bias_row(cli: str, family: str, temperature: float, runs: int, samples: int, seed: int) -> dict:
    t = ["--temperature", f"{temperature:g}"]
    greedy = product(cli, family, common.TRAINED / "capture", t + ["--anchors", "all"])
    with tempfile.TemporaryDirectory() as tmp:
        capture = Path(tmp) / "sampled"
        sampled_capture(capture, temperature, seed, samples)
        every = product(cli, family, capture, t + ["--anchors", "all"])
        replay = product(cli, family, capture, t + ["--replay"])["base"]
    counted = 1 + sum(p["accept_base_counted"] for p in replay["positions"])
    mean, se, cycles = online_tau(family, temperature, seed + 1000, samples, runs)
    return {"family": family, "temperature": temperature, "greedy_capture_all_anchors": greedy["tau_base"],
            "sampled_capture_all_anchors": every["tau_base"], "sampled_replay_counted": counted,
            "sampled_replay_expected": replay["tau_base"], "replay_cycles": replay["anchors"],
            "online_tau": mean, "online_se": se, "online_runs": runs, "online_cycles": cycles}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["capture", "loop", "bias"])
    ap.add_argument("family", nargs="?")
    ap.add_argument("--temperature", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--cli")
    args = ap.parse_args()
    if args.what == "capture":
        sampled_capture(Path(args.out), args.temperature, args.seed, args.samples)
    elif args.what == "loop":
        mean, se, cycles = online_tau(args.family, args.temperature, args.seed, args.samples, args.runs)
        print(json.dumps({"tau": mean, "se": se, "cycles": cycles}))
    else:
        print(json.dumps(bias_row(args.cli, args.family, args.temperature, args.runs, args.samples, args.seed)))


if __name__ == "__main__":
    main()
