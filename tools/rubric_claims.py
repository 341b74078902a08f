"""The claims a written answer's rubric requires, where sharing words with the question picks the
wrong ones (lecturer review s16, S3): read by tools/make_course.py's ``rubric``.

REQUIRED[chapter][exercise] lists, per part of the exercise (the questions ``make_course.parts``
finds, in order), the claims that answer that part's question, each given by the opening words of
its sentence in the chapter's model answer; a tuple of openings makes one claim of consecutive
sentences (a claim and the reason that follows it, "... But every token goes through ..."). The
first claim of a part is the one that earns its point (the rubric marks it "The point"); the others
are what a full answer may add ("May add"; lecturer review s21, M2). Every other sentence of the
model answer is context, not needed for the point. An opening that the model
answer no longer holds stops ``make course`` with the chapter and the opening, so that a rewritten
model answer cannot leave its rubric silently wrong.

Why a table beside the kit, not markup in the chapters: the chapters are the book the reader reads
(a marker in a model answer would show in Colab and on the page, or need re-executing the chapter
to change), and only the course's rubric needs to know which sentence grades which question. Where a
chapter has no entry, the rubric keeps the sentences that share the most words with the question,
and ``make course`` warns of a required sentence that shares none (``make_course.unrelated``).
"""

import re


class Written(str):
    """A required claim in the rubric's own words, where no sentence of the model answer states it
    as the question asks (lecturer review s17, M4: chapter 17's exercise 1 asked why the scores
    agree, and the model answer's sentence restated the result at the worked solution's positions).

    ``replaces`` names (by their openings) the model answer's sentences it restates: they are
    taken, not listed again as a claim or as context (lecturer review s29, M1: chapter 7's point
    and its "May add" were the same sentence twice)."""

    replaces: tuple[str, ...]

    def __new__(cls, text: str, replaces: str | tuple[str, ...] = ()):
        self = super().__new__(cls, text)
        self.replaces = (replaces,) if isinstance(replaces, str) else tuple(replaces)
        return self


# PARTS[chapter][exercise]: the questions of a written answer, where the statement's own sentences
# are not them (lecturer review s17, M4: chapter 12's exercise 2 graded the softmax's count, which
# its checker grades already, and not the "which part" and "which tensor" it asks to explain)
PARTS: dict[str, dict[int, list[str]]] = {
    # a part that asks for a prediction, or for a value an answer cell holds and its checker scores,
    # asks only for the reason (lecturer review s23, M2: the prediction came back as written points,
    # the checked values were scored twice)
    "01": {
        1: [
            "When the plain model gets a long sentence wrong, is the search to blame (the model"
            " prefers the reference, and greedy missed it) or the model (it prefers its own wrong"
            " output)?",
            "Then compare the two sentence by sentence: in how many sentences is the reference more"
            " probable than the greedy output?",
            "What would such a sentence say about greedy decoding?",
            "What does your count say about the plain model's errors?",
        ],
        2: ["Explain the difference from how each decoder gets its information about the source."],
    },
    "03": {
        2: [
            "Explain the limit: why do the keys you predicted keep the weight as $\\beta$ grows,"
            " and why does the weight of `k2` approach the number you predicted?"
        ],
        3: [
            "Explain from the formulas why the two score functions you named give identical weights,"
            " and why those you named do not change at all."
        ],
    },
    "04": {1: ["Explain what you find from what each decoder's query has seen."]},
    "05": {2: ["Why does the model still get *some* of the order right?", "Why not more?"]},
    "10": {
        1: [
            "Why do the pairs it ranks first differ from both the most frequent pairs (*##e ##s* and"
            " *##s ##t*, 9 times each) and the pair of the largest likelihood gain?"
        ]
    },
    "11": {
        2: [
            "Explain your two values from what the backward model has read when it scores the verb."
        ]
    },
    # the written answer is the estimate and its fraction: not the question that closes the
    # statement ("Does `count_parameters` then agree with your count?", asked for the class's slide,
    # lecturer review s38), which the checker answers
    "14": {
        2: [
            "Estimate its number of parameters first, then work out the exact count as the library's"
            " `Bert` counts them (encoder and pooler, 30,522 tokens, 512 positions, 2 segments, every"
            " bias and LayerNorm weight included; the checker wants the exact number) and the fraction"
            " of them in the embeddings, by hand before running anything; use the table of BERT-base"
            " above to check your reasoning on a layer."
        ]
    },
    # "Which parameters does lambda actually affect, and through which two mechanisms?": two
    # questions, a point each (it was one part, with three required claims)
    "16": {
        3: [
            "Which parameters does $\\lambda$ actually affect?",
            "Through which two mechanisms does it affect them?",
        ]
    },
    "12": {
        2: [
            "Which part holds most of the parameters without the softmax, and why?",
            "Which tensor of `nn.LSTM` holds parameters that the authors' LSTM cell does not have,"
            " and why is it extra?",
        ]
    },
}

REQUIRED: dict[str, dict[int, list[list]]] = {
    "01": {
        # "explain the difference from how each decoder gets its information about the source": the
        # point is both decoders, the plain one's only view (c) and the attention one's (the h_j);
        # it went to the attention decoder alone (lecturer review s29, M1: the rubrics read again)
        2: [
            [
                Written(
                    "The plain decoder's only view of the source is its summary $\\mathbf c$ (in"
                    " $\\mathbf s_0$ and at every step), so with $\\mathbf c = \\mathbf 0$ every"
                    " source looks the same to it and it writes one sentence for all; the attention"
                    " decoder reads the source through its weights over the encoder states"
                    " $\\mathbf h_j$, which are untouched, and lost only its starting state"
                    " $\\mathbf s_0$.",
                    replaces=("It writes the same sentence", "Its decoder reads the source"),
                ),
                "With the summary gone, the attention model's longest",
            ]
        ],
        # "every word harder, or some positions?": the model answer says every word after the
        # first quarter, and why the first quarter is easier
        3: [
            [
                "On the sentences of 30+ words",
                "The beginning of the sentence is still partly",
            ]
        ],
    },
    "02": {
        # "what does the hard lookup hide?": the tie itself, not argmax's tie-breaking (lecturer
        # review s29, M1: the answer to the question was only "May add")
        1: [
            [
                "What it hides is the tie itself",
                "The hard lookup returns",
                "The copy's score equals",
            ]
        ],
        # "why, in one line of algebra?": the point is the definition and the line that
        # cancels $Z^\\gamma$ together, not the definition alone (lecturer review s31, M1: the
        # curated parts read again; the line of algebra was "May add")
        2: [[("Content weights are", "So $w(i)^\\gamma"), "In general, sharpening is"]],
        3: [
            [
                "Only the dot product's accuracy changes",
                "On the same noisy keys",
                "The dot product, ",
            ],
            ["The cosine's does not change at all"],
            # not "The chapter *Scoring functions* compares the two": a pointer, not a claim;
            # "which slots ..., and why?": the why is part of the point (lecturer review s29, M1)
            [("Every wrong read returns a row", "The dot product mixes")],
        ],
    },
    "03": {
        1: [
            ["$\\mathbf W_a = \\mathbf W_Q", "The score sees a key only"],
            ["So one such head compares", "This is one way to see why"],
        ],
        # PARTS: the reason for the limit, not the predicted keys and number (0 points as
        # predictions in a graded course: lecturer review s23, M2)
        2: [["Relative to `k2`, key $i$ gets", "The key strength sharpens the weighting"]],
        # PARTS: the reasons, not the two sets `ex3_test` scores (lecturer review s23, M2); the model
        # answer is a list, one sentence to the parser, so the point is in the rubric's words
        3: [
            [
                Written(
                    "For unit vectors $\\mathbf q^\\top\\mathbf k = \\cos\\theta$, so the dot"
                    " product becomes identical to the cosine; the cosine divides by both lengths, so"
                    " making them 1 changes nothing."
                )
            ]
        ],
    },
    "04": {
        # "how does what each decoder's query has seen explain what you find?": the query each decoder
        # asks with (the point: the question's reason, lecturer review s23, S3), and what Luong's
        # table shows (the sentences on Bahdanau's query alone do not say it)
        1: [
            [
                ("Bahdanau's query", "Luong's query"),
                ("Half of the habit goes.", "For articles after another word"),
                ("But *ne* keeps the habit", "Which state asks is not the whole story"),
            ]
        ],
        2: [
            ["On this corpus local-m fits", "The reason is the corpus"],
            ["In a language pair with long-distance", "Luong et al. obtained"],
        ],
        # "when does normalisation matter?": the condition, not the plain model's lengths; "does it
        # change the attention model's output, and why?": the why is part of the point (lecturer
        # review s29, M1: both went to "May add")
        3: [
            ["Normalisation matters when", "For the plain model normalisation"],
            [("For the attention model nothing changes", "The attention model gives its best")],
        ],
    },
    "05": {
        # PARTS: the two reasons, not the predictions `suffers_most` and `mostly_wrong_order` (lecturer
        # review s23, M2): the zero padding, and what it cannot order
        2: [
            ["Some order survives because", "`conv2` and `conv3` have stride 2"],
            # "why not more?": what position alone says is the reason, the "about 80% right"
            # what it costs (lecturer review s29, M1)
            ["Position alone thus says only", "That orders two shapes well"],
        ],
        # "explain the difference from the gradients": no gradient to W_q and W_k; a score is a
        # product of two factors near zero that must grow together; the gradient's size and
        # direction are not the trouble under AdamW (reader s37, M1; reader s41: the earlier "no
        # consistent direction" was measured wrong, v_a's gradients agree across batches)
        1: [
            [
                "With $\\mathbf v_a = 0$ every score is 0",
                ("The trouble is size", "A score is a product"),
                ("Neither its size nor its direction is the trouble", "`fit` trains with"),
            ]
        ],
    },
    "06": {
        # "which term of H makes the difference?": the term Z, not the ratios the check prints
        # (lecturer review s29, M1)
        1: [
            [
                "The difference comes from the term",
                "In the sentence ending in",
                "The term $X$ keeps",
            ]
        ],
        # "what could keep the entries at a known size?": a normalization of x, not of q and k
        2: [
            [
                "In a Transformer that normalizes first",
                "The queries and keys",
                "Since the normalization acts on",
            ]
        ],
    },
    "07": {
        # part 1 "which digit?", part 2 "why not both?": the parameter count and "it does not learn
        # the task" answer neither
        # part 1's point is the digit and the head's weight that explains it; the loss and its ln 5
        # are what a full answer may add (lecturer review s23, M3: one bullet of five numbers)
        1: [
            [
                # it restates "After 300 steps ...", whose loss is what a full answer may add
                # (lecturer review s29, M1: the point and its "May add" were the same sentence)
                Written(
                    "The previous digit, right everywhere: the single head puts 0.999 of its weight"
                    " on the previous token, and the matching digit is right only by chance (0.20).",
                    replaces="After 300 steps its single head",
                ),
                Written(
                    "The loss settles where guessing the matching digit leaves it: $\\ln 5$ at the"
                    " 65% of positions where the partner is another token, about 1.04."
                ),
            ],
            [
                "One softmax gives each query one distribution",
                ("That is not impossible", "But training"),
            ],
        ],
    },
    "08": {
        # "how do the clocks of the binary table explain the result?": the point is the explanation (a
        # position is the whole code; two share it only if every clock agrees), the measured
        # distances what may support it (course review s27, M4: the point went to the numbers)
        2: [["It is the binary table again", "But an exact repeat is not the question"]],
        3: [["For the paper's table a matrix", "In the literal reading", "Offsets are a fixed"]],
    },
    "09": {
        # part 1, "which makes post-LN fail?": both together, and the runs that show each alone trains;
        # part 2, "explain with the gradient norms": the gradients' sizes across the layers
        # (post-LN's last layers several times larger, pre-LN's alike) with Adam's full-size first
        # steps; "So here post-LN trains with a warm-up ..." restates the result (lecturer review
        # s31, M1: it was the point, and the gradient norms were "May add")
        2: [
            [
                ("Only both changes together make post-LN fail", "Each alone still trains"),
                "With no warm-up *and* the larger rate",
            ],
            [
                (
                    "{cite:t}`xiong2020layer` show the cause",
                    "Add what Adam does",
                    "Pre-LN gives every layer gradients",
                ),
                "Without a warm-up, steps of 1.5e-2",
                "Each change alone keeps those first steps smaller",
            ],
        ],
    },
    "10": {
        # PARTS: "why do the pairs it ranks first differ ...?": the reason, not the predicted pairs
        # (lecturer review s23, M2): they occur only together
        1: [
            ["The score ranks *w ##i*", "The other most frequent pair", "The likelihood gain grows"]
        ],
        # part 1 "why do the two agree?", part 2 "which one does less work?"; part 1's point is the
        # argument (given the property, a merge never creates a pair ranked before it), not the
        # restated premise "the learned merges come with their order" (lecturer review s22, S1)
        2: [
            [
                "Given the property, the symbol merge",
                "So the ranks `apply_bpe` merges",
                "They agree because the learned merges",
            ],
            ["The work differs", "With the ranks built once"],
        ],
    },
    "12": {
        # "which direction finds money more surprising, and why?": the why is each direction's
        # context, part of the point (lecturer review s29, M1: both reasons were "May add")
        1: [
            [
                (
                    "The backward LM finds *money* far more surprising",
                    "The forward LM has read",
                    "The backward LM predicts *money* from",
                    "`<eos>`",
                ),
                "Each direction is surprised by",
            ]
        ],
        # PARTS: "which part is largest, and why?" (what each LSTM holds), "which tensor is extra, and
        # why?" (torch's two bias vectors are added); the softmax's count is the checker's
        2: [
            [("The LSTMs: 75.6M", "Each of the four")],
            ["The library's total is 66,352 above"],
        ],
        # "relate the result to the nearest neighbours": the point is the relation (the section's
        # result seen through a probe); the measured 40.8% and the split are what a full answer may
        # add (lecturer review s21, M2)
        4: [
            ["This is the result of the section", "On phrases it never saw", "The split leaves 21"]
        ],
        # "explain the difference" between the neighbours of the two models, before and after training
        # the point: the character model's vector comes from the spelling (lecturer review s21, M2)
        3: [
            [
                "The character model computes a word's vector",
                "The word model's token vectors started random",
                "After 125 steps the vectors have spread out",
            ]
        ],
    },
    "11": {
        # PARTS: "explain your two values from what the backward model has read": the reason, not
        # the predicted values (lecturer review s23, M2)
        2: [
            [
                "When the backward model scores the verb",
                "This small backward model has not learned",
                "It gives *is* 0.25",
            ]
        ],
        # "does the skip-gram start help?": no (the point), and the numbers that show it
        3: [
            ["It does not help.", "Averaged over five draws", "River words and money words"],
            [
                "The corpus builds every bank sentence",
                "The neighbours of the cue words",
                "Those of *ducks*",
            ],
        ],
    },
    "13": {
        # "what does that say about choosing one k for every step?": no single k serves both steps
        # (lecturer review s22, S1), not that top-k with the nucleus's size keeps the same tokens
        1: [
            ["No single $k$ serves both steps", "The right number of", "Sorted in decreasing order"]
        ],
        # "how does the embeddings' share compare, and why?" (not how close the estimate is)
        2: [["The embeddings are 0.37% of GPT-3", "A block holds about"]],
        3: [
            # "explain the result with the causal mask": the mask's reason, not the measured 47.8%
            # (lecturer review s22, S1)
            ["Under the causal mask", "The classifier receives one", "Chance, or a little below"],
            ["BERT's `[CLS]` comes first too", "Pretraining also gave it", "In a decoder the only"],
        ],
    },
    "14": {
        # "explain what the measurements say": chance comes from the head's training, and the gap left.
        # The point is that finding with the probes that show it, not the frozen head's 48.1%, which
        # the misconception ("chance, so [CLS] holds nothing") quotes too (lecturer review s39, m6)
        3: [
            [
                ("Longer training alone", "So the information is there"),
                "Measured: with the body frozen",
                "What remains is the gap",
            ]
        ],
    },
    "15": {
        # "which of the two separates the pairs better?": the point is the sentence that says the mean
        # separates far better, and why (every pair gets a high cosine from the pooled output); the
        # mean's two cosines alone do not answer it (lecturer review s23, S3)
        2: [
            [
                "The pooled `[CLS]` output ranks the pairs",
                "With the mean of the tokens",
                ("That is what the contrastive fine-tuning shaped", "It pulled the *means*"),
            ]
        ],
        3: [
            # "where does the weight of the 33 heads go?": the first token, and the heads' weight on it
            [("It goes to the first token", "The 33 heads that gave"), "All 33 stay above"],
            ["A head with nothing useful", "If it puts it on a token", "Since the heads now pick"],
        ],
    },
    "16": {
        # "say which of ALBERT-xlarge and BERT-base is faster": the claim and its reason ("But every token ...")
        2: [
            [
                ("BERT-base is the faster model", "But every token goes through"),
            ]
        ],
        # "which parameters does lambda affect?" (the shared embeddings, not either network's own),
        # "through which two mechanisms?" (two parts, lecturer review s17, M4)
        # lecturer review s21, M1: "which parameters?" is answered by the shared embeddings (and
        # each network's own weights unaffected under AdamW); the gradients' sum there and the
        # clipping are the mechanisms of the second question
        3: [
            [
                Written(
                    "The parameters $\\lambda$ affects are the shared embeddings, the only ones both"
                    " losses reach: the two gradients add there."
                ),
                "The discriminator's own weights receive gradient",
            ],
            # "which two mechanisms?": the point needs both (lecturer review s29, M1: it named one)
            [
                Written(
                    "Both mechanisms, each needed for the point (one alone earns half): the shared"
                    " embeddings, where the two gradients add, so $\\lambda$ decides which network"
                    " shapes them; and global gradient clipping, since `fit` rescales the whole"
                    " gradient to norm 1 and $\\lambda$ sets the total norm it clips (37.39 at"
                    " $\\lambda = 50$ against 3.22 at $\\lambda = 1$).",
                    replaces=(
                        "$\\lambda$ matters in two places only",
                        "**The shared embeddings**",
                        "**Global gradient clipping**",
                    ),
                ),
                "At $\\lambda = 50$ every step of the run was clipped",
            ],
        ],
    },
    "17": {
        # "why do the two scores agree?": the reason, at any (m, n) the student chose (lecturer review
        # s17, M4: the model answer's sentence restates the result at the worked solution's positions)
        1: [
            [
                Written(
                    "The two scores agree because RoPE turns the query at position $m$ by $R_m$ and"
                    " the key at $n$ by $R_n$, and the score $(R_m q)^\\top (R_n k) = q^\\top"
                    " R_m^\\top R_n k = q^\\top R_{n-m} k$, with $R_{n-m} = R_{m-n}^\\top$, depends on"
                    " the offset $m - n$ only, the same for both pairs of positions."
                )
            ]
        ],
        # "what goes wrong if the heads are tiled?" (not an expansion along dimension 2): the
        # point is the tiled order and its wrong keys, the right method what a full answer may add
        # (lecturer review s31, M1: the two were the other way round)
        2: [
            [
                "`k.repeat(1, G, 1, 1)` has the same shape and tiles instead",
                "`k.repeat_interleave(n_heads // Hkv, dim=1)` repeats each key head",
            ]
        ],
        # "which two mistakes?" (not what RMSNorm and SwiGLU compute)
        3: [["The two mistakes that look most like the right answer"]],
        # "why only W - 1 positions, when the stack reaches 32,768?": the why (each layer keeps
        # what its next query sees), not the arithmetic of the prediction `smallest_window`
        # (lecturer review s31, M1: the point was W = 1,025)
        4: [
            [
                "The 32,768 positions that information can travel",
                "A window of $W$ positions includes the token itself",
            ]
        ],
    },
    "18": {
        # each part asks a question (lecturer review s22, S1: they were "print it" instructions)
        # "why does the first block need no special case?": its factor e^{-inf} = 0
        # (not "Start from m = -inf and l = 0": the question's premise; lecturer review s24, M6)
        1: [["The first block needs no special case"]],
        # "why would the power-of-two formula applied to 12 be wrong for a trained model?"
        2: [["The slopes are part of what a checkpoint learned", "The formula applied to 12"]],
        # "why is the tile's own lower triangle wrong for this tile?"
        3: [["The tile's own lower triangle", "Compare positions, not places"]],
        # "why must delta be dO_i . o_i, not the tile's own sum of P dP?" (lecturer review s22, M11)
        # the point without "the demo shows it differ from delta on the first tile": the worked
        # solution's printout, which no student sees (lecturer review s24, M6)
        4: [
            [
                Written(
                    "The sum $\\delta_i = \\sum_j P_{ij}\\, dP_{ij}$ runs over all the keys of row $i$,"
                    " and a tile sees only $B_k$ of them: its own sum is a part of $\\delta_i$,"
                    " different in each tile. The forward's $o_i = \\sum_j P_{ij} v_j$ has already"
                    " summed over every key, so $dO_i \\cdot o_i$ gives the whole row's sum from two"
                    " vectors the backward has anyway, once per row, before the loop over the tiles."
                ),
                "The same holds for the weights",
            ]
        ],
    },
}

# OWN_RUN[chapter][exercise]: an experiment that no checker grades (its code cell is worth 0) and whose
# written answer's claims quote the book's measured numbers, which a student can copy from the public
# book without running anything (lecturer review s21, M3): the rubric tells the marker what the run
# prints, to look for the student's own numbers in the code cell's output. Every exercise whose code
# no checker grades and that has a written answer is here (lecturer review s32, M2: chapter 14's
# exercise 3 was not; tests/test_course_rubrics.py finds them all), and tools/grade_course.py flags a
# written answer that quotes these numbers when its code cell printed no number.
OWN_RUN: dict[str, dict[int, str]] = {
    "01": {
        2: "the BLEU of each length group with the summary replaced by zeros (0.0 for the plain"
        " model, 36.7 to 44.2 for the attention model; 92.0 to 97.9 with the mean summary) and"
        " the exact-match rates"
    },
    "02": {
        3: "the accuracies on the scaled rows (0.999 for the cosine, as before; 0.94 falling to 0.41"
        " for the dot product) and the lengths of the rows that the wrong reads return"
    },
    "04": {
        3: "the mean output length and the exact-match rate at each $\\lambda$ (20.18, 20.36 and"
        " 21.90 words for the plain model, 10% to 14% exact; 20.44 words and 94% for the attention"
        " model at every $\\lambda$)"
    },
    "05": {
        1: "the gradients at the first step (exactly 0 for $\\mathbf W_q$ and $\\mathbf W_k$,"
        " $2.3\\cdot10^{-5}$ for $\\mathbf v_a$) and the accuracies after 400 steps, whose"
        " size differs from one processor to another"
    },
    "07": {
        3: "the accuracy without each pair of heads (27% without heads 1 and 2, 29% without 0 and 3,"
        " 98% without 1 and 3, a little under half without 0 and 2)"
    },
    "08": {
        3: "the relative residuals of each fit on positions 0 to 199 and 1000 to 1199 (about"
        " $10^{-15}$ and $10^{-6}$ for the paper's table, 0.09 with the float32 table; about a"
        " quarter, and off by about $10^8$, for the literal reading)"
    },
    "09": {
        2: "the loss and the token accuracy of each run after 100 steps (about 3 and 30% without a"
        " warm-up or at three times the rate, near 4.0 and 9.6% with both, 2.4 and 30% for"
        " pre-LN)"
    },
    "11": {
        3: "the accuracies averaged over the draws (61%, 65% and 77% from the random start, 58%, 68%"
        " and 76% from skip-gram) and the cue words' neighbours"
    },
    "12": {
        3: "the mean cosine of two different words (0.02 in the word model; 0.87 and 0.53 in the"
        " character model, before and after training), the nearest words of *players* and *play*,"
        " and the training losses (about 4.4 and 2.26 nats per token)"
    },
    "14": {
        3: "the test accuracy with the body frozen (48.1%, against more than three quarters fully"
        " fine-tuned) and the probes' (near chance at first; a little over 60% with longer"
        " training, a little under standardized, about two thirds both)"
    },
    "15": {
        3: "the weight the 33 heads give the first token (0.70 on average: 0.69 when it is *the*,"
        " 0.72 otherwise), the 42 heads over one half, and the previous- and next-token heads'"
        " weights (0.90 and 0.55)"
    },
    "16": {
        3: "the norms of the gradients that $\\mathcal{L}_{\\text{MLM}}$ and $\\lambda"
        " \\mathcal{L}_{\\text{Disc}}$ send into the shared word embeddings (1.832; 0.311 at"
        " $\\lambda = 1$, 15.53 at $\\lambda = 50$) and the total gradient norm that `fit` clips (3.22"
        " and 37.39)"
    },
}


# Parts whose point answers the question in other words than its key words (read, lecturer review
# s23, S3): (chapter, exercise, part) -> why the point answers it.
KEY_WORDS_READ: dict[tuple[str, int, int], str] = {
    ("02", 2, 1): "'why, in one line of algebra?': the point is the line of algebra",
    ("10", 2, 1): "'why do the two agree?': the point is the argument (a merge never creates a pair"
    " ranked before it), lecturer review s22, S1",
    (
        "13",
        3,
        2,
    ): "'why does reading the first position work there?': BERT's attention is not masked",
    ("14", 3, 1): "'what do the measurements say?': the point is what they say (the information is"
    " there; chance comes from the head's training), with the probes' numbers, lecturer review s39, m6",
}

# Parts whose point answers the question's focus (:func:`focus`) in other words (read, lecturer
# review s31, M1): (chapter, exercise, part) -> why the point answers it.
FOCUS_READ: dict[tuple[str, int, int], str] = {
    ("15", 3, 2): "'with the idea of a no-op head': the point states the idea (a head with nothing"
    " to add still puts its weight somewhere); its name is in what a full answer may add",
    ("18", 2, 1): "'although its 12 slopes, like the released ones, span steep to flat': the point"
    " says why that does not help (the slopes are part of what a checkpoint learned), whatever their"
    " number",
}

# The words of a question that say what it asks, not how (lecturer review s23, S3): besides the
# make_course.STOP words, those of orders and of questions' frames.
FRAME = set(
    "same again then also still would could should show tell give look find compute check print"
    " explain relate estimate express predict measure write answer number numbers value values"
    " happen happens result results difference".split()
)


def key_words(question: str) -> set[str]:
    """The stems (five letters) of a question's key words: those of the clause that asks it (after
    the last colon or semicolon outside math and code: "Do the same with ...: which of the two
    separates the pairs better?" asks "which of the two separates the pairs better?"), without the
    frame's words ("which", "explain", "result")."""
    import make_course  # tools/ is on the path wherever this table is read

    plain = re.sub(r"\$[^$]*\$|`[^`]*`", lambda m: "x" * len(m.group()), question)
    cut = max(plain.rfind(": "), plain.rfind("; "))
    asked = question[cut + 2 :] if cut >= 0 and cut < len(question) - 12 else question
    return {_stem(w) for w in make_course._words(asked) if w not in FRAME}


def _stem(word: str) -> str:  # "step" and "steps", "agree" and "agrees" alike
    return word.removesuffix("s")[:5]


def misses_key_words(question: str, point: str) -> bool:
    """Whether a part's point shares none of its question's key words (:func:`key_words`): the
    point quotes numbers next to the question without answering it (lecturer review s23, S3: "which
    of the two separates the pairs better?" had the mean's two cosines as its point, not "the mean
    separates far better"). make_course's warning (``unrelated``) fires only when no word at all
    of the question is shared."""
    key = key_words(question)
    return bool(key) and not key & {_stem(w) for w in __import__("make_course")._words(point)}


# "explain ... with the gradient norms of the section ...": what to explain it with, before "of"
EXPLAIN_WITH = re.compile(r"\bexplain\b[^.?]*?\bwith (?:the |an? )?(.+?)(?: of | on |[.?]|$)", re.I)
# "..., when the stack reaches 32,768?": the fact the answer has to square with the question's
CONTRAST = re.compile(r",\s*(?:when|although|though)\b([^?]*)", re.I)


def focus(question: str) -> tuple[set[str], set[str]]:
    """What a part's point must hold beyond any key word (lecturer review s31, M1: three points
    shared the question's subject, "post-LN", "heads", "reaches", and missed what it asks): (the
    stems of which it must share one, the numbers it must quote one of). "What goes wrong ...?"
    asks for "wrong"; "explain ... with the X of ..." for X; "..., when (although) ... 32,768?"
    for the number the answer has to square with."""
    import make_course  # tools/ is on the path wherever this table is read

    stems: set[str] = set()
    if re.match(r"what goes wrong\b", question, re.I):
        stems.add("wrong")
    if m := EXPLAIN_WITH.search(question):
        stems |= {_stem(w) for w in make_course._words(m.group(1))}
    plain = re.sub(r"\$[^$]*\$|`[^`]*`", " ", question)
    numbers = {n for m in CONTRAST.finditer(plain) for n in re.findall(r"\d[\d,]*\d", m.group(1))}
    return stems, numbers


def misses_focus(question: str, point: str) -> bool:
    """Whether a part's point misses its question's :func:`focus`: it shares none of the focus's
    stems, or quotes none of its numbers (chapter 17's "when the stack reaches 32,768?" with the
    arithmetic of W = 1,025 as its point)."""
    import make_course

    stems, numbers = focus(question)
    said = {_stem(w) for w in make_course._words(point)}
    return bool(stems and not stems & said) or bool(
        numbers and not any(n in point for n in numbers)
    )
