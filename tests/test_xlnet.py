"""Tests of lib/xlnet.py: permutation masks (the identity order is a causal LM, the query stream never sees
its own token, the masks follow the order), segment recurrence (the vanilla model stops at its segment, the
recurrent one reaches N segments back), reachability, bad input."""

import itertools

import pytest
import torch

from lib.attention import causal_mask
from lib.xlnet import longest_dependency, permutation_masks, reachable, recurrence_mask


def test_the_identity_order_is_a_left_to_right_language_model():
    content, query = permutation_masks(range(5))
    assert torch.equal(content, causal_mask(5))
    assert torch.equal(query, causal_mask(5) & ~torch.eye(5, dtype=torch.bool))


def test_the_paper_example_order_3_2_4_1():
    """XLNet's Figure 1 (1-based positions): with the order 3 -> 2 -> 4 -> 1, token 3 sees nothing, token 2
    sees 3, token 4 sees 3 and 2, token 1 sees all the others. 0-based here: order [2, 1, 3, 0]."""
    content, query = permutation_masks([2, 1, 3, 0])
    sees = {i: set(query[i].nonzero().flatten().tolist()) for i in range(4)}
    assert sees == {2: set(), 1: {2}, 3: {2, 1}, 0: {2, 1, 3}}
    assert torch.equal(content, query | torch.eye(4, dtype=torch.bool))


def test_masks_of_every_order_of_four_tokens():
    for order in itertools.permutations(range(4)):
        content, query = permutation_masks(list(order))
        assert not query.diagonal().any() and content.diagonal().all()
        assert query.sum() == 6 and content.sum() == 10  # T(T-1)/2 pairs, plus the diagonal
        assert not (query & query.T).any()  # never both ways: an order
        assert query[order[0]].sum() == 0 and query[order[-1]].sum() == 3
        for a, b in zip(order, order[1:]):
            assert query[b, a] and not query[a, b]


def test_a_tensor_order_is_accepted():
    c1, q1 = permutation_masks(torch.tensor([1, 0, 2]))
    c2, q2 = permutation_masks([1, 0, 2])
    assert torch.equal(c1, c2) and torch.equal(q1, q2)


def test_recurrence_mask_without_memory_is_block_causal():
    vanilla = recurrence_mask(8, 4, memory_length=0)
    block = torch.block_diag(causal_mask(4), causal_mask(4))
    assert torch.equal(vanilla, block)


def test_recurrence_mask_with_memory_sees_the_previous_segment():
    m = recurrence_mask(12, 4)
    assert m[4].tolist() == [True] * 5 + [False] * 7  # first of segment 2: segment 1 and itself
    assert m[11].tolist() == [False] * 4 + [True] * 8  # last of segment 3: segments 2 and 3
    assert torch.equal(m & ~causal_mask(12), torch.zeros(12, 12, dtype=torch.bool))


@pytest.mark.parametrize("n_layers", [1, 2, 3, 4])
def test_the_longest_dependency_grows_by_a_segment_per_layer(n_layers):
    L = 4
    mask = recurrence_mask(6 * L, L)
    # O(N x L), Dai et al. sec. 3.2
    assert longest_dependency(mask, n_layers) == (n_layers + 1) * L - 1
    assert longest_dependency(recurrence_mask(6 * L, L, memory_length=0), n_layers) == L - 1


def test_reachable_is_the_transitive_closure_of_the_mask():
    mask = recurrence_mask(10, 2)
    assert torch.equal(reachable(mask, 0), torch.eye(10, dtype=torch.bool))
    assert torch.equal(reachable(mask, 1), mask | torch.eye(10, dtype=torch.bool))
    two = reachable(mask, 2)
    brute = torch.zeros(10, 10, dtype=torch.bool)
    for i, k, j in itertools.product(range(10), repeat=3):
        if mask[i, k] and mask[k, j]:
            brute[i, j] = True
    assert torch.equal(two, brute)
    full = reachable(causal_mask(7), 1)
    assert torch.equal(full, causal_mask(7))  # one layer of full causal attention: all


def test_bad_input():
    with pytest.raises(
        ValueError, match=r"order: expected a permutation of 0..T-1, got \[0, 0, 1\]"
    ):
        permutation_masks([0, 0, 1])
    with pytest.raises(ValueError, match="order: expected a permutation of 0..T-1, got \\[1, 2\\]"):
        permutation_masks([1, 2])
    with pytest.raises(TypeError, match="order: expected a sequence of positions"):
        permutation_masks(3)
    with pytest.raises(ValueError, match="order: expected a 1-D tensor of positions"):
        permutation_masks(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="segment_length: expected an int >= 1, got 0"):
        recurrence_mask(8, 0)
    with pytest.raises(ValueError, match="memory_length: expected an int >= 0, got -1"):
        recurrence_mask(8, 4, memory_length=-1)
    with pytest.raises(ValueError, match=r"mask: expected a square bool tensor \[T, T\]"):
        reachable(torch.ones(3, 4, dtype=torch.bool), 1)
    with pytest.raises(ValueError, match="n_layers: expected an int >= 0, got -1"):
        reachable(causal_mask(3), -1)
