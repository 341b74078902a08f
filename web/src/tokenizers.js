// Tokenizers of the live figures, equal to the library's (tests/test_live_tokenizers.py runs this file
// under node on 1,000+ sentences and compares with lib.bpe, lib.wordpiece and lib.data).
//
// WordPiece: BERT's basic tokenizer, then greedy longest-match-first (lib.basic_tokenizer.basic_tokenize
// and wordpiece): drop NUL, U+FFFD and control characters; every whitespace becomes a space; spaces
// around CJK ideographs; NFC; split on whitespace; lower-case; strip accents (NFD, drop combining
// marks); split off every punctuation character (all ASCII symbols count); then pieces, [UNK] for a
// word over 100 characters or one the vocabulary cannot cover. Special tokens written in the text
// ("[MASK]") stay whole. Unicode categories come from the browser's tables and Python's from its
// own: for characters newer than Python 3.11's Unicode 14 the two may differ.

const SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const CJK = [[0x4e00, 0x9fff], [0x3400, 0x4dbf], [0x20000, 0x2a6df], [0x2a700, 0x2b73f],
  [0x2b740, 0x2b81f], [0x2b820, 0x2ceaf], [0xf900, 0xfaff], [0x2f800, 0x2fa1f]];
const CONTROL = /^\p{C}$/u;
const SPACE = /^\p{Zs}$/u;
const PUNCT = /^\p{P}$/u;
const MARK = /\p{Mn}/gu;

function isCjk(cp) {
  return CJK.some(([lo, hi]) => lo <= cp && cp <= hi);
}

function isPunctuation(ch) {
  const cp = ch.codePointAt(0);
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) return true;
  return PUNCT.test(ch);
}

export function basicTokenize(text) {
  let cleaned = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || SPACE.test(ch)) cleaned += " ";
    else if (cp === 0 || cp === 0xfffd || CONTROL.test(ch)) continue;
    else if (isCjk(cp)) cleaned += " " + ch + " ";
    else cleaned += ch;
  }
  const out = [];
  // Python's str.split() also splits on U+2028 and U+2029, as JavaScript's \s does.
  for (let word of cleaned.normalize("NFC").split(/\s+/u)) {
    if (!word) continue;
    word = word.toLowerCase().normalize("NFD").replace(MARK, "");
    let piece = "";
    for (const ch of word) {
      if (isPunctuation(ch)) {
        if (piece) out.push(piece);
        out.push(ch);
        piece = "";
      } else piece += ch;
    }
    if (piece) out.push(piece);
  }
  return out.filter((w) => w.trim() !== "");
}

export class WordPiece {
  // vocabText: vocab.txt (one token per line; a token's id is its line number)
  constructor(vocabText, maxInputCharsPerWord = 100) {
    const lines = vocabText.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    this.vocab = new Map();
    lines.forEach((t, i) => { if (!this.vocab.has(t)) this.vocab.set(t, i); });
    this.itos = lines;
    this.maxChars = maxInputCharsPerWord;
    this.unkId = this.vocab.get("[UNK]");
  }

  wordpiece(word) {
    const chars = Array.from(word);
    if (chars.length > this.maxChars) return ["[UNK]"];
    const pieces = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found = null;
      for (; end > start; end--) {
        const piece = (start === 0 ? "" : "##") + chars.slice(start, end).join("");
        if (this.vocab.has(piece)) { found = piece; break; }
      }
      if (found === null) return ["[UNK]"];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  tokenize(text) {
    const out = [];
    const parts = text.split(/(\[PAD\]|\[UNK\]|\[CLS\]|\[SEP\]|\[MASK\])/);
    for (const part of parts) {
      if (SPECIALS.includes(part)) { out.push(part); continue; }
      for (const word of basicTokenize(part)) out.push(...this.wordpiece(word));
    }
    return out;
  }

  // [CLS] tokens [SEP], cut to maxTokens in all (as lib's encode(text, max_length=maxTokens))
  encode(text, maxTokens = 512) {
    let pieces = this.tokenize(text);
    const truncated = pieces.length + 2 > maxTokens;
    if (truncated) pieces = pieces.slice(0, maxTokens - 2);
    const tokens = ["[CLS]", ...pieces, "[SEP]"];
    const ids = tokens.map((t) => (this.vocab.has(t) ? this.vocab.get(t) : this.unkId));
    return { tokens, ids, truncated, nWordPieces: this.tokenize(text).length + 2,
      unknown: pieces.filter((t) => t === "[UNK]").length };
  }
}

// The word vocabularies of the generated corpora (lib.data): lower-case, split on whitespace.
export class WordVocab {
  constructor(tokens, unkId, eosId = null) {
    this.itos = tokens;
    this.eosId = eosId;
    this.stoi = new Map(tokens.map((t, i) => [t, i]));
    this.unkId = unkId;
  }

  encode(text) {
    const tokens = text.toLowerCase().split(/\s+/u).filter((w) => w);
    const ids = tokens.map((t) => (this.stoi.has(t) ? this.stoi.get(t) : this.unkId));
    return { tokens, ids, unknown: tokens.filter((t) => !this.stoi.has(t)) };
  }

  decode(ids) {
    return ids.map((i) => this.itos[i]);
  }
}
