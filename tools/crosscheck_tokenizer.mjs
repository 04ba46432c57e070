#!/usr/bin/env node
// Cross-check `mygpt encode` against npm's tiktoken on random texts that are in no
// test: ASCII prose, whitespace runs, digits, punctuation, letters of many scripts,
// emoji and <|endoftext|>. Development only (npm install --prefix tools/node first).
//   node tools/crosscheck_tokenizer.mjs [TRIALS] [build/cli/mygpt]
import { createRequire } from "module";
import { execFileSync } from "child_process";
import { dirname, join } from "path";
import { fileURLToPath } from "url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "node", "package.json"));
const { get_encoding } = require("tiktoken");
const enc = get_encoding("gpt2");
const trials = Number(process.argv[2] || 500);
const exe = process.argv[3] || join(here, "..", "build", "cli", "mygpt");

let seed = 20261121;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (a) => a[Math.floor(rand() * a.length)];
const words = ["'s", "'ll", "the", "The", "GPT", "tokenizer", "don't", "I'LL", "we've", "it's", "Jack's",
  "1908", "3.5", "42", "--", "...", "!", "?", ",", "(x)", "\"q\"", "naïve", "Ωmega", "мир",
  "世界", "東京", "🙂", "👨‍👩‍👧", "<|endoftext|>", "é", "ß", "ﬁ", "x\u0301", "١٢٣", "\u200b"];
const spaces = [" ", " ", " ", "  ", "\n", "\n\n", "\t", " \n ", "   ", "\r\n", "\u00a0", ""];
const randomChar = () => {
  const ranges = [[0x20, 0x7e], [0xa0, 0x24f], [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x6ff],
                  [0x900, 0x97f], [0x3040, 0x30ff], [0x4e00, 0x4fff], [0xac00, 0xad00],
                  [0x1f300, 0x1f64f], [0x2000, 0x206f], [0x10000, 0x323af]];
  const [a, b] = pick(ranges);
  return String.fromCodePoint(a + Math.floor(rand() * (b - a)));  // the last: scripts of every Unicode
};

let ok = 0, bad = 0, ascii = 0;
for (let t = 0; t < trials; t++) {
  let text = "";
  const n = 1 + Math.floor(rand() * 40);
  const onlyAscii = rand() < 0.4;
  for (let i = 0; i < n; i++) {
    if (onlyAscii) text += pick(["hello", "World", "it's", "DON'T", "12", "3.14", "--", "!?", "(a)", "x"]) + pick([" ", "  ", "\n", "\t", ""]);
    else text += (rand() < 0.7 ? pick(words) : Array.from({ length: 1 + Math.floor(rand() * 5) }, randomChar).join("")) + pick(spaces);
  }
  if (onlyAscii) ascii++;
  const want = Array.from(enc.encode(text, "all")).join(" ");
  const got = execFileSync(exe, ["encode"], { input: Buffer.from(text, "utf8") }).toString().trim();
  if (got === want) ok++;
  else {
    bad++;
    if (bad <= 5) console.log("MISMATCH", JSON.stringify(text), "\n  tiktoken:", want, "\n  mygpt:   ", got);
  }
}
enc.free();
console.log(`${ok} agreed, ${bad} differed (${ascii} ASCII-only texts, ${trials - ascii} with Unicode)`);
process.exit(bad ? 1 : 0);
