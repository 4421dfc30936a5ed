// Opens the web page of `pi-proto serve --http-port` in Debian's firefox-esr (puppeteer-core,
// over WebDriver BiDi, no browser download): a README round trip with its tool result typed in,
// then FILE in the viewer. Prints, as one JSON object, what the page showed.
//
//   node tests/browser/firefox.mjs BASE_URL FILE
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [base, file] = process.argv.slice(2);
const byTestId = (id) => `[data-testid="${id}"]`;
const home = await mkdtemp(path.join(os.tmpdir(), "pi-proto-firefox-"));
const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath: process.env.FIREFOX ?? "/usr/bin/firefox-esr",
  headless: true,
  env: { ...process.env, HOME: home }, // a profile of its own, left nowhere
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  await page.goto(new URL("/", base).href);
  await page.waitForFunction(
    (info) => !(document.querySelector(info)?.textContent ?? "loading").startsWith("loading"),
    {},
    byTestId("model-info"),
  );
  await page.type(byTestId("message-input"), "请读取 README，然后告诉我项目名。");
  await page.click(byTestId("send"));
  await page.waitForSelector(byTestId("stop-reason"));
  await page.type(byTestId("tool-result-input"), "# tiny-pi\nA small agent runtime.");
  await page.click(byTestId("continue"));
  await page.waitForFunction((stop) => document.querySelectorAll(stop).length === 2, {}, byTestId("stop-reason"));
  const playground = await page.evaluate((ids) => ({
    stops: [...document.querySelectorAll(ids.stop)].map((node) => node.textContent),
    toolCalls: document.querySelectorAll(ids.toolCall).length,
    eventRows: document.querySelectorAll(ids.event).length,
  }), { stop: byTestId("stop-reason"), toolCall: byTestId("tool-call"), event: byTestId("event-row") });
  await page.click(byTestId("tab-viewer"));
  const input = await page.$(byTestId("file-input"));
  await input.uploadFile(file);
  await page.waitForSelector(byTestId("viewer-message"));
  const viewer = await page.evaluate((ids) => ({
    title: document.querySelector(ids.title).textContent,
    messages: document.querySelectorAll(ids.message).length,
  }), { title: byTestId("viewer-title"), message: byTestId("viewer-message") });
  console.log(JSON.stringify({ playground, viewer, problems }));
} finally {
  await browser.close();
  await rm(home, { recursive: true, force: true });
}
