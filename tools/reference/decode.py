"""Held-out sequences, their capture, and the online greedy speculative-decoding loop of every trained draft.

  python3 decode.py capture
      greedy continuations of held-out prompts by the target, written as the product's capture file (BF16
      hidden states of aux ids 1, 3, 5 and 6), and the first sequences as a speculators hs_* directory
  python3 decode.py loop [FAMILY...]
      per draft: the online loop (the target verifies each cycle's k proposals) fed the capture's BF16
      features, and fed the verify passes' own FP32 features
  python3 decode.py quantized CLI [FAMILY...]
      the loop of each draft exported by the product (the CLI at CLI) as W4A16, W8A16, NVFP4A16 and
      FP8_DYNAMIC, dequantized here from the checkpoint (FP8_DYNAMIC's inputs rounded to FP8 per token)
  python3 decode.py allocated CLI [FAMILY...]
      the loop of the two plans the product's acceptance-driven allocator returns for each draft (at the
      W4A16 recipe's streamed bytes, and the fewest bytes reaching the recipe's KL), exported by the product
      and dequantized here, against the recipe's and the BF16 loops: every sample and the held-out (odd)
      samples the product reports on

The loop records every cycle: the bonus token's position (the anchor), the accepted length, the k proposals
and their top-2 logit margins. The tokens are the target's greedy choices, so every loop's output equals the
captured sequence (verified speculative decoding is lossless) up to near-ties of the target itself."""
import json
import sys

import numpy as np
import torch

import common
import draftconfigs as dc
import stio
from drafts import Draft, extend_context, load_shared
from target import Target

PROMPT = 64
LENGTH = 256
SAMPLES = 64
CAPTURE = "capture"


@torch.no_grad()
def greedy_sequence(target: Target, prompt: torch.Tensor, length: int) -> torch.Tensor:
    cache = [None] * target.config.num_hidden_layers
    logits = target(prompt, cache=cache)
    out = prompt.tolist()
    while len(out) < length:
        nxt = int(logits[-1].argmax())
        out.append(nxt)
        logits = target(torch.tensor([nxt]), cache=cache)
    return torch.tensor(out)


def prompts() -> list[torch.Tensor]:
    """SAMPLES prompts of PROMPT tokens at evenly spaced held-out positions that start a line."""
    heldout = np.load(common.WORK / "corpus-heldout.npy").astype(np.int64)
    import corpus
    newline = corpus.tokenizer().piece_to_id(corpus.NEWLINE)
    step = (len(heldout) - LENGTH) // SAMPLES
    out = []
    for s in range(SAMPLES):
        i = s * step
        while heldout[i] != newline:
            i += 1
        out.append(torch.from_numpy(heldout[i + 1:i + 1 + PROMPT].copy()))
    return out


@torch.no_grad()
def capture():
    common.threads()
    target = Target.load(common.TRAINED / "target")
    sequences, hidden, mask = [], [], []
    for i, prompt in enumerate(prompts()):
        seq = greedy_sequence(target, prompt, LENGTH)
        _, streams = target(seq, capture=True)
        sequences.append(seq)
        hidden.append(streams[:, dc.CAPTURE_IDS].to(torch.bfloat16))
        m = torch.zeros(LENGTH, dtype=torch.uint8)
        m[PROMPT:] = 1
        mask.append(m)
        print(f"sample {i}", flush=True)
    offsets = torch.arange(0, (len(sequences) + 1) * LENGTH, LENGTH, dtype=torch.int64)
    folder = common.TRAINED / CAPTURE
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"format": "sparkulator.hidden-states/1", "target_model": "tiny-stdlib-target",
            "target_quantization": "bf16", "capture": "tools/reference/decode.py (PyTorch, FP32 on BF16 weights)",
            "layer_ids": json.dumps(dc.CAPTURE_IDS), "last_layer_included": "true",
            "hidden_size": str(dc.TARGET.hidden_size), "target_num_layers": str(dc.TARGET.num_hidden_layers),
            "greedy": "true", "dtype": "bfloat16"}
    stio.save(folder / "hidden_states.safetensors",
              {"hidden_states": torch.cat(hidden), "token_ids": torch.cat(sequences).to(torch.int32),
               "sample_offsets": offsets, "loss_mask": torch.cat(mask)}, meta)


HS_SAMPLES = 8  # the speculators copy holds the first sequences only (it repeats the capture's bytes)


def capture_hs():
    """The first HS_SAMPLES captured sequences as a speculators hs_*.safetensors directory: hidden_states
    [T, n_ids, H] and token_ids [T] per request, no metadata, and the capture.json sidecar naming the layer
    ids (speculators records them nowhere on disk) and the prompt length."""
    tensors, meta = stio.load(common.TRAINED / CAPTURE / "hidden_states.safetensors")
    off = tensors["sample_offsets"].tolist()
    folder = common.TRAINED / "capture-hs"
    folder.mkdir(parents=True, exist_ok=True)
    for s in range(HS_SAMPLES):
        stio.save(folder / f"hs_{s}.safetensors",
                  {"hidden_states": tensors["hidden_states"][off[s]:off[s + 1]],
                   "token_ids": tensors["token_ids"][off[s]:off[s + 1]].to(torch.int64)})
    common.write_json(folder / "capture.json", {"layer_ids": json.loads(meta["layer_ids"]), "greedy": True,
                                                "skip_tokens": PROMPT, "last_layer_included": True})


def read_capture():
    tensors, meta = stio.load(common.TRAINED / CAPTURE / "hidden_states.safetensors")
    ids = json.loads(meta["layer_ids"])
    off = tensors["sample_offsets"].tolist()
    slots = [ids.index(i) for i in dc.AUX_IDS]
    out = []
    for s in range(len(off) - 1):
        h = tensors["hidden_states"][off[s]:off[s + 1]][:, slots].float()
        out.append((tensors["token_ids"][off[s]:off[s + 1]].long(), h.reshape(h.shape[0], -1)))
    return out


class OnlineTarget:
    """The target as the serving loop runs it: a KV cache, a verify pass over [bonus, d_1..d_k], the aux
    hidden states of every position it processed (FP32), rolled back past the first rejected proposal."""

    def __init__(self, target: Target, prompt: torch.Tensor):
        self.target = target
        self.cache = [None] * target.config.num_hidden_layers
        logits, streams = target(prompt, cache=self.cache, capture=True)
        self.tokens = prompt.tolist()
        self.aux = streams[:, dc.AUX_IDS].reshape(len(self.tokens), -1)
        self.bonus = int(logits[-1].argmax())

    def verify(self, proposals: list[int]) -> list[int]:
        """Runs [bonus, proposals]; returns the target's tokens g_1..g_{k+1} and keeps the accepted ones."""
        block = [self.bonus] + proposals
        logits, streams = self.target(torch.tensor(block), cache=self.cache, capture=True)
        greedy = logits.argmax(-1).tolist()
        accepted = 0
        while accepted < len(proposals) and proposals[accepted] == greedy[accepted]:
            accepted += 1
        keep = 1 + accepted  # the bonus token and the accepted proposals
        self.tokens += block[:keep]
        self.aux = torch.cat([self.aux, streams[:keep, dc.AUX_IDS].reshape(keep, -1)])
        self.cache = [(k[:len(self.tokens)], v[:len(self.tokens)]) for k, v in self.cache]
        self.bonus = greedy[accepted]
        return greedy


def run_loop(draft: Draft, target: Target, sequence: torch.Tensor, captured_aux: torch.Tensor | None, k: int):
    """The online loop over one held-out sequence; with @p captured_aux the draft reads the capture's BF16
    features instead of the verify passes' FP32 ones. Cycles run while anchor + k < LENGTH (the same rule
    the product's replay uses: the k targets must exist)."""
    online = OnlineTarget(target, sequence[:PROMPT])
    cycles = []
    ctx, done = None, 0  # the draft's context of positions [0, done), extended as the loop goes
    while len(online.tokens) + k < LENGTH:
        anchor = len(online.tokens)  # the bonus token's position
        tokens = torch.tensor(online.tokens + [online.bonus])
        aux = captured_aux if captured_aux is not None else online.aux
        ctx = extend_context(ctx, draft.context(aux[done:anchor], tokens, start=done))
        done = anchor
        proposals, logits = draft.propose(ctx, tokens, torch.tensor([anchor]), k)
        proposals = proposals[0].tolist()
        top2 = logits[0].topk(2, dim=-1).values
        margin = (top2[:, 0] - top2[:, 1]) / logits[0].abs().amax(-1)
        greedy = online.verify(proposals)
        accepted = next((i for i in range(k) if proposals[i] != greedy[i]), k)
        # [anchor, accepted, proposals, top-2 margins relative to the largest |logit|]
        cycles.append([anchor, accepted, proposals, [float(f"{float(m):.3g}") for m in margin]])
    return cycles, online.tokens


# The plans of the quantized loops: the scheme on every module the architecture's preset quantizes (block
# drafts keep q/k/v BF16: vLLM reads them raw for the context K/V).
SCHEMES = ("W4A16", "W8A16", "NVFP4A16", "FP8_DYNAMIC")


def export_options(family: str, scheme: str) -> list[str]:
    if scheme == "W4A16":
        return []
    if family == "eagle3":
        return ["--scheme", f"Linear={scheme}"]
    return ["--scheme", r"re:.*\.(mlp\..*|o_proj|fc)$=" + scheme]


@torch.no_grad()
def run_loops(family: str, draft: Draft, target: Target, captured, modes, name: str, export=None):
    for mode in modes:
        out = common.TRAINED / "loops" / f"{name}-{mode}.json"
        if out.exists() and out.stat().st_mtime > (common.TRAINED / family / "model.safetensors").stat().st_mtime:
            print(f"{name} {mode}: done already", flush=True)  # resumed: newer than the draft it ran
            continue
        result = {"draft": family, "export": export, "k": dc.K, "features": mode,
                  "cycle": "[anchor, accepted, proposals, relative top-2 margins]", "samples": []}
        attempted, accepted = np.zeros(dc.K, np.int64), np.zeros(dc.K, np.int64)
        diverged = 0
        for s, (tokens, aux) in enumerate(captured):
            cycles, produced = run_loop(draft, target, tokens, aux if mode == "capture-features" else None, dc.K)
            # The loop's tokens are the target's greedy choices in verify passes of k + 1 rows; the
            # capture's came one row at a time: an FP32 near-tie of the target can make them differ.
            same = produced == tokens[:len(produced)].tolist()
            diverged += 0 if same else 1
            for c in cycles:
                attempted += 1
                accepted[:c[1]] += 1
            result["samples"].append({"sample": s, "matches_capture": same, "cycles": cycles})
        result["attempted"] = attempted.tolist()
        result["accepted"] = accepted.tolist()
        result["sequences_differing_from_capture"] = diverged
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, separators=(",", ":")) + "\n")
        a = accepted / attempted
        print(f"{name} {mode}: cycles {attempted[0]} a_i {np.round(a, 4).tolist()} tau {1 + a.sum():.3f} "
              f"diverged {diverged}", flush=True)


def loop(families):
    """The BF16 drafts, fed the capture's features and their own."""
    common.threads()
    target = Target.load(common.TRAINED / "target")
    shared = load_shared(common.TRAINED / "target")
    captured = read_capture()
    for family in families:
        draft = Draft.load(common.TRAINED / family, shared)
        run_loops(family, draft, target, captured, ("capture-features", "online-features"), family)


def quantized(cli: str, families):
    """Each draft exported by the product under each scheme, dequantized here from the checkpoint."""
    import subprocess
    import ctdecode
    common.threads()
    target = Target.load(common.TRAINED / "target")
    shared = load_shared(common.TRAINED / "target")
    captured = read_capture()
    for family in families:
        for scheme in SCHEMES:
            options = export_options(family, scheme)
            out = common.WORK / "quantized" / f"{family}-{scheme}"
            draft_file = common.TRAINED / family / "model.safetensors"
            if not out.exists() or out.stat().st_mtime < draft_file.stat().st_mtime:
                subprocess.run(["rm", "-rf", str(out)], check=True)
                subprocess.run([cli, "quantize", str(common.TRAINED / family), "--out", str(out)] + options,
                               check=True, capture_output=True)
            draft = Draft.load(common.TRAINED / family, shared, tensors=ctdecode.dense_tensors(out),
                               fp8_inputs=ctdecode.fp8_inputs(out))
            modes = ("capture-features", "online-features") if scheme == "W4A16" else ("capture-features",)
            run_loops(family, draft, target, captured, modes, f"{family}-{scheme}", ["quantize"] + options)


def loop_tau(path, samples=None) -> tuple[float, int]:
    """τ = 1 + Σ a_i of a recorded loop over @p samples (all when None), and its cycle count."""
    result = json.loads(path.read_text())
    attempted, accepted = np.zeros(result["k"]), np.zeros(result["k"])
    for record in result["samples"]:
        if samples is None or record["sample"] in samples:
            for c in record["cycles"]:
                attempted += 1
                accepted[:c[1]] += 1
    return 1 + float((accepted / attempted).sum()), int(attempted[0])


def allocated(cli: str, families):
    """The acceptance-driven allocator's plans, exported by the product and run by the reference loop."""
    import subprocess
    import ctdecode
    common.threads()
    target = Target.load(common.TRAINED / "target")
    shared = load_shared(common.TRAINED / "target")
    captured = read_capture()
    odd = set(range(1, SAMPLES, 2))
    for family in families:
        work = common.WORK / "allocated" / family
        work.mkdir(parents=True, exist_ok=True)
        answer = work / "plan.json"
        if not answer.exists():
            run = subprocess.run([cli, "plan", str(common.TRAINED / family), "--budget", "preset", "--compare-preset",
                                  "--hidden-states", str(common.TRAINED / CAPTURE), "--target-model",
                                  str(common.TRAINED / "target"), "--k", str(dc.K), "--json",
                                  "--loss", "kl"],  # the committed loops and docs' tables are of the KL loss
                                 check=True, capture_output=True, text=True)
            answer.write_text(run.stdout)
        allocation = json.loads(answer.read_text())["allocation"]
        same = allocation["preset_comparison"]["allocator_same_error"]
        plans = {"allocated": (allocation["rules"], allocation["rounding_rules"], allocation["streamed_bytes"]),
                 "allocated-fewest-bytes": (same["rules"], same["rounding_rules"], same["streamed_bytes"])}
        for name, (rules, roundings, _) in plans.items():
            options = [o for r in rules for o in ("--scheme", r)] + [o for r in roundings for o in ("--rounding", r)]
            out = work / name
            if not out.exists():
                subprocess.run([cli, "quantize", str(common.TRAINED / family), "--out", str(out)] + options,
                               check=True, capture_output=True)
            draft = Draft.load(common.TRAINED / family, shared, tensors=ctdecode.dense_tensors(out),
                               fp8_inputs=ctdecode.fp8_inputs(out))
            run_loops(family, draft, target, captured, ("capture-features",), f"{family}-{name}",
                      ["quantize"] + options)
        recipe = allocation["preset_comparison"]["preset_point"]["streamed_bytes"]
        print(f"{family}: tau of the online loop, all {SAMPLES} samples / the held-out odd ones")
        rows = [("BF16", family, None), ("W4A16 recipe", f"{family}-W4A16", recipe)] + \
               [(name, f"{family}-{name}", plans[name][2]) for name in plans]
        for label, loop_name, streamed in rows:
            path = common.TRAINED / "loops" / f"{loop_name}-capture-features.json"
            (all_tau, cycles), (odd_tau, _) = loop_tau(path), loop_tau(path, odd)
            size = f"{streamed / 1024:9.1f} KiB" if streamed else " " * 13
            print(f"  {label:24s} {size}  tau {all_tau:.4f} ({cycles} cycles)  held out {odd_tau:.4f}", flush=True)


FAMILIES = ("eagle3", "qwen3-dflash", "dspark")


if __name__ == "__main__":
    clock = common.Clock()
    if sys.argv[1] == "quantized":
        quantized(sys.argv[2], sys.argv[3:] or FAMILIES)
    elif sys.argv[1] == "allocated":
        allocated(sys.argv[2], sys.argv[3:] or FAMILIES)
    elif sys.argv[1] == "loop":
        loop(sys.argv[2:] or FAMILIES)
    else:
        capture()
        capture_hs()
    # Each command's line and wall time, for the manifest.
    record = common.WORK / "loops" / "result.json"
    done = json.loads(record.read_text()) if record.exists() else {}
    done[" ".join(sys.argv[1:2] + sys.argv[3 if sys.argv[1] in ("quantized", "allocated") else 2:])] = {
        "command": common.command_line(), "seconds": round(clock.seconds(), 1),
                         "samples": SAMPLES, "prompt_tokens": PROMPT, "length": LENGTH, "k": dc.K}
    common.write_json(record, done)
