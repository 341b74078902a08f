"""Train chapter 13's GPT and the modern decoder of chapter 17 side by side; store their curves.

    python tools/train_story_llama.py      # -> lib/checkpoints/story_llama_curves.json (minutes)

The recipe is chapter 13's (notebooks/13_gpt.ipynb, "Pretraining", and tools/train_story_gpt.py): the
story corpus of lib.data.stories (3,000 stories and 8,000 single sentences, seed 0; held-out documents
seed 1), its word vocabulary, windows of 64 tokens, batches of 32, 300 steps of AdamW at 5e-3 with 20
warm-up steps and cosine decay. Every variant sees the same batches (the window generator's seed is 0)
and starts from its own seed (0, 1, 2, 3), which changes only the initial weights:

- "gpt": GPTConfig(n_layer=2, n_head=4, n_embd=64, dropout=0), chapter 13's model;
- "llama": LlamaConfig.small with 4 key/value heads (multi-head, no sharing) and tied embeddings: every
  change of the chapter but grouped-query attention, at about GPT's parameter count;
- "llama_gqa": the same with 2 key/value heads (two query heads share each);
- "llama_untied": "llama" with its own output matrix.

One thread, so the losses are the same on every run on a given machine; chapter 17 replays the first
steps of "llama", seed 0, and compares them with the stored ones. The JSON holds, per variant, the
configuration, the parameter count, the loss of every step (5 decimals) and the held-out loss per seed.
The model of that run is saved too, in float16 (about 230 KB), as lib/checkpoints/llama_stories.safetensors
(``lib.checkpoints.load_story_llama``), for the chapter's samples.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from safetensors.torch import save_file  # noqa: E402

from lib.checkpoints import STORY_LLAMA_CURVES_PATH, STORY_LLAMA_PATH  # noqa: E402
from lib.data.stories import word_vocab  # noqa: E402
from lib.gpt import GPT, GPTConfig  # noqa: E402
from lib.gpt import count_parameters as gpt_parameters  # noqa: E402
from lib.llama import Llama, LlamaConfig  # noqa: E402
from lib.llama import count_parameters as llama_parameters  # noqa: E402
from lib.train import fit  # noqa: E402
from tools.train_story_gpt import BATCH, BLOCK, documents, encode_documents, mean_loss  # noqa: E402

STEPS, LR, WARMUP, SEEDS = 300, 5e-3, 20, (0, 1, 2, 3)


def configs(vocab_size: int) -> dict:
    """The variants, by name: (config, model class)."""
    llama = dict(vocab_size=vocab_size, max_position_embeddings=BLOCK, num_key_value_heads=4,
                 tie_word_embeddings=True)  # fmt: skip
    return {
        "gpt": GPTConfig(
            vocab_size=vocab_size, block_size=BLOCK, n_layer=2, n_head=4, n_embd=64, dropout=0.0
        ),  # fmt: skip
        "llama": LlamaConfig.small(**llama),
        "llama_gqa": LlamaConfig.small(**{**llama, "num_key_value_heads": 2}),
        "llama_untied": LlamaConfig.small(**{**llama, "tie_word_embeddings": False}),
    }


def build(config, seed: int):
    torch.manual_seed(seed)
    return GPT(config) if isinstance(config, GPTConfig) else Llama(config)


def train(config, seed: int, train_ids, steps: int = STEPS, stop_after: int | None = None):
    """One run of the recipe: (model, History). The window stream's seed is 0 for every run."""
    model = build(config, seed)
    generator = torch.Generator().manual_seed(0)

    def windows():
        while True:
            starts = torch.randint(0, len(train_ids) - BLOCK, (BATCH,), generator=generator)
            x = torch.stack([train_ids[s : s + BLOCK] for s in starts])  # [B, T]
            y = torch.stack([train_ids[s + 1 : s + BLOCK + 1] for s in starts])  # [B, T]
            yield x, y

    history = fit(model, windows(), lambda m, batch: m(*batch).loss, steps=steps, lr=LR,
                  warmup_steps=WARMUP, seed=seed, stop_after=stop_after,
                  progress=False)  # fmt: skip
    return model.eval(), history


def save_story_llama(model, vocab, val_loss: float) -> None:
    """The trained model in float16 with its config, vocabulary and held-out loss (float32)."""
    c = model.config
    tensors = {k: v.half().contiguous() for k, v in model.state_dict().items()
               if not (c.tie_word_embeddings and k == "lm_head.weight")}  # fmt: skip
    meta = {
        "config": json.dumps({k: v for k, v in c.__dict__.items() if k != "rope_scaling"}),
        "vocab": json.dumps(vocab.itos),
        "training": json.dumps(
            {
                "steps": STEPS,
                "lr": LR,
                "warmup_steps": WARMUP,
                "batch": BATCH,
                "block": BLOCK,
                "seed": 0,
                "corpus": "chapter 13's",
            }
        ),  # fmt: skip
        "val_loss": f"{val_loss:.5f}",
        "torch": torch.__version__,
    }
    save_file(tensors, str(STORY_LLAMA_PATH), metadata=meta)


def main() -> int:
    torch.set_num_threads(1)
    train_docs, val_docs = documents(3000, 8000, seed=0), documents(200, 500, seed=1)
    vocab = word_vocab(train_docs)
    train_ids, val_ids = encode_documents(train_docs, vocab), encode_documents(val_docs, vocab)
    out = {
        "recipe": {
            "steps": STEPS,
            "lr": LR,
            "warmup_steps": WARMUP,
            "batch": BATCH,
            "block": BLOCK,
            "seeds": list(SEEDS),
            "window_seed": 0,
            "corpus": "chapter 13's",
            "vocab_size": len(vocab),
        },  # fmt: skip
        "torch": torch.__version__,
        "variants": {},
    }
    for name, config in configs(len(vocab)).items():
        count = gpt_parameters if isinstance(config, GPTConfig) else llama_parameters
        entry = {"config": {k: v for k, v in config.__dict__.items() if k != "rope_scaling"},
                 "parameters": count(config), "losses": [], "val_loss": [], "seconds": []}  # fmt: skip
        for seed in SEEDS:
            model, history = train(config, seed, train_ids)
            val = mean_loss(model, val_ids)
            entry["losses"].append([round(x, 5) for x in history.losses])
            entry["val_loss"].append(round(val, 5))
            entry["seconds"].append(round(history.seconds, 1))
            print(f"{name} seed {seed}: val {val:.4f}, {history.seconds:.0f} s", flush=True)
            if name == "llama" and seed == 0:
                save_story_llama(model, vocab, val)
        out["variants"][name] = entry
    STORY_LLAMA_CURVES_PATH.write_text(json.dumps(out) + "\n")
    print(f"-> {STORY_LLAMA_CURVES_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
