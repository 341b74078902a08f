"""Hard (stochastic) attention: the decoder reads ONE source state per step, chosen at random from
the attention distribution, and learns where to look by REINFORCE (Xu et al. 2015, "Show, Attend and
Tell", sec. 4.1; Williams 1992).

Shape legend as in lib/seq2seq.py: B batch, S source length, T target length, E embedding width,
H decoder hidden width, He encoder state width, A attention hidden width, V vocabulary size.

The decoder has the step interface of lib.seq2seq, so Seq2Seq, greedy_decode and beam_search work
with it unchanged; only the loss differs (``HardAttentionDecoder.loss``, which Seq2Seq.loss calls).
"""

import torch
import torch.nn.functional as F
from torch import Tensor

from lib._checks.hard_attention import check_hard_attention
from lib.attention import _masked_softmax
from lib.seq2seq import BahdanauDecoder

__all__ = ["HardAttentionDecoder"]


class HardAttentionDecoder(BahdanauDecoder):
    """Bahdanau's decoder with stochastic hard attention (Xu et al. 2015, sec. 4.1).

    alpha_t = softmax over the real source words of v_a^T tanh(W_a s_{t-1} + U_a h_j), as in
    BahdanauDecoder; then one position is chosen, z_t ~ Categorical(alpha_t) in training mode and
    z_t = argmax_j alpha_tj in eval mode, and the context is that single state: c_t = h_{z_t}.
    step returns weights = one_hot(z_t) [B, S] (what the decoder actually read), and the state
    {"h": s_t, "choice_log_prob": log alpha_t(z_t) [B], "entropy": H[alpha_t] [B]} for the loss.

    Sampling has no gradient, so the attention network cannot learn from the likelihood alone; the
    REINFORCE estimator gives it one. With the reward R = log p(y | z, x) of each sentence and a
    baseline b (the moving average b <- decay * b + (1 - decay) * mean R of Xu et al.), minimizing
        loss = (1 / N) * sum over sentences of [ -R - lambda_r (R - b) sum_t log alpha_t(z_t)
                                                  - lambda_e sum_t H[alpha_t] ]
    (N the number of non-pad target tokens, sums over non-pad steps, R - b held constant) follows
    in expectation the gradient of E_z[log p(y | z, x)] (+ lambda_e x entropy), a lower bound of
    log p(y | x). The first term is the usual cross-entropy. ``loss`` adds the other two in training
    mode only (in eval mode it is the cross-entropy) and updates the baseline buffer ``baseline``
    (NaN until the first training batch, which sets it to that batch's mean reward).
    Cost: reading one state is O(He) per step instead of O(S He), but the scores still cost O(S A).
    Deviations: Xu et al. also replace z_t by the expectation (soft attention) with probability 0.5
    during training; not done here. The reward is the sentence's log-likelihood, not normalized by
    its length. Initialization: as BahdanauDecoder (Bahdanau et al. 2015, appendix B.1).
    """

    def __init__(
        self,
        vocab_size: int,
        d_emb: int,
        d_hidden: int,
        d_enc: int,
        d_attn: int,
        reinforce_weight: float = 1.0,
        entropy_weight: float = 0.0,
        baseline_decay: float = 0.9,
    ):
        super().__init__(vocab_size, d_emb, d_hidden, d_enc, d_attn)
        check_hard_attention(reinforce_weight, entropy_weight, baseline_decay)
        self.reinforce_weight, self.entropy_weight = float(reinforce_weight), float(entropy_weight)
        self.baseline_decay = float(baseline_decay)
        self.register_buffer("baseline", torch.tensor(float("nan")))

    def _step(self, y_prev: Tensor, state: dict, enc_states: Tensor, src_mask: Tensor):
        scores = self.score(state["h"][:, None], enc_states)[:, 0]  # query s_{t-1}: [B, S]
        probs = _masked_softmax(scores, src_mask)  # alpha_t [B, S]
        log_probs = scores.masked_fill(~src_mask, float("-inf")).log_softmax(-1)  # [B, S]
        log_probs = log_probs.masked_fill(~src_mask, 0.0)  # 0 (not -inf) where alpha = 0
        if self.training:
            choice = torch.multinomial(probs.detach(), 1)[:, 0]  # z_t [B], sampled
        else:
            choice = probs.argmax(-1)  # z_t [B], the most probable
        batch = torch.arange(len(choice), device=choice.device)
        c = enc_states[batch, choice]  # [B, He], one state per sentence
        y = self.embedding(y_prev)  # [B, E]
        h = self.cell(torch.cat([y, c], dim=-1), state["h"])  # [B, H]
        logits = self.out(torch.cat([h, y, c], dim=-1))  # [B, V]
        new_state = {
            "h": h,
            "choice_log_prob": log_probs[batch, choice],  # [B]
            "entropy": -(probs * log_probs).sum(-1),
        }  # [B]
        return logits, new_state, F.one_hot(choice, src_mask.shape[1]).to(probs.dtype)  # [B, S]

    def loss(self, logits: Tensor, tgt_out: Tensor, states: list, pad_id: int) -> Tensor:
        """Cross-entropy, plus (in training mode) the REINFORCE and entropy terms of the class docstring.
        logits [B, T, V], tgt_out [B, T], states: the T states of the steps that made the logits."""
        nll = super().loss(logits, tgt_out, states, pad_id)  # mean over the N non-pad tokens
        if not self.training:
            return nll
        real = tgt_out != pad_id  # [B, T]
        picked = logits.log_softmax(-1).gather(-1, tgt_out[..., None])[..., 0]  # [B, T]
        reward = picked.masked_fill(~real, 0.0).sum(1).detach()  # R = log p(y | z, x) [B]
        choice_log_prob = torch.stack([s["choice_log_prob"] for s in states], 1)  # [B, T]
        entropy = torch.stack([s["entropy"] for s in states], 1)  # [B, T]
        with torch.no_grad():
            if torch.isnan(self.baseline):
                self.baseline.fill_(reward.mean())
            advantage = reward - self.baseline  # R - b [B]
            self.baseline.mul_(self.baseline_decay).add_((1 - self.baseline_decay) * reward.mean())
        reinforce = advantage * choice_log_prob.masked_fill(~real, 0.0).sum(1)  # [B]
        bonus = entropy.masked_fill(~real, 0.0).sum(1)  # [B]
        surrogate = (
            self.reinforce_weight * reinforce + self.entropy_weight * bonus
        ).sum() / real.sum()
        return nll - surrogate
