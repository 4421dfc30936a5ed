/** The venv's Python, for checks that compare this runtime with the Python one. */

import { spawn } from "node:child_process";
import { repoRoot } from "./server.js";

export const python = `${repoRoot}.venv/bin/python`;

/** Run `script` (Python source, run from the repository root) with `input` on stdin; its stdout. */
export async function runPython(script: string, input = "", ...args: string[]): Promise<string> {
  const child = spawn(python, ["-c", script, ...args], { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("close", resolve); // after stdout has been read to its end, unlike "exit"
    child.once("error", reject);
  });
  child.stdin.end(input);
  const code = await exited;
  if (code !== 0) throw new Error(`python -c ... exited with ${code}`);
  return output;
}
