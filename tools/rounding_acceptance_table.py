#!/usr/bin/python3
"""Every rounding method against acceptance on the trained drafts: the table of docs/acceptance-allocation.md.

  /usr/bin/python3 tools/rounding_acceptance_table.py build/dev/app/cli/sparkulator-cli > table.md

The trained capture is split by sample: the even samples calibrate (the Hessians of GPTQ and of the hessian
rounding, and every method's output error), the odd samples are held out and measure acceptance, so that no
method is scored on the data it was fitted to. For each trained draft, scheme and method, `quantize` writes the
export (with `--hidden-states` on the calibration half for gptq and hessian), `compare` gives the weight error
(the mean rel_err of the quantized modules) and `acceptance --quantized --anchors all --k 4` on the held-out
half gives paired Δa_i and Δτ with 95 % intervals, the share of position-0 proposals that change among those
the BF16 draft got accepted, and the mean KL per proposal. The output error ‖(W−Q)X‖²/‖WX‖² on the
calibration half comes from quantize's calibration report: GPTQ's own for gptq, the hessian rounding's for
hessian, and for rtn, mse and range the RTN codes under their scales that `quantize --gptq --rounding METHOD`
reports beside GPTQ's. NVFP4 has no calibration pass, so its rows have no output error. gptq is GPTQ under rtn's
scales (llm-compressor's minmax default).

The scheme goes where the drafts' recipes put W4A16: every Linear of EAGLE-3, the MLP, o_proj and fc of the
block drafts (their q/k/v stay BF16: vLLM reads them raw). A method that does not apply to a scheme (codes off
NVFP4A16, hessian off the symmetric integer schemes, gptq off the integer ones) gets no row. Standard library
only."""
import json
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

TRAINED = Path(__file__).resolve().parent.parent / "tests" / "data" / "trained"
FAMILIES = {"eagle3": "EAGLE-3", "qwen3-dflash": "Qwen3 DFlash", "dspark": "DSpark"}
SCHEMES = ("W4A16", "W4A16:g32", "W4A16:channel", "W8A16", "NVFP4A16")
INTEGER = ("W4A16", "W4A16:g32", "W4A16:channel", "W8A16")
METHODS = ("rtn", "mse", "range", "codes", "hessian", "gptq")


def applies(scheme: str, method: str) -> bool:
    """codes searches NVFP4's stored scale codes; hessian and GPTQ need the integer schemes."""
    if method == "codes":
        return scheme == "NVFP4A16"
    if method in ("hessian", "gptq"):
        return scheme in INTEGER
    return True


def entry(family: str) -> str:
    return "Linear" if family == "eagle3" else r"re:.*\.(mlp\..*|o_proj|fc)$"


def split_capture(source: Path, folder: Path) -> tuple[Path, Path]:
    """The capture's even samples and its odd samples as two capture files of the same format."""
    raw = source.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + size])
    data = raw[8 + size:]
    meta = header.pop("__metadata__", {})

    def tensor(name):
        t = header[name]
        return t, data[t["data_offsets"][0]:t["data_offsets"][1]]

    offsets_info, offsets_raw = tensor("sample_offsets")
    offsets = struct.unpack(f"<{offsets_info['shape'][0]}q", offsets_raw)
    tokens = offsets[-1]
    per_token = {}  # name -> (bytes per token, bytes)
    for name in header:
        if name != "sample_offsets":
            blob = tensor(name)[1]
            per_token[name] = (len(blob) // tokens, blob)
    out = []
    for parity in (0, 1):
        samples = range(parity, len(offsets) - 1, 2)
        new_offsets = [0]
        parts = {name: bytearray() for name in per_token}
        for s in samples:
            begin, end = offsets[s], offsets[s + 1]
            new_offsets.append(new_offsets[-1] + end - begin)
            for name, (width, blob) in per_token.items():
                parts[name] += blob[begin * width:end * width]
        blobs = {"sample_offsets": struct.pack(f"<{len(new_offsets)}q", *new_offsets)}
        blobs.update(parts)
        new_header, position = {"__metadata__": meta}, 0
        for name, blob in blobs.items():
            t = header[name]
            shape = [len(new_offsets)] if name == "sample_offsets" else [new_offsets[-1]] + t["shape"][1:]
            new_header[name] = {"dtype": t["dtype"], "shape": shape, "data_offsets": [position, position + len(blob)]}
            position += len(blob)
        text = json.dumps(new_header).encode()
        text += b" " * (-len(text) % 8)
        path = folder / ("calibration" if parity == 0 else "held-out") / "hidden_states.safetensors"
        path.parent.mkdir()
        path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(bytes(b) for b in blobs.values()))
        out.append(path)
    return out[0], out[1]


def run(cli: str, args: list[str]) -> str:
    return subprocess.run([cli] + args, check=True, capture_output=True, text=True).stdout


def interval(mean: float, ci: list[float]) -> str:
    return f"{mean:+.4f} [{ci[0]:+.4f}, {ci[1]:+.4f}]"


def output_errors(text: str) -> tuple[float, float]:
    """The mean output error of the exported codes and of RTN codes under the same scales, over modules."""
    rows = re.findall(r"^  \S+: output error (\S+) \((?:RTN (\S+), )?\d+ input rows\)", text, re.M)
    exported = [float(a) for a, _ in rows]
    rtn = [float(b) if b else float(a) for a, b in rows]
    return sum(exported) / len(exported), sum(rtn) / len(rtn)


class Table:
    def __init__(self, cli: str, folder: Path, calibration: Path, held_out: Path):
        self.cli, self.folder, self.calibration, self.held_out = cli, folder, calibration, held_out
        self.exports = 0

    def quantize(self, family: str, scheme: str, rounding: str, extra: list[str]) -> tuple[Path, str]:
        self.exports += 1
        out = self.folder / f"export-{self.exports}"
        text = run(self.cli, ["quantize", str(TRAINED / family), "--out", str(out), "--scheme",
                              f"{entry(family)}={scheme}", "--rounding", rounding, "--no-verify"] + extra)
        return out, text

    def calibrated(self, family: str, scheme: str, rounding: str, gptq: bool) -> tuple[Path, str]:
        return self.quantize(family, scheme, rounding, (["--gptq"] if gptq else []) + [
            "--hidden-states", str(self.calibration), "--target-model", str(TRAINED / "target"), "--k", "4"])

    def row(self, name: str, family: str, scheme: str, method: str, export: Path, output_error) -> None:
        compared = json.loads(run(self.cli, ["compare", str(TRAINED / family), str(export), "--json"]))
        errors = [m["rel_err"] for m in compared["modules"] if m["quantized_in_output"]]
        j = json.loads(run(self.cli, ["acceptance", str(TRAINED / family), "--hidden-states", str(self.held_out),
                                      "--target-model", str(TRAINED / "target"), "--quantized", str(export),
                                      "--k", "4", "--anchors", "all", "--json"]))
        p = j["positions"]
        kl = sum(x["mean_kl"] for x in p) / len(p)
        out_err = "—" if output_error is None else f"{output_error:.5f}"
        print(f"| {name} | {scheme} | {method} | {interval(j['tau_delta'], j['tau_delta_ci'])} "
              f"| {interval(p[0]['delta'], p[0]['delta_ci'])} | "
              + " | ".join(f"{x['delta']:+.4f}" for x in p[1:4])
              + f" | {100 * p[0]['flip_rate']:.2f} % | {kl:.5f} | {sum(errors) / len(errors):.5f} | {out_err} |",
              flush=True)

    def scheme(self, family: str, name: str, scheme: str) -> None:
        # Each method's output error: RTN under its scales, from a GPTQ pass (rtn's pass is also the gptq row).
        probes = {m: self.calibrated(family, scheme, m, True) for m in ("rtn", "mse", "range")} \
            if scheme in INTEGER else {}
        for method in (m for m in METHODS if applies(scheme, m)):
            if method == "gptq":
                export, text = probes["rtn"]
                self.row(name, family, scheme, method, export, output_errors(text)[0])
            elif method == "hessian":
                export, text = self.calibrated(family, scheme, "hessian", False)
                self.row(name, family, scheme, method, export, output_errors(text)[0])
            else:
                export, _ = self.quantize(family, scheme, method, [])
                probe = probes.get(method)
                self.row(name, family, scheme, method, export, output_errors(probe[1])[1] if probe else None)


def main():
    cli = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        calibration, held_out = split_capture(TRAINED / "capture" / "hidden_states.safetensors", folder)
        table = Table(cli, folder, calibration, held_out)
        print("| draft | scheme | rounding | Δτ [95 %] | Δa_0 [95 %] | Δa_1 | Δa_2 | Δa_3 | flips at 0 (of accepted) "
              "| mean KL | mean rel_err | mean output error |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for family, name in FAMILIES.items():
            for scheme in SCHEMES:
                table.scheme(family, name, scheme)


if __name__ == "__main__":
    main()
