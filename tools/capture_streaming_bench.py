"""Shows that a large capture is read streamed: writes a capture of SIZE GB for the trained EAGLE-3 head
(random BF16 states of its layer ids 1, 3, 5 and the last layer 6, random tokens, 256-token samples whose
first 64 are prompt), then runs `capture check` (every sample read) and `acceptance --anchors 512` on it while
sampling the process's memory. The anonymous memory (what the process allocates) must stay near that of one
sample and the anchor batch, not grow with the file; the file's pages are mapped and counted apart (the
kernel drops them under pressure).

  /usr/bin/python3 tools/capture_streaming_bench.py --cli build/dev/app/cli/sparkulator-cli [--gb 10] [--dir DIR]

Prints, per command, the wall time, the peak anonymous and file-backed resident memory, and the peak
anonymous memory as a share of the capture's size."""
import argparse
import json
import os
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
TRAINED = REPO / "tests" / "data" / "trained"
IDS, HIDDEN, LENGTH, PROMPT, VOCAB = [1, 3, 5, 6], 256, 256, 64, 2048


def write_capture(path: Path, gigabytes: float):
    row_bytes = len(IDS) * HIDDEN * 2
    samples = max(1, int(gigabytes * 1e9 / (row_bytes * LENGTH)))
    tokens = samples * LENGTH
    tensors = [("hidden_states", "BF16", [tokens, len(IDS), HIDDEN], tokens * row_bytes),
               ("sample_offsets", "I64", [samples + 1], (samples + 1) * 8),
               ("token_ids", "I32", [tokens], tokens * 4),
               ("loss_mask", "U8", [tokens], tokens)]
    header, offset = {}, 0
    for name, dtype, shape, size in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    header["__metadata__"] = {"format": "sparkulator.hidden-states/1", "layer_ids": json.dumps(IDS),
                              "greedy": "true", "last_layer_included": "true", "hidden_size": str(HIDDEN),
                              "capture": "tools/capture_streaming_bench.py (random)"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    rng = np.random.default_rng(0)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        chunk = 4096  # rows per write
        for first in range(0, tokens, chunk):
            rows = min(chunk, tokens - first)
            values = (rng.standard_normal((rows, len(IDS), HIDDEN), dtype=np.float32) * 2).view(np.uint32)
            f.write((values >> 16).astype(np.uint16).tobytes())
        f.write(np.arange(0, (samples + 1) * LENGTH, LENGTH, dtype=np.int64).tobytes())
        f.write(rng.integers(5, VOCAB, tokens, dtype=np.int32).tobytes())
        mask = np.ones((samples, LENGTH), dtype=np.uint8)
        mask[:, :PROMPT] = 0
        f.write(mask.tobytes())
    return samples, tokens


def status_kib(pid: int) -> dict:
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "VmRSS"):
                out[key] = int(value.split()[0])
    except FileNotFoundError:
        pass
    return out


def measure(command: list[str]) -> tuple[float, dict, int]:
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = {"RssAnon": 0, "RssFile": 0, "VmRSS": 0}
    while process.poll() is None:
        for key, value in status_kib(process.pid).items():
            peak[key] = max(peak[key], value)
        time.sleep(0.05)
    return time.monotonic() - start, peak, process.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--gb", type=float, default=10)
    ap.add_argument("--dir", default=None, help="where the capture is written (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        capture = Path(folder) / "capture.safetensors"
        t = time.monotonic()
        samples, tokens = write_capture(capture, args.gb)
        size = capture.stat().st_size
        print(f"capture: {size / 1e9:.2f} GB, {samples} samples, {tokens} tokens (written in "
              f"{time.monotonic() - t:.0f} s)")
        runs = {
            "capture check": [args.cli, "capture", "check", str(capture)],
            "acceptance --anchors 512": [args.cli, "acceptance", str(TRAINED / "eagle3"), "--hidden-states",
                                         str(capture), "--target-model", str(TRAINED / "target"), "--bf16-only",
                                         "--k", "2", "--anchors", "512"],
        }
        for name, command in runs.items():
            seconds, peak, code = measure(command)
            print(f"{name:26s} exit {code}  {seconds:7.1f} s  peak anonymous {peak['RssAnon'] / 1024:8.1f} MiB "
                  f"({peak['RssAnon'] * 1024 / size:.4f} of the file)  peak file-backed "
                  f"{peak['RssFile'] / 1024:8.1f} MiB")


if __name__ == "__main__":
    main()
