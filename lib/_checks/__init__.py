"""Each model module's own input checks, one file per module (``lib/_checks/gpt.py`` holds
``check_gpt_config``, ``check_gpt_inputs``, ...), built on the primitives of ``lib._validate``.
A model module imports its checks from here and calls them in one line at its door; these files
never import a model module: a check that needs a model's type takes it as an argument
(``check_gpt_decoding(model, GPT, ...)``). A check shared by a family lives with the family's first
member (``lib._checks.gpt.check_lm_input`` serves lib.llama too; ``lib._checks.bert`` serves
lib.albert)."""
