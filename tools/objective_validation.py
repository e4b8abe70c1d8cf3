#!/usr/bin/python3
"""Does the allocator's objective rank plans as acceptance does? The validation of docs/acceptance-allocation.md.

  /usr/bin/python3 tools/objective_validation.py build/dev/app/cli/sparkulator-cli [--families eagle3,...]
      [--draft NAME=DIR ...]

For each trained draft (and every --draft, an EAGLE-3 head of the same target trained on another seed), every
whole-draft plan of the rounding table (each scheme where the recipe puts W4A16, under each rounding method
that applies) is exported once. The capture is split by sample as the allocator splits it: on the even samples
(the selection half, which also calibrates gptq and hessian) `acceptance --objective-temperature` measures the
predictors — the target-aware objective at every draft temperature of the allocator's grid, KL(BF16 ‖ plan)
summed over positions, the flip rate at position 0 — and on the odd samples (held out) `--anchor-table` gives
every anchor's accepted length. A pair of plans is significant when the paired held-out difference of their
accepted lengths has a 95 % interval that excludes 0; a predictor orders it correctly when it prefers the plan
that accepts more (higher objective, lower KL, fewer flips; a tie is not correct). The draft temperature of the
objective's column is the one `plan --budget preset --hidden-states` chooses on that draft's selection half.

Then the allocator itself, on the whole capture (selection on the even samples, report on the odd): at the
recipe's streamed bytes and at 0.75× them, with the target-aware loss and with KL, the held-out Δτ of its plan
and of the recipe against BF16. Standard library only."""
import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from rounding_acceptance_table import FAMILIES, METHODS, SCHEMES, TRAINED, applies, run, split_capture
from rounding_acceptance_table import entry as rounding_entry

GRID = "0.05,0.1,0.2,0.35,0.5,0.7,1"  # objectiveTemperatures() in core/forward/expectedacceptance.cpp
K = "4"


def acceptance(cli: str, draft: Path, capture: Path, export: Path, extra: list[str]) -> dict:
    return json.loads(run(cli, ["acceptance", str(draft), "--hidden-states", str(capture), "--target-model",
                                str(TRAINED / "target"), "--quantized", str(export), "--k", K, "--anchors",
                                "all", "--json"] + extra))


def held_out_lengths(path: Path) -> list[int]:
    with open(path) as f:
        return [int(row["accepted_quantized"]) for row in csv.DictReader(f)]


def plans(cli: str, draft: Path, entry: str, folder: Path, calibration: Path):
    """(label, export) of every scheme × rounding method of the rounding table."""
    n = 0
    for scheme in SCHEMES:
        for method in (m for m in METHODS if applies(scheme, m)):
            n += 1
            out = folder / f"plan-{n}"
            args = ["quantize", str(draft), "--out", str(out), "--scheme", f"{entry}={scheme}", "--no-verify"]
            if method == "gptq":
                args += ["--gptq", "--rounding", "rtn"]
            else:
                args += ["--rounding", method]
            if method in ("gptq", "hessian"):
                args += ["--hidden-states", str(calibration), "--target-model", str(TRAINED / "target"), "--k", K]
            run(cli, args)
            yield f"{scheme} {method}", out


def allocate(cli: str, draft: Path, budget: str, loss: str) -> dict:
    return json.loads(run(cli, ["plan", str(draft), "--budget", budget, "--hidden-states",
                                str(TRAINED / "capture"), "--target-model", str(TRAINED / "target"), "--k", K,
                                "--loss", loss, "--json"]))["allocation"]["acceptance"]


def share(correct: int, total: int) -> str:
    return f"{correct}/{total} ({100 * correct / total:.0f} %)" if total else "—"


def validate(cli: str, name: str, draft: Path, entry: str, folder: Path, calibration: Path, held_out: Path,
             grid: str, dump: dict):
    chosen = allocate(cli, draft, "preset", "expected-acceptance")
    t = chosen["objective_temperature"]
    rows = []
    for label, export in plans(cli, draft, entry, folder, calibration):
        sel = acceptance(cli, draft, calibration, export, ["--objective-temperature", grid])
        table = folder / "held-out.csv"
        acceptance(cli, draft, held_out, export, ["--anchor-table", str(table)])
        rows.append({"label": label,
                     "objective": {o["draft_temperature"]: o["delta"] for o in sel["objective"]},
                     "kl": sum(p["mean_kl"] for p in sel["positions"]),
                     "flips": sel["positions"][0]["flip_rate"],
                     "lengths": held_out_lengths(table)})
    dump[name] = {"objective_temperature": t, "plans": rows}
    temperatures = sorted(rows[0]["objective"])
    correct = {"kl": 0, "flips": 0, **{x: 0 for x in temperatures}}
    significant = 0
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            d = [x - y for x, y in zip(a["lengths"], b["lengths"])]
            mean = sum(d) / len(d)
            sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
            if abs(mean) <= 1.959963984540054 * sd / math.sqrt(len(d)):
                continue
            significant += 1
            better, worse = (a, b) if mean > 0 else (b, a)
            correct["kl"] += better["kl"] < worse["kl"]
            correct["flips"] += better["flips"] < worse["flips"]
            for x in temperatures:
                correct[x] += better["objective"][x] > worse["objective"][x]
    print(f"| {name} | {len(rows)} | {significant} | {t:g} | {share(correct[t], significant)} "
          f"| {share(correct['kl'], significant)} | {share(correct['flips'], significant)} | "
          + " ".join(f"{x:g}: {100 * correct[x] / max(1, significant):.0f} %" for x in temperatures) + " |",
          flush=True)
    return chosen


def allocation_rows(cli: str, name: str, draft: Path, chosen: dict) -> list[str]:
    recipe = chosen["recipe"]["streamed_bytes"]
    lines = []
    for factor in (1.0, 0.75):
        budget = "preset" if factor == 1.0 else str(int(recipe * factor))
        for loss in ("expected-acceptance", "kl"):
            try:
                a = chosen if (factor, loss) == (1.0, "expected-acceptance") else allocate(cli, draft, budget, loss)
            except subprocess.CalledProcessError as e:  # below the cheapest legal plan: the frontier says so
                lines.append(f"| {name} | {factor:g}× | {loss} | {e.stderr.strip().splitlines()[0].split(': ', 2)[-1]} | | | |")
                continue
            p, r, d = a["plan"], a["recipe"], a["plan_minus_recipe"]
            ci = lambda x: f"{x['tau_delta']:+.4f} [{x['tau_delta_ci'][0]:+.4f}, {x['tau_delta_ci'][1]:+.4f}]"
            lines.append(f"| {name} | {factor:g}× | {loss} | {p['streamed_bytes'] / 1024:.1f} KiB | {ci(p['report'])} "
                         f"| {ci(r['report'])} | {d['mean']:+.4f} [{d['ci'][0]:+.4f}, {d['ci'][1]:+.4f}] |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--families", default=",".join(FAMILIES), help="trained drafts of tests/data/trained")
    ap.add_argument("--draft", action="append", default=[], metavar="NAME=DIR",
                    help="another EAGLE-3 head of the trained target (repeatable)")
    ap.add_argument("--rows", metavar="FILE.json", help="also write every plan's predictors and held-out lengths")
    ap.add_argument("--grid", default=GRID, help="the draft temperatures the objective is measured at")
    ap.add_argument("--no-allocation", action="store_true", help="the validation table only")
    ap.add_argument("--allocation-only", action="store_true", help="the allocator's table only")
    args = ap.parse_args()
    cli = args.cli
    drafts = [(FAMILIES[family], TRAINED / family, rounding_entry(family))
              for family in args.families.split(",") if family]
    for extra in args.draft:
        name, path = extra.split("=", 1)
        drafts.append((name, Path(path), "Linear"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        calibration, held_out = split_capture(TRAINED / "capture" / "hidden_states.safetensors", folder)
        print("| draft | plans | significant pairs | t chosen | objective at t | KL | flips at 0 | objective at each t |")
        print("|---|---|---|---|---|---|---|---|")
        allocations, dump = [], {}
        for name, path, entry in drafts:
            plan_folder = folder / name.replace(" ", "-")
            plan_folder.mkdir()
            chosen = allocate(cli, path, "preset", "expected-acceptance") if args.allocation_only else \
                validate(cli, name, path, entry, plan_folder, calibration, held_out, args.grid, dump)
            if not args.no_allocation:
                allocations += allocation_rows(cli, name, path, chosen)
            if args.rows:
                Path(args.rows).write_text(json.dumps(dump))
        if allocations:
            print("\n| draft | budget | loss | plan streams | plan Δτ [95 %] | recipe Δτ | plan − recipe |")
            print("|---|---|---|---|---|---|---|")
            print("\n".join(allocations))


if __name__ == "__main__":
    main()
