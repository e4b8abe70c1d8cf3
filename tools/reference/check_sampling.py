"""The product's acceptance at a temperature held against sampling.py's independent computation (a ctest):
every trained draft, greedy and probabilistic drafting, at T = 0.7 on the trained (greedy) capture and on a
capture the target sampled at T here, paired anchors and the replayed loop: every a_i within 1e-4. Likewise
the target-aware objective a plan is chosen by (`acceptance --objective-temperature`) on the greedy capture.

  python3 check_sampling.py --cli build/dev/app/cli/sparkulator-cli

Exit 0 when every check holds, 1 otherwise, 77 (a skip) when torch is missing and SPARK_REFERENCE_REQUIRED
is not set."""
import argparse
import os
import sys
import tempfile
from pathlib import Path

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"check_sampling: {e}; install python3-torch python3-numpy", file=sys.stderr)
    sys.exit(1 if os.environ.get("SPARK_REFERENCE_REQUIRED") else 77)

import common
import draftconfigs as dc
import stio
from sampling import a_i, acceptance_probabilities, expected_accepted, product, sampled_capture

TEMPERATURE = 0.7
TOLERANCE = 1e-4
ANCHORS = 48
failures = []


def check(label: str, mine, theirs):
    error = float(np.max(np.abs(np.asarray(mine) - np.asarray(theirs))))
    print(f"{label}: a_i {np.round(np.asarray(mine), 4).tolist()}, largest difference {error:.1e}")
    if not error <= TOLERANCE:
        failures.append(label)
        print(f"FAIL {label}: reference a_i {np.round(np.asarray(theirs), 6).tolist()}")


def paired_anchors(cli: str, family: str, capture: Path, drafting: str, tmp: Path):
    dump = tmp / "anchors.safetensors"
    mine = product(cli, family, capture, ["--temperature", str(TEMPERATURE), "--draft-sampling", drafting,
                                          "--anchors", str(ANCHORS), "--seed", "3", "--dump-logits", str(dump),
                                          "--max-anchors", str(ANCHORS)])
    d, _ = stio.load(dump)
    samples, positions = d["anchor_sample"].numpy(), d["anchor_position"].numpy()
    alpha = acceptance_probabilities(family, capture, samples, positions, dc.K, TEMPERATURE, drafting)
    check(f"{family} {drafting} drafting on {capture.name}", [p["accept_base"] for p in mine["positions"]],
          a_i(alpha))


def objective(cli: str, family: str, capture: Path, tmp: Path):
    dump = tmp / "anchors.safetensors"
    temperatures = [0.05, 0.2, 1.0]
    mine = product(cli, family, capture, ["--objective-temperature", ",".join(map(str, temperatures)),
                                          "--anchors", str(ANCHORS), "--seed", "5", "--dump-logits", str(dump),
                                          "--max-anchors", str(ANCHORS)])
    d, _ = stio.load(dump)
    theirs = expected_accepted(family, capture, d["anchor_sample"].numpy(), d["anchor_position"].numpy(), dc.K,
                               temperatures)
    check(f"{family} objective at draft temperatures {temperatures}", [o["base"] for o in mine["objective"]],
          theirs)


def replay(cli: str, family: str, capture: Path):
    mine = product(cli, family, capture, ["--temperature", str(TEMPERATURE), "--replay"])["base"]
    cycles = mine["cycles"]
    samples = np.array([c[0] for c in cycles], dtype=np.int64)
    positions = np.array([c[1] for c in cycles], dtype=np.int64)
    alpha = acceptance_probabilities(family, capture, samples, positions, dc.K, TEMPERATURE, "greedy")
    check(f"{family} replay (expected form) on {capture.name}", [p["accept_base"] for p in mine["positions"]],
          a_i(alpha))
    stored = torch.tensor([c[4] for c in cycles], dtype=torch.float64)
    check(f"{family} replay: every cycle's alpha_j on {capture.name}", [float((stored - alpha).abs().max())], [0.0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    args = ap.parse_args()
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sampled = tmp / "capture-sampled"
        sampled_capture(sampled, TEMPERATURE, seed=11, samples=4)
        for family in ("eagle3", "qwen3-dflash", "dspark"):
            for drafting in ("greedy", "probabilistic"):
                paired_anchors(args.cli, family, common.TRAINED / "capture", drafting, tmp)
            objective(args.cli, family, common.TRAINED / "capture", tmp)
        for family in ("eagle3", "dspark"):
            for drafting in ("greedy", "probabilistic"):
                paired_anchors(args.cli, family, sampled, drafting, tmp)
            replay(args.cli, family, sampled)
    print("sampling checks: " + ("ok" if not failures else f"{len(failures)} failed"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
