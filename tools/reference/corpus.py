"""The training corpus: the CPython 3.11 standard library sources Debian 12 installs (PSF licence), minus
its tests, split into training and held-out files by a fixed rule, pinned by path and sha256 in
corpus-files.txt (Debian point releases patch single files; a changed file is reported, not used).

  python3 corpus.py pin        # (re)write corpus-files.txt from this machine
  python3 corpus.py tokenizer  # train the SentencePiece tokenizer on the training files
  python3 corpus.py encode     # tokenize both splits into WORK/corpus-{train,heldout}.npy
"""
import hashlib
import sys
from pathlib import Path

import numpy as np

import common

STDLIB = Path("/usr/lib/python3.11")
PINNED = common.TOOLS / "corpus-files.txt"
VOCAB = 2048
# A newline is a token of its own: SentencePiece reads one sentence per line, so each source line is fed
# with this terminator instead of "\n".
NEWLINE = "\u00b6"
MASK = "<mask>"  # DFlash / DSpark mask token (id 3, after unk, bos, eos)


def candidate_files():
    skip = ("test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__", "lib2to3")
    for p in sorted(STDLIB.rglob("*.py")):
        rel = p.relative_to(STDLIB)
        if any(part in skip for part in rel.parts[:-1]) or rel.name.startswith("test_"):
            continue
        yield rel


def split_of(rel: Path) -> str:
    # Held out: one file in ten, chosen by a hash of its path (stable, independent of the file count).
    digest = hashlib.sha256(str(rel).encode()).digest()
    return "heldout" if digest[0] % 10 == 0 else "train"


def pin():
    lines = []
    for rel in candidate_files():
        lines.append(f"{split_of(rel)} {common.sha256(STDLIB / rel)} {rel}")
    PINNED.write_text("# split sha256 path (under /usr/lib/python3.11, Debian 12 libpython3.11-stdlib)\n"
                      + "\n".join(lines) + "\n")
    print(f"pinned {len(lines)} files")


def pinned_files(split: str):
    out = []
    for line in PINNED.read_text().splitlines():
        if line.startswith("#"):
            continue
        s, digest, rel = line.split(" ", 2)
        if s != split:
            continue
        path = STDLIB / rel
        if not path.exists() or common.sha256(path) != digest:
            print(f"corpus: {path} is missing or differs from the pinned sha256; skipped", file=sys.stderr)
            continue
        out.append(path)
    return out


def lines_of(path: Path):
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        yield line.replace(NEWLINE, " ") + NEWLINE


def train_tokenizer():
    import sentencepiece as spm
    common.WORK.mkdir(parents=True, exist_ok=True)
    text = common.WORK / "tokenizer-input.txt"
    with open(text, "w", encoding="utf-8") as f:
        for path in pinned_files("train"):
            for line in lines_of(path):
                f.write(line + "\n")
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(common.WORK / "tokenizer"), vocab_size=VOCAB, model_type="bpe",
        character_coverage=1.0, byte_fallback=True, add_dummy_prefix=False, remove_extra_whitespaces=False,
        normalization_rule_name="identity", split_by_whitespace=True, allow_whitespace_only_pieces=True,
        user_defined_symbols=[MASK, NEWLINE], input_sentence_size=2_000_000, shuffle_input_sentence=True,
        seed_sentencepiece_size=200_000, num_threads=2, max_sentence_length=8192)
    out = common.TRAINED / "tokenizer.model"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes((common.WORK / "tokenizer.model").read_bytes())
    print(f"tokenizer: {out}")


def tokenizer():
    import sentencepiece as spm
    return spm.SentencePieceProcessor(model_file=str(common.TRAINED / "tokenizer.model"))


def encode_file(sp, path: Path) -> list[int]:
    ids = []
    for line in lines_of(path):
        ids.extend(sp.encode(line))
    return ids


def encode():
    sp = tokenizer()
    assert sp.piece_to_id(MASK) == 3, "the mask token must be id 3"
    for split in ("train", "heldout"):
        ids, starts = [], []
        for path in pinned_files(split):
            starts.append(len(ids))
            ids.extend(encode_file(sp, path))
            ids.append(sp.eos_id())
        np.save(common.WORK / f"corpus-{split}.npy", np.asarray(ids, dtype=np.int16))
        np.save(common.WORK / f"corpus-{split}-starts.npy", np.asarray(starts, dtype=np.int64))
        print(f"{split}: {len(starts)} files, {len(ids)} tokens")


if __name__ == "__main__":
    {"pin": pin, "tokenizer": train_tokenizer, "encode": encode}[sys.argv[1]]()
