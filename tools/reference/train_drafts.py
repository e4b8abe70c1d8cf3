"""Trains the EAGLE-3 head, the Qwen3 DFlash draft and the DSpark draft against the committed target, all
three on the same batches (one target pass feeds them), resuming from WORK/drafts/checkpoint.pt. Features are
the target's aux hidden states rounded to BF16, as a capture stores them; labels are the target's own greedy
choices (argmax of its logits), which is what verification accepts. The Laguna DFlash draft is not trained:
it is written with its seeded initial weights, for the forward checks.

  python3 train_drafts.py --steps 400
"""
import json
import math

import numpy as np
import torch
import torch.nn.functional as F

import common
import draftconfigs as dc
import stio
from drafts import Draft
from target import Target, attention

BATCH = 8
ANCHORS = 32  # block anchors per window
TTT_STEPS = 5  # EAGLE-3 training-time test: chain steps unrolled
LR, WARMUP = 2e-3, 50
DECAY = 0.8  # loss weight of position j: DECAY**j
FAMILIES = {"eagle3": dc.eagle3, "qwen3-dflash": dc.qwen3_dflash, "dspark": dc.dspark}


def lr_at(step, total):
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    return 0.1 * LR + 0.45 * LR * (1 + math.cos(math.pi * min(1.0, (step - WARMUP) / max(1, total - WARMUP))))


def draw_anchors(gen, windows: int, length: int) -> list[torch.Tensor]:
    """ANCHORS block anchors per window, in [1, length − k − 1]."""
    return [torch.randperm(length - dc.K - 1, generator=gen)[:ANCHORS] + 1 for _ in range(windows)]


def block_loss(draft: Draft, aux, tokens, labels, anchors_per_window):
    """DFlash / DSpark: blocks at the given anchors of each window, teacher-forced Markov walk."""
    ctx = draft.context(aux, tokens)
    total = 0.0
    weights = DECAY ** torch.arange(dc.K, dtype=torch.float32)
    for b, anchors in enumerate(anchors_per_window):
        # DFlash mask row j (1..k) predicts its own position a + j, DSpark row j (0..k−1) the next one,
        # a + j + 1: either way the target's choices y*[a], ..., y*[a + k − 1] (y*[t] predicts t + 1).
        ctx_b = {"k": [x[b] for x in ctx["k"]], "v": [x[b] for x in ctx["v"]]}
        rows = anchors[:, None] + torch.arange(dc.K)[None, :]
        target = labels[b][rows]
        previous = None
        if draft.spec.markov_rank:
            previous = torch.cat([tokens[b][anchors][:, None], target[:, :-1]], dim=1)
        logits, _ = draft.block_logits(ctx_b, tokens[b], anchors, dc.K, previous)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), reduction="none")
        total = total + (ce.view(-1, dc.K) * weights).sum(-1).mean() / weights.sum()
    return total / aux.shape[0]


def eagle3_loss(draft: Draft, aux, tokens, labels, to_draft):
    """Training-time test: step 0 at every position t, step j with the data token x[t+1+j] and the previous
    step's hidden state, attending to step-0 keys ≤ t and its own earlier steps at t (the inference cache)."""
    s = draft.spec
    B, T = aux.shape[:2]
    p = "midlayer"
    ctx = draft.context(aux, tokens)
    pos = torch.arange(T)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    eye = torch.eye(T, dtype=torch.bool)
    g, u = ctx["g"], ctx["u"]
    keys, values = [ctx["k"][0]], [ctx["v"][0]]
    total, norm = 0.0, 0.0
    for step in range(TTT_STEPS):
        if step > 0:
            nxt = torch.cat([tokens[:, 1 + step:T + 1 + step], torch.zeros(B, step, dtype=torch.long)], 1)[:, :T]
            u = torch.cat([draft.norm(p + ".input_layernorm", draft.embed(nxt)), draft.norm(p + ".hidden_norm", g)], -1)
            _, k, v = draft.qkv(p, u)
            keys.append(s.ropes[0](k, pos + step))
            values.append(v)
        q, _, _ = draft.qkv(p, u)
        q = s.ropes[0](q, pos + step)
        mask = torch.cat([causal] + [eye] * step, dim=1)
        a = attention(q, torch.cat(keys, 1), torch.cat(values, 1), mask)
        y = g + draft.linear(p + ".self_attn.o_proj", a.reshape(B, T, -1))
        y = y + draft.mlp(p, y)
        logits = draft.linear("lm_head", draft.norm("norm", y))
        # Step j at t predicts position t + 2 + j: the target's choice y*[t + 1 + j].
        idx = (pos + 1 + step).clamp(max=T - 1)
        target = to_draft[labels[:, idx]]
        target[:, pos + 1 + step > T - 1] = -100
        total = total + DECAY**step * F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                                                      ignore_index=-100)
        norm += DECAY**step
        g = y
    return total / norm


def main():
    args = common.start_training(4321, lambda ap: ap.add_argument(
        "--families", default=",".join(FAMILIES), help="the drafts to train (every draft's anchors are still "
        "drawn, so a draft trained alone gets what a joint run gives it)"))
    selected = args.families.split(",")
    target = Target.load(common.TRAINED / "target")
    for p in target.parameters():
        p.requires_grad_(False)
    target_tensors, _ = stio.load(common.TRAINED / "target" / "model.safetensors")
    shared = {"embed_tokens.weight": target_tensors["model.embed_tokens.weight"],
              "lm_head.weight": target_tensors["lm_head.weight"]}
    train = np.load(common.WORK / "corpus-train.npy")
    counts = np.bincount(train.astype(np.int64), minlength=dc.TARGET.vocab_size)
    drafts, opts = {}, {}
    for i, (family, make) in enumerate(FAMILIES.items()):
        if family not in selected:
            continue
        config = make()
        draft = Draft(config, shared)
        for name, t in dc.initial_tensors(config, family, target_tensors, counts, args.seed + i).items():
            draft.add(name, t)
        drafts[family] = draft
        opts[family] = torch.optim.AdamW(draft.weights.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.0)
    ckpt_path = common.WORK / "drafts" / f"checkpoint-{'-'.join(selected)}.pt"
    def restore(saved):
        for family in drafts:
            drafts[family].weights.load_state_dict(saved["drafts"][family])
            opts[family].load_state_dict(saved["opts"][family])

    state = common.resume(ckpt_path, restore)
    if "eagle3" in drafts:
        t2d = drafts["eagle3"].buffers_["t2d"]
        to_draft = torch.full((dc.TARGET.vocab_size,), -100, dtype=torch.long)
        to_draft[t2d] = torch.arange(int(t2d.sum()))
    rng = np.random.default_rng(args.seed + state["step"])
    gen = torch.Generator().manual_seed(args.seed + state["step"])
    clock = common.Clock(state["seconds"])
    running = {f: None for f in drafts}
    while state["step"] < args.steps:
        starts = rng.integers(0, len(train) - common.CONTEXT - 2, BATCH)
        tokens = torch.from_numpy(np.stack([train[s:s + common.CONTEXT + 1] for s in starts]).astype(np.int64))
        with torch.no_grad():
            logits, streams = target(tokens, capture=True)
        T = common.CONTEXT
        aux = streams[:, :T, dc.AUX_IDS].reshape(BATCH, T, -1).to(torch.bfloat16).float()
        labels = logits[:, :T].argmax(-1)
        anchors = {f: draw_anchors(gen, BATCH, T) for f in FAMILIES if f != "eagle3"}
        for family, draft in drafts.items():
            for g in opts[family].param_groups:
                g["lr"] = lr_at(state["step"], args.steps)
            if family == "eagle3":
                loss = eagle3_loss(draft, aux, tokens, labels, to_draft)
            else:
                loss = block_loss(draft, aux, tokens, labels, anchors[family])
            opts[family].zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(draft.weights.parameters(), 1.0)
            opts[family].step()
            running[family] = loss.item() if running[family] is None else 0.95 * running[family] + 0.05 * loss.item()
        state["step"] += 1
        if state["step"] % 10 == 0:
            state["log"].append([state["step"], {f: round(v, 4) for f, v in running.items()}, round(clock.seconds(), 1)])
            print(f"step {state['step']} " + " ".join(f"{f} {v:.3f}" for f, v in running.items())
                  + f" {clock.seconds():.0f}s", flush=True)
        if state["step"] % 50 == 0 or state["step"] == args.steps:
            state["seconds"] = clock.seconds()
            common.save_checkpoint(ckpt_path, {"drafts": {f: d.weights.state_dict() for f, d in drafts.items()},
                                               "opts": {f: o.state_dict() for f, o in opts.items()},
                                               "state": state, "torch_rng": torch.get_rng_state()})
    for family, draft in drafts.items():
        draft.save(common.TRAINED / family)
    laguna = Draft(dc.laguna_dflash(), shared)
    for name, t in dc.initial_tensors(laguna.config, "laguna-dflash", target_tensors, counts, args.seed + 9).items():
        laguna.add(name, t)
    laguna.save(common.TRAINED / "laguna-dflash-untrained")
    record = common.WORK / "drafts" / "result.json"
    results = json.loads(record.read_text()) if record.exists() else {}
    for family in drafts:
        results[family] = {
            "steps": state["step"], "batch_windows": BATCH, "anchors_per_window": ANCHORS,
            "ttt_steps": TTT_STEPS, "seconds": round(state["seconds"], 1), "trained_with": selected,
            "final_loss": state["log"][-1][1][family] if state["log"] else None,
            "command": common.command_line(), "seed": args.seed}
    common.write_json(record, results)


if __name__ == "__main__":
    main()
