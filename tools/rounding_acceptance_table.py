#!/usr/bin/python3
"""Every rounding method against acceptance on the trained drafts: the table of docs/acceptance-allocation.md.

  /usr/bin/python3 tools/rounding_acceptance_table.py build/dev/app/cli/sparkulator-cli > table.md

For each trained draft, scheme and rounding method: `acceptance --anchors all --k 4` on the trained capture
(paired Δa_i and Δτ with 95 % intervals, the share of position-0 proposals that change among those the BF16
draft got accepted, the mean KL per proposal) and `sweep` (the mean rel_err of the units the scheme
quantizes). The scheme goes where the drafts' recipes put W4A16: every Linear of EAGLE-3, the MLP, o_proj and
fc of the block drafts (their q/k/v stay BF16: vLLM reads them raw). A method that does not apply to a
scheme (codes off NVFP4A16) gets no row. Standard library only."""
import json
import subprocess
import sys
from pathlib import Path

TRAINED = Path(__file__).resolve().parent.parent / "tests" / "data" / "trained"
FAMILIES = {"eagle3": "EAGLE-3", "qwen3-dflash": "Qwen3 DFlash", "dspark": "DSpark"}
SCHEMES = ("W4A16", "W4A16:g32", "W4A16:channel", "W8A16", "NVFP4A16")
METHODS = ("rtn", "mse", "range", "codes")


def applies(scheme: str, method: str) -> bool:
    """codes searches NVFP4's stored scale codes; the other schemes have none."""
    return method != "codes" or scheme == "NVFP4A16"


def entry(family: str) -> str:
    return "Linear" if family == "eagle3" else r"re:.*\.(mlp\..*|o_proj|fc)$"


def run(cli: str, args: list[str]) -> dict:
    out = subprocess.run([cli] + args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def interval(mean: float, ci: list[float]) -> str:
    return f"{mean:+.4f} [{ci[0]:+.4f}, {ci[1]:+.4f}]"


def weight_errors(cli: str, family: str, scheme: str) -> dict:
    """Mean rel_err per method over the units the scheme quantizes."""
    sweep = run(cli, ["sweep", str(TRAINED / family), "--candidates", scheme, "--rounding-candidates",
                      ",".join(METHODS), "--json"])
    plan = run(cli, ["plan", str(TRAINED / family), "--scheme", f"{entry(family)}={scheme}", "--json"])
    quantized = {m["name"] for m in plan["modules"] if m.get("decision") == "quantize"}
    errors = {}
    for method in METHODS:
        values = [c["rel_err"] for u in sweep["units"] if set(u["modules"]) & quantized
                  for c in u["candidates"] if c["scheme"] == scheme and c.get("rounding", "rtn") == method]
        errors[method] = sum(values) / len(values) if values else float("nan")
    return errors


def main():
    cli = sys.argv[1]
    print("| draft | scheme | rounding | Δτ [95 %] | Δa_0 [95 %] | Δa_1 | Δa_2 | Δa_3 | flips at 0 (of accepted) | mean KL "
          "| mean rel_err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for family, name in FAMILIES.items():
        for scheme in SCHEMES:
            errors = weight_errors(cli, family, scheme)
            for method in (m for m in METHODS if applies(scheme, m)):
                j = run(cli, ["acceptance", str(TRAINED / family), "--hidden-states", str(TRAINED / "capture"),
                              "--target-model", str(TRAINED / "target"), "--k", "4", "--anchors", "all",
                              "--scheme", f"{entry(family)}={scheme}", "--rounding", method, "--json"])
                p = j["positions"]
                kl = sum(x["mean_kl"] for x in p) / len(p)
                print(f"| {name} | {scheme} | {method} | {interval(j['tau_delta'], j['tau_delta_ci'])} "
                      f"| {interval(p[0]['delta'], p[0]['delta_ci'])} | "
                      + " | ".join(f"{x['delta']:+.4f}" for x in p[1:4])
                      + f" | {100 * p[0]['flip_rate']:.2f} % | {kl:.5f} | {errors[method]:.5f} |", flush=True)


if __name__ == "__main__":
    main()
