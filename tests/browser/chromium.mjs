// Debian's chromium for the browser tests, driven by playwright-core (which downloads no browser).
// The tests start it once, `node chromium.mjs` printing the endpoint of a browser server and
// closing it when its stdin ends; each script then connects to CHROMIUM_ENDPOINT instead of
// starting a browser of its own. Without it, a script starts one.
import { chromium } from "playwright-core";

const LAUNCH = {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // What a machine without a network needs: no background connections, no QUIC.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
};

/** The shared browser when the tests started one, else a browser of this script's own. */
export async function openChromium() {
  const endpoint = process.env.CHROMIUM_ENDPOINT;
  return endpoint ? await chromium.connect(endpoint) : await chromium.launch(LAUNCH);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await chromium.launchServer(LAUNCH);
  console.log(server.wsEndpoint());
  process.stdin.resume();
  process.stdin.on("end", () => server.close());
}
