"""The product's offline acceptance held against the reference tooling on the trained drafts (a ctest):

  logits      `acceptance --dump-logits` of every trained draft against the PyTorch draft's logits on the same
              captured BF16 features: per (anchor, step) row max|product − reference| / max|reference| ≤ 1e-3,
              and the same argmax except at near-ties (top-2 margin below 1e-4 of the largest |logit|);
  serving     the same under `--numerics bf16` against the PyTorch draft with every operation's output
              rounded to BF16 (Draft.serve_bf16): rows within 3e-2 (a few BF16 steps: the two sum in other
              orders, and a sum that lands on the other side of a BF16 rounding boundary moves the rest),
              the same argmax except below 8e-3 of the largest |logit|; and the product's argmax must differ
              from the FP32 reference's somewhere, or the check could not tell the two numerics apart;
  statistics  a paired BF16-vs-W4A16 run: every number the product prints (a_i with Wilson intervals, the
              paired Δ and its interval, flip rate, the bound, mean KL(B‖Q), τ and Δτ with its interval, the
              top-2 margin quantiles) recomputed with numpy/scipy from the dumped proposals and logits.

  python3 check_product.py --cli build/dev/app/cli/sparkulator-cli

Exit 0 when every check holds, 1 otherwise, 77 (a skip) when torch is missing and SPARK_REFERENCE_REQUIRED
is not set (packaging/test.sh installs it and sets it)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import numpy as np
    import torch
    from scipy import stats
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"check_product: {e}; install python3-torch python3-numpy python3-scipy", file=sys.stderr)
    sys.exit(1 if os.environ.get("SPARK_REFERENCE_REQUIRED") else 77)

import common
import stio
from draftlogits import captured, reference_logits

K = 4
ANCHORS = 48
FAMILIES = ("eagle3", "qwen3-dflash", "dspark")
LOGIT_TOLERANCE = 1e-3
NEAR_TIE = 1e-4
SERVING_TOLERANCE = 3e-2
SERVING_NEAR_TIE = 8e-3
failures = []


def check(condition: bool, what: str):
    if not condition:
        failures.append(what)
        print(f"FAIL {what}")


def acceptance(cli: str, family: str, dump: Path, extra: list[str], anchors: int = ANCHORS) -> dict:
    root = common.TRAINED
    cmd = [cli, "acceptance", str(root / family), "--hidden-states", str(root / "capture"), "--target-model",
           str(root / "target"), "--k", str(K), "--anchors", str(anchors), "--seed", "3", "--dump-logits",
           str(dump), "--max-anchors", str(anchors), "--json", "--threads", "2"] + extra
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {run.returncode}: {run.stderr}")
    return json.loads(run.stdout)


def compare_logits(label: str, mine, ref, tolerance: float, near_tie: float):
    """Per (anchor, step) row: max|mine − ref| / max|ref| within @p tolerance, and the same argmax except
    where the reference's top two lie within @p near_tie of its largest |logit|."""
    scale = ref.abs().amax(-1)
    error = (mine - ref).abs().amax(-1) / scale
    top2 = ref.topk(2, dim=-1).values
    tie = (top2[..., 0] - top2[..., 1]) < near_tie * scale
    argmax_differs = (mine.argmax(-1) != ref.argmax(-1)) & ~tie
    print(f"{label}: {mine.shape[0]} anchors x {K} steps, max relative logit error {float(error.max()):.2e}, "
          f"near-ties {int(tie.sum())}")
    check(float(error.max()) <= tolerance, f"{label}: logits differ by {float(error.max()):.2e}")
    check(int(argmax_differs.sum()) == 0, f"{label}: argmax differs at {int(argmax_differs.sum())} rows")


def check_logits(cli: str, tmp: Path):
    tensors, layer_ids = captured()
    told_apart = 0
    for family in FAMILIES:
        dump = tmp / f"{family}.safetensors"
        acceptance(cli, family, dump, ["--bf16-only"])
        d, _ = stio.load(dump)
        samples, positions = d["anchor_sample"].numpy(), d["anchor_position"].numpy()
        ref = reference_logits(family, samples, positions, tensors, layer_ids, K)
        compare_logits(family, d["logits_base"], ref, LOGIT_TOLERANCE, NEAR_TIE)

        # The same anchors (same seed and count) under serving numerics.
        dump = tmp / f"{family}-bf16.safetensors"
        acceptance(cli, family, dump, ["--bf16-only", "--numerics", "bf16"])
        served, _ = stio.load(dump)
        mine = served["logits_base"]
        compare_logits(f"{family} (bf16 activations)", mine,
                       reference_logits(family, samples, positions, tensors, layer_ids, K, serving=True),
                       SERVING_TOLERANCE, SERVING_NEAR_TIE)
        told_apart += int((mine.argmax(-1) != ref.argmax(-1)).sum())
    print(f"bf16 activations change the argmax of {told_apart} rows against the FP32 reference")
    check(told_apart > 0, "--numerics bf16 gives the FP32 reference's argmax everywhere")


def variants():
    """(name, draft folder, config change): each configuration key the forward must read as vLLM does."""
    def llama3(where):
        scaling = {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 64}
        return (lambda c: c.update({"rope_scaling": scaling})) if where == "rope_scaling" else \
            (lambda c: c.update({"rope_parameters": dict(scaling, rope_theta=c["rope_theta"])}))
    def nested(c):
        c["rope_parameters"] = {"full_attention": {"rope_theta": 500000.0, "rope_type": "default"},
                                "sliding_attention": {"rope_theta": 20000.0, "rope_type": "default"}}
        del c["swa_rope_parameters"]
    def dspark_sliding(c):
        c["transformer_layer_config"]["layer_types"] = ["sliding_attention", "full_attention"]
        c["transformer_layer_config"]["sliding_window"] = 48
    # (name, folder, change, whether the logits must change against the folder's unchanged config)
    return [
        ("laguna: mixed layer types, sliding window, swa_rope_parameters, partial rotary",
         "laguna-dflash-untrained", None, False),
        ("laguna: rope_parameters nested by layer type", "laguna-dflash-untrained", nested, True),
        ("laguna: all layers full attention", "laguna-dflash-untrained",
         lambda c: c.update({"layer_types": ["full_attention"] * 3}), True),
        ("eagle3: as trained", "eagle3", None, False),
        ("eagle3: llama3 RoPE as rope_scaling", "eagle3", llama3("rope_scaling"), True),
        ("eagle3: llama3 RoPE in rope_parameters", "eagle3", llama3("rope_parameters"), True),
        ("eagle3: norm_before_residual", "eagle3", lambda c: c.update({"norm_before_residual": True}), True),
        ("eagle3: partial rotary", "eagle3", lambda c: c.update({"partial_rotary_factor": 0.5}), True),
        ("dspark: as trained (sliding_window_non_causal true)", "dspark", None, False),
        ("dspark: logit_scale", "dspark", lambda c: c.update({"logit_scale": 0.5}), True),
        ("dspark: sliding_window_non_causal false (causal block)", "dspark",
         lambda c: c.update({"sliding_window_non_causal": False}), True),
        # vLLM reads an absent key as a bidirectional block: the same logits as true.
        ("dspark: sliding_window_non_causal absent", "dspark", lambda c: c.pop("sliding_window_non_causal"), False),
        ("dspark: layer_types and sliding_window", "dspark", dspark_sliding, True),
    ]


def check_config_keys(cli: str, tmp: Path):
    """Each variant's product logits equal the reference's (≤ 1e-3), and a changed key changes them."""
    tensors, layer_ids = captured()
    baseline = {}
    for name, folder, change, changes in variants():
        config = json.loads((common.TRAINED / folder / "config.json").read_text())
        if change:
            change(config)
        variant = tmp / "variant"
        if variant.exists():
            for f in variant.iterdir():
                f.unlink()
        variant.mkdir(exist_ok=True)
        (variant / "config.json").write_text(json.dumps(config))
        (variant / "model.safetensors").symlink_to(common.TRAINED / folder / "model.safetensors")
        dump = tmp / "variant.safetensors"
        acceptance(cli, str(variant), dump, ["--bf16-only"], anchors=16)
        d, _ = stio.load(dump)
        samples, positions = d["anchor_sample"].numpy(), d["anchor_position"].numpy()
        ref = reference_logits(str(variant), samples, positions, tensors, layer_ids, K)
        error = float(((d["logits_base"] - ref).abs().amax(-1) / ref.abs().amax(-1)).max())
        print(f"{name}: max relative logit error {error:.2e}")
        check(error <= LOGIT_TOLERANCE, f"{name}: logits differ by {error:.2e}")
        if change is None:
            baseline[folder] = ref
        else:
            differs = not torch.equal(ref, baseline[folder])
            check(differs == changes, f"{name}: the logits {'do not change' if changes else 'change'}")


def check_config_errors(cli: str, tmp: Path):
    """A target_hidden_size that disagrees with fc's input width is an error naming fc, as loading
    the weights into the reference's fc fails."""
    config = json.loads((common.TRAINED / "qwen3-dflash" / "config.json").read_text())
    config["target_hidden_size"] = 128
    variant = tmp / "wrong-target-hidden"
    variant.mkdir()
    (variant / "config.json").write_text(json.dumps(config))
    (variant / "model.safetensors").symlink_to(common.TRAINED / "qwen3-dflash" / "model.safetensors")
    run = subprocess.run([cli, "acceptance", str(variant), "--hidden-states", str(common.TRAINED / "capture"),
                          "--target-model", str(common.TRAINED / "target"), "--bf16-only", "--anchors", "4"],
                         capture_output=True, text=True)
    print(f"target_hidden_size 128: exit {run.returncode}: {run.stderr.strip()}")
    check(run.returncode == 2 and "fc" in run.stderr, "target_hidden_size: no clear error")


def wilson(p, n, z):
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_interval(d, z):
    mean = d.mean()
    se = d.std(ddof=1) / np.sqrt(len(d))
    return mean, mean - z * se, mean + z * se


def kl(p_logits, q_logits):
    lp = torch.log_softmax(p_logits.double(), -1)
    lq = torch.log_softmax(q_logits.double(), -1)
    return float(torch.clamp((lp.exp() * (lp - lq)).sum(-1), min=0))


def close(a, b, what, tol=1e-9):
    check(abs(a - b) <= tol * max(1.0, abs(b)), f"{what}: product {a} reference {b}")


def check_statistics(cli: str, tmp: Path):
    z = stats.norm.ppf(0.975)
    tensors, _ = captured()
    off = tensors["sample_offsets"].tolist()
    for family in FAMILIES:
        dump = tmp / f"{family}-paired.safetensors"
        product = acceptance(cli, family, dump, [])
        d, _ = stio.load(dump)
        samples, positions = d["anchor_sample"].numpy(), d["anchor_position"].numpy()
        tb, tq = d["tokens_base"].numpy(), d["tokens_quantized"].numpy()
        lb, lq = d["logits_base"], d["logits_quantized"]
        n = len(samples)
        targets = np.stack([tensors["token_ids"][off[s] + a + 1:off[s] + a + 1 + K].numpy()
                            for s, a in zip(samples, positions)])

        def accepted(tokens):
            equal = tokens == targets
            return np.array([next((i for i in range(K) if not row[i]), K) for row in equal])

        LB, LQ = accepted(tb), accepted(tq)
        check(product["anchors"] == n, f"{family}: anchors")
        for i, pos in enumerate(product["positions"]):
            b, q = (LB > i).astype(float), (LQ > i).astype(float)
            close(pos["accept_base"], b.mean(), f"{family} a_{i}(B)")
            for got, want in zip(pos["accept_base_ci"], wilson(b.mean(), n, z)):
                close(got, want, f"{family} a_{i}(B) Wilson interval")
            close(pos["accept_quantized"], q.mean(), f"{family} a_{i}(Q)")
            for got, want in zip(pos["accept_quantized_ci"], wilson(q.mean(), n, z)):
                close(got, want, f"{family} a_{i}(Q) Wilson interval")
            mean, low, high = paired_interval(q - b, z)
            close(pos["delta"], mean, f"{family} delta_{i}")
            close(pos["delta_ci"][0], low, f"{family} delta_{i} low")
            close(pos["delta_ci"][1], high, f"{family} delta_{i} high")
            kept = LB > i
            flips = (tq[kept, :i + 1] != tb[kept, :i + 1]).any(-1).mean() if kept.any() else 0.0
            close(pos["flip_rate"], float(flips), f"{family} flip rate {i}")
            close(pos["lower_bound"], b.mean() * (1 - flips), f"{family} bound {i}")
            same_prefix = [a for a in range(n) if (tb[a, :i] == tq[a, :i]).all()]
            kls = [kl(lb[a, i], lq[a, i]) for a in same_prefix]
            close(pos["mean_kl"], float(np.mean(kls)), f"{family} mean KL {i}", 1e-6)
            check(pos["kl_anchors"] == len(same_prefix), f"{family} KL anchors {i}")
            top2 = lb[:, i].topk(2, dim=-1).values
            margins = (top2[:, 0] - top2[:, 1]).numpy()
            for got, want in zip(pos["margin_base_p10_p50_p90"], np.quantile(margins, [0.1, 0.5, 0.9])):
                close(got, float(want), f"{family} margin quantile {i}", 1e-6)
        close(product["tau_base"], 1 + sum((LB > i).mean() for i in range(K)), f"{family} tau(B)")
        close(product["tau_quantized"], 1 + sum((LQ > i).mean() for i in range(K)), f"{family} tau(Q)")
        mean, low, high = paired_interval((LQ - LB).astype(float), z)
        close(product["tau_delta"], mean, f"{family} tau delta")
        close(product["tau_delta_ci"][0], low, f"{family} tau delta low")
        close(product["tau_delta_ci"][1], high, f"{family} tau delta high")
        print(f"{family}: statistics of {n} paired anchors agree (tau {product['tau_base']:.3f} -> "
              f"{product['tau_quantized']:.3f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    args = ap.parse_args()
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        check_logits(args.cli, Path(tmp))
        check_config_keys(args.cli, Path(tmp))
        check_config_errors(args.cli, Path(tmp))
        check_statistics(args.cli, Path(tmp))
    print("reference checks: " + ("ok" if not failures else f"{len(failures)} failed"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
