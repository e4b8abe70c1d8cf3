"""Trains the tiny target on the pinned corpus; resumes from WORK/target/checkpoint.pt. Held-out loss and
next-token accuracy are measured at the end and written with the BF16 export.

  python3 train_target.py --steps 3000     # (continues up to step 3000 from the last checkpoint)
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

import common
from target import Target, TargetConfig

BATCH = 16
LR, WARMUP, MIN_LR = 3e-3, 200, 3e-4


def batches(tokens: np.ndarray, rng: np.random.Generator):
    while True:
        starts = rng.integers(0, len(tokens) - common.CONTEXT - 1, BATCH)
        chunk = np.stack([tokens[s:s + common.CONTEXT + 1] for s in starts]).astype(np.int64)
        yield torch.from_numpy(chunk)


def lr_at(step: int, total: int) -> float:
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    progress = min(1.0, (step - WARMUP) / max(1, total - WARMUP))
    return MIN_LR + 0.5 * (LR - MIN_LR) * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def evaluate(model, tokens: np.ndarray, windows: int = 200):
    """Loss and next-token accuracy on @p windows evenly spaced held-out windows (FP32 on BF16 weights
    when @p model was loaded from the export)."""
    model.eval()
    step = (len(tokens) - common.CONTEXT - 1) // windows
    loss = correct = count = 0.0
    for w in range(windows):
        chunk = torch.from_numpy(tokens[w * step:w * step + common.CONTEXT + 1].astype(np.int64))
        logits = model(chunk[None, :-1])[0]
        loss += F.cross_entropy(logits, chunk[1:], reduction="sum").item()
        correct += (logits.argmax(-1) == chunk[1:]).sum().item()
        count += common.CONTEXT
    model.train()
    return loss / count, correct / count


def main():
    args = common.start_training(1234)
    train = np.load(common.WORK / "corpus-train.npy")
    heldout = np.load(common.WORK / "corpus-heldout.npy")
    model = Target(TargetConfig())
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)
    ckpt_path = common.WORK / "target" / "checkpoint.pt"
    state = common.resume(ckpt_path, lambda saved: (model.load_state_dict(saved["model"]),
                                                    opt.load_state_dict(saved["opt"])))
    rng = np.random.default_rng(args.seed + state["step"])
    data = batches(train, rng)
    clock = common.Clock(state["seconds"])
    params = sum(p.numel() for p in model.parameters())
    print(f"target: {params} parameters")
    running = None
    while state["step"] < args.steps:
        step = state["step"]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args.steps)
        chunk = next(data)
        logits = model(chunk[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
        state["step"] += 1
        if state["step"] % 50 == 0:
            state["log"].append([state["step"], round(running, 4), round(clock.seconds(), 1)])
            print(f"step {state['step']} loss {running:.4f} {clock.seconds():.0f}s", flush=True)
        if state["step"] % 200 == 0 or state["step"] == args.steps:
            state["seconds"] = clock.seconds()
            common.save_checkpoint(ckpt_path, {"model": model.state_dict(), "opt": opt.state_dict(),
                                               "state": state, "torch_rng": torch.get_rng_state()})
    out = common.TRAINED / "target"
    model.save(out)
    exported = Target.load(out)
    loss, acc = evaluate(exported, heldout)
    print(f"held-out loss {loss:.4f} accuracy {acc:.4f}")
    common.write_json(common.WORK / "target" / "result.json", {
        "parameters": params, "steps": state["step"], "batch_tokens": BATCH * common.CONTEXT,
        "tokens_seen": state["step"] * BATCH * common.CONTEXT, "seconds": round(state["seconds"], 1),
        "train_loss": state["log"][-1][1] if state["log"] else None,
        "heldout_loss": round(loss, 4), "heldout_accuracy": round(acc, 4), "command": common.command_line(),
        "seed": args.seed})


if __name__ == "__main__":
    main()
