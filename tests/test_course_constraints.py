"""The constraints an exercise states are the ones the course's grader enforces (lecturer review r3,
problem 3): every "Without the library's `X`" in a chapter's exercise statement has a refusal of X
in that chapter's ``REFUSALS`` for the checker the exercise calls, and every refusal names a
function (or a class's method) that tools/sandbox.py can swap, so none is skipped silently."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import sandbox  # noqa: E402

WITHOUT = re.compile(r"[Ww]ithout the library's ((?:`[\w.]+`(?:,? and |, )?)+)")
CHECK = re.compile(r"\b(check_\w+)\(")


def _constraints() -> list[tuple[str, str, list[str]]]:
    """(chapter, checker, [forbidden names]) for each statement that forbids a library function."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        for i, cell in enumerate(cells):
            if cell.cell_type != "markdown":
                continue
            for match in WITHOUT.finditer(" ".join(cell.source.split())):
                names = re.findall(r"`([\w.]+)`", match.group(1))
                checker = next(
                    m.group(1)
                    for later in cells[i + 1 :]
                    if later.cell_type == "code" and (m := CHECK.search(later.source))
                )
                found.append((path.name[:2], checker, names))
    return found


def test_the_scan_finds_chapter_17s_constraint():
    assert ("17", "check_ffn_sublayer", ["RMSNorm", "SwiGLU"]) in _constraints()


@pytest.mark.parametrize("chapter, checker, names", _constraints())
def test_every_stated_constraint_is_refused(chapter, checker, names):
    module = importlib.import_module(f"lib.exercises.ch{chapter}")
    targets = [target for target, _, _ in getattr(module, "REFUSALS", {}).get(checker, [])]
    for name in names:
        assert any(name in target.split(".") for target in targets), (chapter, checker, name)


def _all_refusals():
    for chapter in range(1, 19):
        module = importlib.import_module(f"lib.exercises.ch{chapter:02d}")
        for checker, refusals in getattr(module, "REFUSALS", {}).items():
            for target, _, _ in refusals:
                yield chapter, checker, target


@pytest.mark.parametrize("chapter, checker, target", list(_all_refusals()))
def test_every_refusal_names_a_function_the_sandbox_can_swap(chapter, checker, target):
    """sandbox._guard skips what is not a plain function without free variables, or a built-in
    function of a module (replaced there): a refusal of anything else would refuse nothing. A pattern
    (transformers' checkpoints' copies) names at least one such function once llama's module is in."""
    import transformers.models.bloom.modeling_bloom  # noqa: F401
    import transformers.models.llama.modeling_llama  # noqa: F401

    if target.endswith("LayerNorm.forward"):  # the T5 family's RMSNorms (lecturer review s17, M1)
        for module in ("t5", "longt5", "mt5", "umt5", "switch_transformers", "pop2piano", "udop"):
            importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    found = sandbox._targets(target)
    assert found, target
    for name, function in found:
        assert (
            isinstance(function, types.FunctionType) and not function.__code__.co_freevars
        ) or isinstance(function, types.BuiltinFunctionType), name


def test_another_librarys_copy_of_a_forbidden_function_is_refused():
    """In a fresh process: transformers' repeat_kv, apply_rotary_pos_emb and RMSNorm, torch's rms_norm
    (its functional and built-in forms) and RMSNorm refuse while the student's function is called, a
    checkpoint module imported only after the guards were set included (lecturer review s15, S3);
    outside that call they work."""
    script = """
import sys, torch
sys.path.insert(0, "tools")
import sandbox
from lib.exercises import ch17
refusals = [{"target": t, "when": "always"} for c in ch17.REFUSALS.values() for t, _, _ in c]
index = {r["target"]: i for i, r in enumerate(refusals)}
alias = torch._C._VariableFunctions.rms_norm  # taken before the guards (judy's module-level alias)
sandbox._guard({}, refusals)
from transformers.models.qwen3.modeling_qwen3 import repeat_kv, apply_rotary_pos_emb, Qwen3RMSNorm
import torch.nn.functional as F
sandbox._guard({}, refusals)  # as before each call: the modules imported since
k, x = torch.randn(1, 2, 3, 4), torch.randn(2, 4)
cos, sin = torch.ones(1, 3, 4), torch.zeros(1, 3, 4)
calls = {
    "transformers.models.*.modeling_*.repeat_kv": lambda: repeat_kv(k, 2),
    "transformers.models.*.modeling_*.apply_rotary_pos_emb": lambda: apply_rotary_pos_emb(k, k, cos, sin),
    "transformers.models.*.modeling_*.*RMSNorm.forward": lambda: Qwen3RMSNorm(4)(x),
    "torch.nn.functional.rms_norm": lambda: F.rms_norm(x, (4,)),
    "torch.rms_norm": lambda: torch.rms_norm(x, (4,)),
    "torch.nn.RMSNorm.forward": lambda: torch.nn.RMSNorm(4)(x),
    # the same op under torch's other names (lecturer review s17, S1)
    "torch.ops.aten.rms_norm": lambda: torch.ops.aten.rms_norm(x, [4], None, 1e-6),
    "torch.ops.aten.rms_norm.default": lambda: torch.ops.aten.rms_norm.default(x, [4], None, 1e-6),
    "torch._C._VariableFunctions.rms_norm": lambda: torch._C._VariableFunctions.rms_norm(x, [4]),
    "an alias kept before the guard": lambda: alias(x, [4]),
}
if hasattr(torch.ops.aten, "_fused_rms_norm"):
    calls["torch.ops.aten._fused_rms_norm"] = lambda: torch.ops.aten._fused_rms_norm(x, [4], None, 1e-6)
for call in calls.values():
    call()  # the cells may use them
rms = {"torch.rms_norm", "torch._fused_rms_norm", "torch.nn.functional.rms_norm"}
with sandbox._calling():
    for target, call in calls.items():
        try:
            call()
        except sandbox._Refused as e:
            assert refusals[e.index]["target"] in {target} | rms, (target, e.index)
        else:
            raise SystemExit(f"{target} was not refused")
assert torch.ops.aten.rms_norm(x, [4], None, 1e-6).shape == x.shape  # after the call: allowed
print("refused")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "refused" in done.stdout, done.stderr[-2000:]


def test_a_refused_class_refuses_an_instance_built_in_the_answer():
    """In a fresh process (the swap is global, as in the sandbox's child): an RMSNorm and a SwiGLU
    built while the student's function is called refuse; outside that call they still work."""
    script = """
import sys, torch
sys.path.insert(0, "tools")
import sandbox
from lib.llama import LlamaConfig, RMSNorm, SwiGLU
norm = RMSNorm(4)
config = LlamaConfig(vocab_size=8, hidden_size=4, intermediate_size=6, num_hidden_layers=1,
                     num_attention_heads=1, num_key_value_heads=1, head_dim=4)
ffn = SwiGLU(config)
sandbox._guard({}, [{"target": "lib.llama.RMSNorm.forward", "when": "always"},
                    {"target": "lib.llama.SwiGLU.forward", "when": "always"}])
x = torch.randn(1, 2, 4)
assert norm(x).shape == x.shape and ffn(x).shape == x.shape  # the cells may use them
sandbox._CALLING[0] = True
for i, layer in enumerate([RMSNorm(4), ffn]):
    try:
        layer(x)
    except sandbox._Refused as e:
        assert e.index == i
    else:
        raise SystemExit(f"layer {i} was not refused")
print("refused")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "refused" in done.stdout, done.stderr[-2000:]


def test_the_t5_familys_layernorm_an_rmsnorm_is_refused():
    """Lecturer review s17, M1: T5LayerNorm, LongT5LayerNorm, SwitchTransformersLayerNorm and
    Pop2PianoLayerNorm (and MT5's, UMT5's, Udop's) are exact RMSNorms under another name: chapter
    17's refusals name each, so only a refusal, not an accident of the sandbox, stops them."""
    script = """
import importlib, sys, torch
sys.path.insert(0, "tools")
import sandbox
from lib.exercises import ch17
refusals = [{"target": t, "when": "always"} for c in ch17.REFUSALS.values() for t, _, _ in c]
classes = {}
for module, name in [("t5", "T5LayerNorm"), ("longt5", "LongT5LayerNorm"),
                     ("switch_transformers", "SwitchTransformersLayerNorm"),
                     ("pop2piano", "Pop2PianoLayerNorm"), ("mt5", "MT5LayerNorm"),
                     ("umt5", "UMT5LayerNorm"), ("udop", "UdopLayerNorm")]:
    found = getattr(importlib.import_module(f"transformers.models.{module}.modeling_{module}"), name, None)
    if found is not None:
        classes[name] = found
assert {"T5LayerNorm", "LongT5LayerNorm", "SwitchTransformersLayerNorm", "Pop2PianoLayerNorm"} <= set(classes)
sandbox._guard({}, refusals)
x = torch.randn(2, 4)
with sandbox._calling():
    for name, cls in classes.items():
        try:
            cls(4)(x)
        except sandbox._Refused as e:
            assert refusals[e.index]["target"].endswith(f".{name}.forward"), (name, e.index)
        else:
            raise SystemExit(f"{name} was not refused")
print("refused", len(classes))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "refused" in done.stdout, done.stderr[-2000:]


def test_an_unused_transformers_import_costs_nothing_and_a_starting_import_is_named(tmp_path):
    """Lecturer review s17, M1: `from transformers.models.t5.modeling_t5 import T5LayerNorm` in an
    answer cell started `/sbin/ldconfig -p` (trio, as transformers loads) and cost the exercise as
    "start a program". The zygote imports such libraries before the audit hook (sandbox.PREIMPORT),
    and when an import still starts a program the report names that import."""
    (tmp_path / "starts_a_program.py").write_text(
        "import subprocess\nsubprocess.Popen(['true']).wait()\n"
    )
    script = f"""
import os, sys
sys.path.insert(0, "tools")
import sandbox
sandbox._preimport()
read, write = os.pipe()
scratch = {str(tmp_path)!r}
sandbox._install_audit_hook(scratch, [], write)
from transformers.models.t5.modeling_t5 import T5LayerNorm  # an answer's unused import
print("imported", flush=True)
sys.path.insert(0, scratch)
import starts_a_program  # stopped: it starts a program as it loads
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, timeout=300
    )
    assert b"imported" in done.stdout, done.stderr[-2000:]
    assert done.returncode == sandbox.VIOLATION_EXIT, done.stderr[-2000:]


def test_the_violation_names_the_import_that_started_the_program(tmp_path):
    (tmp_path / "starts_a_program.py").write_text(
        "import subprocess\nsubprocess.Popen(['true']).wait()\n"
    )
    script = f"""
import json, os, struct, sys
sys.path.insert(0, "tools")
import sandbox
read, write = os.pipe()
scratch = {str(tmp_path)!r}
sys.path.insert(0, scratch)
pid = os.fork()
if pid == 0:
    os.close(read)
    sandbox._install_audit_hook(scratch, [], write)
    import starts_a_program
    os._exit(0)
os.close(write)
_, status = os.waitpid(pid, 0)
data = os.read(read, 1 << 16)
print(os.waitstatus_to_exitcode(status), json.loads(data[9:])["violation"])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    code, violation = done.stdout.split(" ", 1)
    assert int(code) == sandbox.VIOLATION_EXIT, done.stderr[-2000:]
    assert violation.startswith("start a program (subprocess.Popen)"), violation
    assert "the import of starts_a_program" in violation, violation


def test_torchs_fused_encoder_layer_and_switching_the_mode_off_are_refused():
    """In a fresh process: chapter 9's pre_ln_layer may not call torch's fused encoder-layer fast
    path (``torch._transformer_encoder_layer_fwd`` with the layer's weights) under any of its names,
    and an answer may not switch off the torch function mode that refuses it
    (``torch._C.DisableTorchFunction``, a mode popped from its stack, or the mode's own exit)."""
    script = """
import sys, torch
sys.path.insert(0, "tools")
import sandbox
from lib.exercises import ch09
refusals = [{"target": t, "when": "always"} for c in ch09.REFUSALS.values() for t, _, _ in c]
alias = torch._C._VariableFunctions._transformer_encoder_layer_fwd  # taken before the guards
sandbox._guard({}, refusals)
layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, norm_first=True, batch_first=True)
a, x = layer.eval().self_attn, torch.randn(1, 3, 8)
args = (x, 8, 2, a.in_proj_weight, a.in_proj_bias, a.out_proj.weight, a.out_proj.bias, False,
        True, 1e-5, layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias,
        layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias, None, None)
answers = '''
import torch
def fused(args): return torch._transformer_encoder_layer_fwd(*args)
def aten(args): return torch.ops.aten._transformer_encoder_layer_fwd(*args)
def vf(args): return torch._C._VariableFunctions._transformer_encoder_layer_fwd(*args)
def disabled(args):
    with torch._C.DisableTorchFunction():
        return torch._C._VariableFunctions._transformer_encoder_layer_fwd(*args)
def popped(args):
    from torch.overrides import _pop_mode_temporarily
    with _pop_mode_temporarily():
        return torch._C._VariableFunctions._transformer_encoder_layer_fwd(*args)
def stack(args):
    mode = torch._C._pop_torch_function_stack()
    return torch._C._VariableFunctions._transformer_encoder_layer_fwd(*args)
def exited(args):
    mode = torch.overrides._get_current_function_mode_stack()[-1]
    mode.__exit__(None, None, None)
    return torch._C._VariableFunctions._transformer_encoder_layer_fwd(*args)
def fine(args):
    return torch.nn.functional.layer_norm(args[0], (8,)) + 1  # torch's modes at work, allowed
'''
space = {}
exec(compile(answers, "<answer ch09_ex1>", "exec"), space)
for name in ("fused", "aten", "vf", "disabled"):
    assert space[name](args).shape == x.shape  # outside the grader's call: allowed
for name in ("fused", "aten", "vf", "disabled", "popped", "stack", "exited"):
    try:
        with sandbox._calling():
            space[name](args)
    except sandbox._Refused as e:
        assert refusals[e.index]["target"] == "torch._transformer_encoder_layer_fwd", name
    except sandbox.RefusedEscape as e:
        assert "switched off torch function modes" in str(e) and name in ("disabled", "popped", "stack", "exited"), name
    else:
        raise SystemExit(f"{name} was not refused")
    assert torch._C._len_torch_function_stack() == 0, name
with sandbox._calling():
    assert space["fine"](args).shape == x.shape
assert alias(*args).shape == x.shape  # after the call: allowed
print("refused")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "refused" in done.stdout, (done.stdout + done.stderr)[-3000:]


def test_a_statements_without_lib_x_refuses_every_function_of_lib_x():
    """Lecturer review s22, S3: ``lib.alibi._slopes``, which does ``alibi_slopes``' work, passed
    chapter 18's "Without `lib.alibi`"; chapter 10's ``lib.bpe._apply`` was refused by no rule. From
    the refusal table: every function of the module a statement names, else the helpers behind the
    refused function, each refused as it is."""
    import grade_course

    from lib.exercises import ch10, ch18

    source = nbformat.read(ROOT / "notebooks" / "18_attention_at_scale.ipynb", as_version=4)
    statement = next(c.source for c in source.cells if "Without `lib.alibi`" in c.source)
    table = ch18.REFUSALS["check_alibi_slopes"]
    found = {t: raiser for t, _, raiser in grade_course._module_refusals(table, statement)}
    assert {"lib.alibi._slopes", "lib.alibi.alibi_bias"} <= set(found)
    # refused as alibi_slopes is, naming the function called (lecturer review course46, M3)
    said = {}
    for target in ("lib.alibi._slopes", "lib.alibi.alibi_bias"):
        with pytest.raises(RuntimeError) as refused:
            found[target]()
        said[target] = str(refused.value)
    with pytest.raises(RuntimeError) as own:
        table[0][2]()
    assert str(own.value) == (
        "it called the library's alibi_slopes; compute the slopes yourself, from 2^(-8/n) and "
        "the released code's rule"
    )
    assert said["lib.alibi._slopes"] == str(own.value).replace("alibi_slopes", "_slopes")
    assert said["lib.alibi.alibi_bias"] == str(own.value).replace("alibi_slopes", "alibi_bias")
    helpers = {t for t, _, _ in grade_course._module_refusals(table, "")}
    assert "lib.alibi._slopes" in helpers and "lib.alibi.alibi_bias" not in helpers
    bpe = {t for t, _, _ in grade_course._module_refusals(ch10.REFUSALS["check_replay"], "")}
    assert "lib.bpe._apply" in bpe


def test_the_grader_reads_each_exercises_statement():
    import grade_course
    import make_course

    chapter = "18_attention_at_scale"
    source = nbformat.read(ROOT / "notebooks" / f"{chapter}.ipynb", as_version=4)
    course, _ = make_course.course_notebook(source, chapter)
    _, exercises = grade_course.plan_chapter(course)
    assert "Without `lib.alibi`" in exercises[1].statement
    assert "Without `lib.alibi`" not in exercises[0].statement


def _ch18_refused(checker: str, answers: str, calls: dict[str, tuple]) -> str:
    """Run ``answers`` (an answer cell of chapter 18) in a fresh process with ``checker``'s
    refusals guarded, call each function of ``calls`` as the grader does, and print, per name,
    the refusal's target or "passed"."""
    script = f"""
import math, sys, torch
sys.path.insert(0, "tools")
import sandbox
from lib.exercises import ch18
refusals = [{{"target": t, "when": "always"}} for t, _, _ in ch18.REFUSALS[{checker!r}]]
space = {{}}
exec(compile({answers!r}, "<answer ch18>", "exec"), space)
sandbox._guard({{}}, refusals)
torch.manual_seed(0)
q, k, v, do = (torch.randn(4, 3) for _ in range(4))
s = q @ k.T / math.sqrt(3)
lse = torch.logsumexp(s, -1)
delta = (do * (torch.softmax(s, -1) @ v)).sum(-1)
args = {{"x": (torch.randn(10), 3), "tile": (q, k, v, do, lse, delta, 1 / math.sqrt(3))}}
for name, kind in {calls!r}.items():
    try:
        with sandbox._calling(), torch.no_grad():
            space[name](*args[kind])
    except sandbox._Refused as e:
        print(name, refusals[e.index]["target"])
    else:
        print(name, "passed")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done.stdout


def test_chapter_18s_forbidden_torch_functions_are_refused_under_any_name():
    """Lecturer review s24, S2: exercise 1's statement forbids torch.softmax and torch.logsumexp;
    ``from torch import logsumexp as L`` got 2/2. The refusal table refuses them under any name."""
    answers = """
import math, torch
import torch.nn.functional as F
from torch import logsumexp as L

def alias(x, block):
    return x.max().item(), math.exp(float(L(x, 0)) - x.max().item())

def method(x, block):
    return x.max().item(), math.exp(float(x.logsumexp(0)) - x.max().item())

def special(x, block):
    return x.max().item(), math.exp(float(torch.special.logsumexp(x, 0)) - x.max().item())

def functional(x, block):
    return x.max().item(), float(1 / F.softmax(x, 0).max())

def own(x, block):
    m, total = -math.inf, 0.0
    for start in range(0, len(x), block):
        chunk = x[start : start + block]
        new = max(m, chunk.max().item())
        total = total * math.exp(m - new) + torch.exp(chunk - new).sum().item()
        m = new
    return m, total
"""
    calls = {n: "x" for n in ("alias", "method", "special", "functional", "own")}
    out = _ch18_refused("check_running_max_and_sum", answers, calls)
    assert "alias torch.logsumexp" in out and "method torch.logsumexp" in out, out
    assert "special torch." in out and "functional torch." in out and "softmax" in out, out
    assert "own passed" in out, out


def test_chapter_18s_tile_backward_by_the_library_or_autograd_is_refused():
    """Lecturer review s24, S1: exercise 4 answered with ``lib.flash.FlashAttention.backward`` on
    a made-up ctx (erin), or with ``torch.autograd.grad`` of a surrogate loss (heidi), got 2/2. Both
    are refused, as are ``.backward()`` and torch.func; the worked solution is not."""
    answers = """
import torch
from types import SimpleNamespace
from lib.flash import FlashAttention

def library(q, k, v, do, lse, delta, scale):
    out = do * (delta / (do * do).sum(-1).clamp_min(1e-30))[:, None]
    ctx = SimpleNamespace(saved_tensors=(q, k, v, out, lse, None, None),
                          options=(False, q.shape[0], k.shape[0]))
    dq, dk, dv, *_ = FlashAttention.backward(ctx, do)
    return dq, dk, dv

def _surrogate(q, k, v, do, lse, delta, scale):
    p = torch.exp(q @ k.T * scale - lse[:, None])
    return (do * (p @ v)).sum() - (delta[:, None] * p).sum()

def autograd(q, k, v, do, lse, delta, scale):
    with torch.enable_grad():
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        return torch.autograd.grad(_surrogate(*leaves, do, lse, delta, scale), leaves)

def backward(q, k, v, do, lse, delta, scale):
    with torch.enable_grad():
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        _surrogate(*leaves, do, lse, delta, scale).backward()
        return tuple(t.grad for t in leaves)

def func(q, k, v, do, lse, delta, scale):
    g = torch.func.grad(lambda a, b, c: _surrogate(a, b, c, do, lse, delta, scale), (0, 1, 2))
    return g(q, k, v)

def worked(q, k, v, do, lse, delta, scale):
    p = torch.exp(q @ k.T * scale - lse[:, None])
    dv = p.T @ do
    dp = do @ v.T
    ds = p * (dp - delta[:, None])
    return scale * ds @ k, scale * ds.T @ q, dv
"""
    calls = {n: "tile" for n in ("library", "autograd", "backward", "func", "worked")}
    out = _ch18_refused("check_tile_backward", answers, calls)
    assert "library lib.flash.FlashAttention.backward" in out, out
    for name in ("autograd", "backward", "func"):
        assert f"{name} torch." in out, out
    assert "worked passed" in out, out


def test_a_module_wide_refusal_names_the_function_called_and_the_notes_count_it():
    """Lecturer review course46, M3: ``lib.alibi._slopes``, refused by chapter 18's "Without
    `lib.alibi`", said "it called the library's alibi_slopes"; every module-wide refusal names the
    function called (``lib.bpe._apply`` too), a table's own refusal keeps its name, and the
    instructor notes count each in the refusal's row."""
    import grade_course
    import instructor_notes

    from lib.exercises import ch10, ch18

    def said(raiser) -> str:
        with pytest.raises(RuntimeError) as refused:
            raiser()
        return str(refused.value)

    table = ch18.REFUSALS["check_alibi_slopes"]
    found = {t: r for t, _, r in grade_course._module_refusals(table, "Without `lib.alibi`")}
    private = said(found["lib.alibi._slopes"])
    assert private.startswith("it called the library's _slopes; compute the slopes yourself")
    assert "alibi_slopes" not in private
    assert said(table[0][2]).startswith("it called the library's alibi_slopes;")
    bpe = {t: r for t, _, r in grade_course._module_refusals(ch10.REFUSALS["check_replay"], "")}
    with pytest.raises(BaseException) as refused:  # chapter 10's own refusal: its checker says it
        bpe["lib.bpe._apply"]()
    assert refused.value.args == ("_apply",)
    with pytest.raises(BaseException) as refused:
        ch10.REFUSALS["check_replay"][0][2]()
    assert refused.value.args == ()  # apply_bpe itself, as its checker says
    refusal = bpe["lib.bpe._apply"]
    with pytest.raises(Exception, match=re.escape("your `replay` calls `_apply`:")):
        ch10.check_replay(lambda word, merges: refusal(word, merges))
    # the grader's verdict, as a checker reports the refusal; the notes' row of alibi_slopes
    known = instructor_notes.mistakes(ch18, "check_alibi_slopes")
    for name in ("_slopes", "alibi_slopes"):
        message = (
            "✗ ALiBi slopes: not yet right. On the case 'n = 8', slopes_for raised RuntimeError: "
            + said(found.get(f"lib.alibi.{name}", table[0][2]))
            + "."
        )
        assert f"the library's {name};" in message
        row = instructor_notes.matching(message, known)
        assert (
            row.kind == "refusal" and row.condition == "the answer calls what the exercise forbids"
        )
        assert "alibi_slopes" in row.message  # the row is the refusal of alibi_slopes
    # the checker's own static check names it too, and its row matches
    for answer, name in [
        ("import lib.alibi as A\nslopes_for = lambda n: list(A._slopes(n))\n", "_slopes"),
        ("from lib.alibi import alibi_slopes\nslopes_for = lambda n: alibi_slopes(n)\n", None),
    ]:
        space = {}
        exec(answer, space)
        with pytest.raises(Exception) as failed:
            ch18.check_alibi_slopes(space["slopes_for"])
        name = name or "alibi_slopes"
        assert f"your `slopes_for` calls lib.alibi ({name});" in str(failed.value)
        row = instructor_notes.matching(str(failed.value), known)
        assert row.condition == "_calls_lib_alibi(slopes_for)"
