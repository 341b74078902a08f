"""The agreement gain of chapter 14 (*BERT*) over several seeds: what one run of the chapter cannot say.

The chapter pretrains its small BERT once and fine-tunes it, and the same model from random weights,
on 200 agreement sentences. The pretrained start came out 26 points ahead on an Intel Xeon and 3 on an
AMD EPYC, from the same code and seeds: the gain moves with the rounding, so it may move as much with
the seed. This script runs the chapter's own code (its cells, read from the notebook) for several
seeds, each seed changing both the pretraining (initial weights, batches) and the fine-tuning (initial
classifier, batch order), and writes the test accuracies to ``tools/agreement_seeds.json``. Seed 0 is
the chapter's own run. ``tests/test_agreement_seeds.py`` holds the chapter's sentence about the spread
to that file. About a minute of processor time a seed, most of it the pretraining (measured:
55 s on an AMD EPYC core), too long for the chapter's time:

    python tools/agreement_seeds.py            # seeds 0 to 5
    python tools/agreement_seeds.py 0 1 2 & python tools/agreement_seeds.py 3 4 5   # two cores
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import platform
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "14_bert.ipynb"
OUT = ROOT / "tools" / "agreement_seeds.json"
# the cells the experiment needs, found by their first line
CELLS = [
    "import math",  # imports
    "stories = generate_stories(",  # corpus and tokenizer
    "def rows(enc, index):",  # batch helpers
    "pairs = make_nsp_pairs(stories, 10000, seed=0)",  # next-sentence pairs
    "config = BertConfig(",  # the model and the pretraining step
    "def word_order_examples(",  # the tasks
    "def new_classifier(pretrained):",  # fine-tuning and scoring
]


def _processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def chapter_namespace() -> dict:
    """The chapter's definitions, from its own cells (their printed output discarded)."""
    cells = [c.source for c in nbformat.read(CHAPTER, as_version=4).cells if c.cell_type == "code"]
    namespace: dict = {}
    for first in CELLS:
        (source,) = [s for s in cells if s.startswith(first)]
        if first.startswith("def word_order_examples("):
            # the tasks' held-out sentences avoid the pretraining text (defined in a later cell)
            exec(  # noqa: S102 (the book's own cell)
                "pretraining_text = set(sentences) | {s for story in stories for s in story}",
                namespace,
            )
        with contextlib.redirect_stdout(io.StringIO()):
            exec(source, namespace)  # noqa: S102 (the book's own cell)
    return namespace


def run_seed(ns: dict, seed: int) -> dict:
    """Pretrain with ``seed``, fine-tune both starts on agreement with ``seed``: the test accuracies."""
    torch, fit = ns["torch"], ns["fit"]
    torch.manual_seed(seed)
    bert = ns["BertForPreTraining"](ns["config"])
    record = ns["EMPTY_RECORD"]

    def loss_fn(model, batch):
        nonlocal record
        loss, record = ns["pretraining_step"](model, batch, record)
        return loss

    fit(bert, ns["pretraining_stream"](seed), loss_fn, steps=800, lr=5e-3, warmup_steps=30,
        seed=seed, desc="pretraining", progress=False)  # fmt: skip
    train, test = ns["tasks"]["agreement"]
    accuracy = {}
    for start in ("pretrained", "from scratch"):
        # as the chapter's new_classifier, whose seed 1 is this seed 0's
        torch.manual_seed(1 + seed)
        classifier = ns["BertForSequenceClassification"](ns["config"], num_labels=2)
        if start == "pretrained":
            classifier.bert.load_state_dict(bert.bert.state_dict())
        accuracy[start] = _fine_tune_and_score(ns, classifier, train, test, seed)
    return accuracy


def _fine_tune_and_score(ns: dict, classifier, train, test, seed: int) -> float:
    """The chapter's fine_tune (150 steps, batches of 32), its batch order and fit seeded by ``seed``."""
    torch, F = ns["torch"], ns["F"]
    tokenizer, rows = ns["tokenizer"], ns["rows"]
    enc = tokenizer.encode_batch([s for s, _ in train])
    y = torch.tensor([label for _, label in train])
    g = torch.Generator().manual_seed(seed)

    def batches():
        while True:
            for j in torch.randperm(len(y), generator=g).split(32):
                yield rows(enc, j), y[j]

    def loss(model, batch):
        enc, labels = batch
        return F.cross_entropy(
            model(enc.input_ids, attention_mask=enc.attention_mask).logits, labels
        )

    ns["fit"](classifier, batches(), loss, steps=150, lr=1e-3, warmup_steps=10, seed=seed,
              desc="fine-tuning", progress=False)  # fmt: skip
    return ns["classifier_accuracy"](classifier, test)


def _save(run: dict) -> None:
    """Adds one seed's run to OUT (replacing an earlier run of that seed); several processes may
    share the file (a lock around each write), e.g. one per core."""
    with open(__file__) as lock:  # the script itself: no lock file left behind
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = json.loads(OUT.read_text()) if OUT.exists() else {"runs": []}
        runs = [r for r in old["runs"] if r["seed"] != run["seed"]] + [run]
        data = {"processor": _processor(), "runs": sorted(runs, key=lambda r: r["seed"])}
        OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str]) -> None:
    seeds = [int(a) for a in argv] or [0, 1, 2, 3, 4, 5]
    ns = chapter_namespace()
    ns["torch"].set_num_threads(1)
    for seed in seeds:
        start = time.perf_counter()
        accuracy = run_seed(ns, seed)
        gain = accuracy["pretrained"] - accuracy["from scratch"]
        _save({"seed": seed, **accuracy, "gain": gain})
        print(f"seed {seed}: pretrained {accuracy['pretrained']:.1%}, from scratch "
              f"{accuracy['from scratch']:.1%}, gain {100 * gain:+.1f} points "
              f"({time.perf_counter() - start:.0f} s)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
