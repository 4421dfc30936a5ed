// typescript/README.md shows the code of the README example test, line for line.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { TEST_TIMEOUT } from "./support/messages.js";

test("the README's streaming example is the code the client test runs", { timeout: TEST_TIMEOUT }, async () => {
  const source = await readFile(new URL("client.test.ts", import.meta.url), "utf8");
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
  const region = /\n( *)\/\/ README example: begin\n([\s\S]*?)\n *\/\/ README example: end\n/.exec(source);
  assert.ok(region, "client.test.ts marks the README example");
  const indent = region[1]!;
  const example = region[2]!
    .split("\n")
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join("\n");
  assert.ok(example.includes("streamModel("));
  assert.ok(readme.includes(`\n${example}\n`), `README.md must show:\n${example}`);
});
