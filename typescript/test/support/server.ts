/** Python's `pi-proto serve`, run as a child process for the client tests. */

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const piProto = `${repoRoot}.venv/bin/pi-proto`;

export interface Server {
  /** host:port, as printed by `pi-proto serve`. */
  target: string;
  process: ChildProcess;
  /** Send `signal` (unless the server has exited) and wait for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Start `pi-proto serve --port 0 ...args` and wait for its `listening on HOST:PORT` line. */
export async function startServer(...args: string[]): Promise<Server> {
  const child = spawn(piProto, ["serve", "--port", "0", ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
  });
  // A test file that ends early must not leave its servers running.
  const orphan = (): void => void child.kill("SIGKILL");
  process.once("exit", orphan);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      process.off("exit", orphan);
      resolve();
    }),
  );
  const stop = async (signal: NodeJS.Signals = "SIGTERM"): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const lines = createInterface({ input: child.stdout! });
  const line = await new Promise<string | undefined>((resolve, reject) => {
    lines.once("line", resolve);
    lines.once("close", () => resolve(undefined));
    child.once("error", reject);
  });
  lines.close();
  const match = /^listening on (\S+)$/.exec(line ?? "");
  if (match === null) {
    await stop("SIGKILL");
    throw new Error(`pi-proto serve printed ${JSON.stringify(line)} instead of "listening on HOST:PORT"`);
  }
  return { target: match[1]!, process: child, stop };
}

/** Run `pi-proto ...args` to completion and return its standard output. */
export async function runPiProto(...args: string[]): Promise<string> {
  const child = spawn(piProto, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("exit", resolve);
    child.once("error", reject);
  });
  if (code !== 0) throw new Error(`pi-proto ${args.join(" ")} exited with ${code}`);
  return output;
}
