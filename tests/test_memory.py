"""lib.memory.PeakMemory counts the bytes of the tensors a block creates, at their peak."""

import torch

from lib.memory import PeakMemory


def test_peak_counts_what_is_alive_at_once():
    x = torch.ones(1000)  # before the block: not counted
    with PeakMemory() as m:
        a = torch.zeros(256)  # 1 KiB
        b = torch.zeros(512)  # 2 KiB: 3 KiB alive
        del a, b
        c = torch.zeros(128)  # 0.5 KiB
        view = c[:64]  # a view: the same storage, not counted again
    assert m.peak == (256 + 512) * 4
    assert m.now == 128 * 4 and view.shape == (64,) and x.sum() == 1000


def test_the_attention_weights_are_counted():
    q = torch.randn(256, 16)
    with PeakMemory() as m:
        w = torch.softmax(q @ q.T, -1)  # scores, then weights: [256, 256] each
        del w
    assert m.peak == 2 * 256 * 256 * 4
