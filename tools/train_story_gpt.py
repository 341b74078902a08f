"""Train the small GPT of the live figure of chapter 13 and save it as package data.

    python tools/train_story_gpt.py      # -> lib/checkpoints/gpt_stories.safetensors (about a minute)

The recipe is chapter 13's (notebooks/13_gpt.ipynb, "Pretraining"): the story corpus of lib.data.stories
(3,000 stories and 8,000 single sentences, seed 0), its word vocabulary, windows of 64 tokens, batches
of 32, GPTConfig(n_layer=2, n_head=4, n_embd=64, dropout=0), AdamW at 5e-3 with 20 warm-up steps, seed 0;
here 600 steps instead of the chapter's 300 (the chapter must run in 90 s, the tool need not). One thread,
so the weights are the same on every run on a given machine. tools/export_models.py exports the model to
ONNX for the site; lib.checkpoints.load_story_gpt loads it.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import save_file

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lib.checkpoints import STORY_GPT_PATH  # noqa: E402
from lib.data.stories import generate_sentences, generate_stories, word_vocab  # noqa: E402
from lib.gpt import GPT, GPTConfig  # noqa: E402
from lib.train import fit  # noqa: E402

BLOCK, BATCH, STEPS = 64, 32, 600


def documents(n_stories: int, n_sentences: int, seed: int) -> list[str]:
    """Stories (their sentences joined) and single sentences, shuffled: one string per document."""
    docs = [" ".join(story) for story in generate_stories(n_stories, seed=seed)]
    docs += generate_sentences(n_sentences, seed=seed)
    random.Random(seed).shuffle(docs)
    return docs


def encode_documents(docs, vocab) -> torch.Tensor:
    ids = []
    for doc in docs:
        ids += vocab.encode(doc.split(), add_bos=True, add_eos=True)
    return torch.tensor(ids)


def windows(ids, generator):
    while True:
        starts = torch.randint(0, len(ids) - BLOCK, (BATCH,), generator=generator)
        x = torch.stack([ids[s : s + BLOCK] for s in starts])  # [B, T]
        y = torch.stack([ids[s + 1 : s + BLOCK + 1] for s in starts])  # [B, T]
        yield x, y


def mean_loss(model, ids) -> float:
    n = (len(ids) - 1) // BLOCK * BLOCK
    with torch.no_grad():
        return model(ids[:n].view(-1, BLOCK), ids[1 : n + 1].view(-1, BLOCK)).loss.item()


def main() -> int:
    torch.set_num_threads(1)
    train_docs, val_docs = documents(3000, 8000, seed=0), documents(200, 500, seed=1)
    vocab = word_vocab(train_docs)
    train_ids, val_ids = encode_documents(train_docs, vocab), encode_documents(val_docs, vocab)
    config = GPTConfig(
        vocab_size=len(vocab), block_size=BLOCK, n_layer=2, n_head=4, n_embd=64, dropout=0.0
    )
    torch.manual_seed(0)
    model = GPT(config)
    start = time.time()
    history = fit(
        model,
        windows(train_ids, torch.Generator().manual_seed(0)),
        lambda m, batch: m(*batch).loss,
        steps=STEPS,
        lr=5e-3,
        warmup_steps=20,
        seed=0,
        desc="story GPT",
    )
    model.eval()
    val = mean_loss(model, val_ids)
    meta = {
        "config": json.dumps(config.__dict__),
        "vocab": json.dumps(vocab.itos),
        "specials": json.dumps(
            {"pad": vocab.pad_id, "bos": vocab.bos_id, "eos": vocab.eos_id, "unk": vocab.unk_id}
        ),
        "training": json.dumps(
            {
                "steps": STEPS,
                "batch": BATCH,
                "block": BLOCK,
                "lr": 5e-3,
                "warmup_steps": 20,
                "seed": 0,
                "corpus": "chapter 13's",
            }
        ),
        "val_loss": f"{val:.4f}",
        "seconds": f"{time.time() - start:.1f}",
        "torch": torch.__version__,
    }
    tensors = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    tensors["history.losses"] = torch.tensor(history.losses)
    save_file(tensors, str(STORY_GPT_PATH), metadata=meta)
    print(
        f"validation loss {val:.3f} (perplexity {math.exp(val):.2f}), {time.time() - start:.0f} s -> {STORY_GPT_PATH}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
