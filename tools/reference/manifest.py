"""Writes tests/data/trained/manifest.json: the sha256 of every committed artefact, and for each training or
decoding stage the command that made it, its steps, losses and wall time (from the stages' result files in
WORK). tst_trainedartefacts checks the sha256s.

  python3 manifest.py
"""
import json

import common

STAGES = {"target": "target/result.json", "drafts": "drafts/result.json", "loops": "loops/result.json"}


def main():
    files = {}
    for path in sorted(common.TRAINED.rglob("*")):
        if path.is_file() and str(path.relative_to(common.TRAINED)) not in ("manifest.json", "README.md"):
            files[str(path.relative_to(common.TRAINED))] = common.sha256(path)
    stages = {}
    for name, rel in STAGES.items():
        result = common.WORK / rel
        if result.exists():
            stages[name] = json.loads(result.read_text())
    common.write_json(common.TRAINED / "manifest.json",
                      {"format": "sparkulator-trained-artefacts", "version": 1, "stages": stages, "sha256": files})
    print(f"manifest: {len(files)} files")


if __name__ == "__main__":
    main()
