"""Paths, seeds and the fixed choices every reference script shares."""
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent.parent
# Intermediate files (tokenized corpus, training checkpoints): ignored by git, resumable.
WORK = Path(os.environ.get("SPARK_REFERENCE_WORK", REPO / "build" / "reference"))
# The committed artefacts: the project's ground truth for acceptance.
TRAINED = Path(os.environ.get("SPARK_REFERENCE_OUT", REPO / "tests" / "data" / "trained"))

CONTEXT = 256  # training window in tokens


def seed_everything(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def threads():
    torch.set_num_threads(int(os.environ.get("SPARK_REFERENCE_THREADS", os.cpu_count() or 1)))


def start_training(default_seed: int, more_options=None):
    """--steps (train up to this step, from the last checkpoint), --seed and what @p more_options adds to
    the parser; sets threads and seeds."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--seed", type=int, default=default_seed)
    if more_options:
        more_options(ap)
    args = ap.parse_args()
    threads()
    seed_everything(args.seed)
    return args


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_json(path: Path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(value, indent=2) + "\n")
    tmp.replace(path)


def save_checkpoint(path: Path, state: dict):
    """Atomic: a training run killed while saving keeps the previous checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def resume(path: Path, restore) -> dict:
    """The training state saved at @p path, after restore(saved) has loaded the modules and optimisers and
    the random generator is back where it was; a fresh state when there is no checkpoint yet."""
    if not path.exists():
        return {"step": 0, "seconds": 0.0, "log": []}
    saved = torch.load(path)
    restore(saved)
    torch.set_rng_state(saved["torch_rng"])
    print(f"resumed at step {saved['state']['step']}")
    return saved["state"]


def command_line() -> str:
    return " ".join([Path(sys.executable).name] + [str(Path(sys.argv[0]).relative_to(REPO)
                                                    if Path(sys.argv[0]).is_absolute() else sys.argv[0])]
                    + sys.argv[1:])


class Clock:
    def __init__(self, spent: float = 0.0):
        self.start = time.time() - spent

    def seconds(self) -> float:
        return time.time() - self.start
