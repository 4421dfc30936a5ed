// Drives the web page of `pi-proto serve --http-port` (the playground, its events panel and the
// transcript viewer) in Debian's chromium, and prints, as one JSON object, what the page showed.
//
//   node tests/browser/ui.mjs SCENARIO BASE_URL [ARGS...]
//
// Scenarios (the server at BASE_URL plays the README round trip unless said otherwise):
//   roundtrip BASE            send the README request; see the text and the tool call stream in
//                             before the stop reason, answer the tool call, continue
//   narrow BASE FILE          a phone's width (390 px): a turn, then FILE in the viewer; does
//                             either view need a horizontal scroll?
//   keyboard BASE             (a server with --delay) Ctrl+Enter sends, Escape aborts, arrows move
//                             between the tabs
//   abort BASE                (a server with --delay) abort once the first text shows
//   token BASE TOKEN          (a server with --token-file) no token, a wrong one, then TOKEN
//   unknown-model BASE        stream a model id the server does not serve
//   view BASE FILE OUTDIR     open FILE in the viewer, then save it in each form into OUTDIR
//   view-served BASE          open the page at #view (the server's `pi-proto view` file)
//   screenshot BASE OUTDIR [FILE]   playground.png after a round trip, viewer.png with FILE
//
// It exits 0 once the scenario ran (the caller asserts on the JSON), 1 if it could not run.
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { openChromium } from "./chromium.mjs";

const README_REQUEST = "请读取 README，然后告诉我项目名。";
const README_TEXT = "# tiny-pi\nA small agent runtime.";
const TIMEOUT_MS = 60_000; // a hang guard: a loaded machine may take seconds to render

const [scenario, base, ...args] = process.argv.slice(2);

const byTestId = (id) => `[data-testid="${id}"]`;

async function openPage(browser, hash = "", viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  await page.goto(new URL(`/${hash}`, base).href);
  return { page, problems };
}

/** The names of the models the picker offers, once it has them (or the picker's complaint). */
async function loadedModels(page) {
  await page.waitForFunction(
    (info) => !(document.querySelector(info)?.textContent ?? "").startsWith("loading"),
    byTestId("model-info"),
  );
  const names = await page.$$eval(`${byTestId("model-select")} option`, (options) =>
    options.filter((option) => option.value !== "other").map((option) => option.textContent),
  );
  return { names, info: await page.textContent(byTestId("model-info")) };
}

/** Record, at every change of the conversation, whether text, a tool call and a stop reason show. */
async function sampleConversation(page) {
  await page.evaluate(
    (selectors) => {
      const box = document.querySelector(selectors.conversation);
      window.__samples = [];
      const sample = () => {
        const last = [...box.querySelectorAll(selectors.assistant)].at(-1);
        if (last === undefined) return;
        const text = [...last.querySelectorAll(selectors.text)].map((node) => node.textContent).join("");
        const args = [...last.querySelectorAll(selectors.args)].map((node) => node.textContent).join("");
        window.__samples.push({ text, args, stop: last.querySelector(selectors.stop) !== null });
      };
      window.__observer?.disconnect();
      window.__observer = new MutationObserver(sample);
      window.__observer.observe(box, { childList: true, subtree: true, characterData: true });
    },
    {
      conversation: byTestId("conversation"),
      assistant: byTestId("assistant-message"),
      text: byTestId("assistant-text"),
      args: byTestId("tool-call-arguments"),
      stop: byTestId("stop-reason"),
    },
  );
}

async function samples(page) {
  return page.evaluate(() => {
    window.__observer?.disconnect();
    return window.__samples;
  });
}

/** Send `text` and wait for the answer's stop reason: the `turn`th assistant message of the conversation. */
async function sendAndWait(page, text, turn) {
  await page.fill(byTestId("message-input"), text);
  await page.click(byTestId("send"));
  return finishedTurn(page, turn);
}

async function finishedTurn(page, turn) {
  const selector = `${byTestId("conversation")} ${byTestId("assistant-message")} ${byTestId("stop-reason")}`;
  await page.waitForFunction(({ selector, turn }) => document.querySelectorAll(selector).length >= turn, {
    selector,
    turn,
  });
  return describeTurn(page, turn);
}

/** What the `turn`th assistant message shows, with the events panel of its stream. */
async function describeTurn(page, turn) {
  return page.evaluate(
    ({ turn, ids }) => {
      const messages = document.querySelectorAll(`${ids.conversation} ${ids.assistant}`);
      const message = messages[turn - 1];
      const texts = (selector) => [...message.querySelectorAll(selector)].map((node) => node.textContent);
      const calls = [...message.querySelectorAll(ids.toolCall)].map((call) => ({
        name: call.querySelector(ids.toolName)?.textContent,
        arguments: call.querySelector(ids.args)?.textContent,
      }));
      const rows = [...document.querySelectorAll(ids.eventRow)];
      return {
        stopReason: message.querySelector(ids.stop)?.textContent ?? null,
        text: texts(ids.text).join(""),
        thinking: texts(ids.thinking),
        toolCalls: calls,
        usage: message.querySelector(ids.usage)?.textContent ?? null,
        cost: message.querySelector(ids.cost)?.textContent ?? null,
        error: message.querySelector(ids.error)?.textContent ?? null,
        eventRows: rows.length,
        eventKinds: rows.map((row) => row.dataset.kind),
      };
    },
    {
      turn,
      ids: {
        conversation: byTestId("conversation"),
        assistant: byTestId("assistant-message"),
        stop: byTestId("stop-reason"),
        text: byTestId("assistant-text"),
        thinking: byTestId("thinking"),
        toolCall: byTestId("tool-call"),
        toolName: byTestId("tool-call-name"),
        args: byTestId("tool-call-arguments"),
        usage: byTestId("usage"),
        cost: byTestId("cost"),
        error: byTestId("error"),
        eventRow: byTestId("event-row"),
      },
    },
  );
}

/** Answer every pending tool call with `text` and continue; the next turn's description. */
async function answerToolCalls(page, text, turn) {
  const fields = await page.$$(byTestId("tool-result-input"));
  for (const field of fields) await field.fill(text);
  await page.click(byTestId("continue"));
  return finishedTurn(page, turn);
}

async function roundTrip(page) {
  const models = await loadedModels(page);
  await sampleConversation(page);
  const first = await sendAndWait(page, README_REQUEST, 1);
  const seen = await samples(page);
  const toolResultInputs = await page.locator(byTestId("tool-result-input")).count();
  const second = await answerToolCalls(page, README_TEXT, 2);
  return {
    models: models.names,
    samples: seen.length,
    firstTurn: { ...first, toolResultInputs },
    secondTurn: second,
  };
}

/** What the page showed of an answer still streaming: its text and tool call before any stop
 * reason. The server's answer streams a tool call, then text for minutes; it is stopped here. */
async function whileStreaming(page) {
  await loadedModels(page);
  await sampleConversation(page);
  await page.fill(byTestId("message-input"), README_REQUEST);
  await page.click(byTestId("send"));
  // Until the text after the tool call has begun: the samples then span the whole first turn.
  await page.waitForFunction(
    (ids) =>
      document.querySelector(ids.args)?.textContent.includes("README.md") &&
      [...document.querySelectorAll(ids.text)].some((node) => node.textContent.includes("x")),
    {
      args: `${byTestId("conversation")} ${byTestId("tool-call-arguments")}`,
      text: `${byTestId("conversation")} ${byTestId("assistant-text")}`,
    },
  );
  const streaming = (await samples(page)).filter((sample) => !sample.stop);
  await page.click(byTestId("abort"));
  const turn = await finishedTurn(page, 1);
  return {
    textBeforeStop: streaming.some((sample) => sample.text !== ""),
    textGrewBeforeStop: new Set(streaming.map((sample) => sample.text)).size > 1,
    toolCallBeforeStop: streaming.some((sample) => sample.args.includes("README.md")),
    stopReason: turn.stopReason,
  };
}

const scenarios = {
  async roundtrip(browser) {
    const { page, problems } = await openPage(browser);
    return { ...(await roundTrip(page)), problems };
  },

  async streaming(browser) {
    const { page, problems } = await openPage(browser);
    return { ...(await whileStreaming(page)), problems };
  },

  async narrow(browser) {
    const { page, problems } = await openPage(browser, "", { width: 390, height: 844 });
    await loadedModels(page);
    const turn = await sendAndWait(page, README_REQUEST, 1);
    const overflows = () => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    const playground = await overflows();
    await page.click(byTestId("tab-viewer"));
    await page.setInputFiles(byTestId("file-input"), args[0]);
    await page.waitForSelector(byTestId("viewer-message"));
    return { stopReason: turn.stopReason, playgroundOverflows: playground, viewerOverflows: await overflows(), problems };
  },

  async keyboard(browser) {
    const { page, problems } = await openPage(browser);
    await loadedModels(page);
    await page.focus(byTestId("message-input"));
    await page.keyboard.type(README_REQUEST);
    await page.keyboard.press("Control+Enter");
    const text = `${byTestId("conversation")} ${byTestId("assistant-text")}`;
    await page.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? "") !== "", text);
    await page.keyboard.press("Escape");
    const turn = await finishedTurn(page, 1);
    const tabs = [];
    await page.focus(byTestId("tab-playground"));
    for (let step = 0; step < 2; step++) {
      await page.keyboard.press("ArrowRight");
      tabs.push(await page.evaluate(() => document.activeElement?.dataset.testid ?? ""));
    }
    return { stopReason: turn.stopReason, tabs, problems };
  },

  async abort(browser) {
    const { page, problems } = await openPage(browser);
    await loadedModels(page);
    await page.fill(byTestId("message-input"), README_REQUEST);
    await page.click(byTestId("send"));
    const text = `${byTestId("conversation")} ${byTestId("assistant-text")}`;
    await page.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? "") !== "", text);
    const textAtAbort = await page.textContent(text);
    const abortEnabled = await page.isEnabled(byTestId("abort"));
    await page.click(byTestId("abort"));
    const turn = await finishedTurn(page, 1);
    return {
      abortEnabled,
      textAtAbort,
      stopReason: turn.stopReason,
      error: turn.error,
      text: turn.text,
      eventRows: turn.eventRows,
      sendEnabledAfter: await page.isEnabled(byTestId("send")),
      problems,
    };
  },

  async token(browser) {
    const [token] = args;
    const { page, problems } = await openPage(browser);
    const authError = byTestId("auth-error");
    const shown = async (previous) => {
      await page.waitForFunction(
        ({ selector, previous }) => {
          const node = document.querySelector(selector);
          return node !== null && !node.hidden && node.textContent !== "" && node.textContent !== previous;
        },
        { selector: authError, previous },
      );
      return page.textContent(authError);
    };
    const withoutToken = await shown(null);
    await page.fill(byTestId("token-input"), `${token}-wrong`);
    await page.click(byTestId("token-save"));
    const wrongToken = await shown(withoutToken);
    await page.fill(byTestId("token-input"), token);
    await page.click(byTestId("token-save"));
    const models = await loadedModels(page);
    const turn = await sendAndWait(page, README_REQUEST, 1);
    return {
      withoutToken,
      wrongToken,
      models: models.names,
      modelInfo: models.info,
      authPanelHidden: await page.isHidden(byTestId("auth")),
      streamStopReason: turn.stopReason,
      tokenInUrl: page.url().includes(token),
      tokenInSessionStorage: await page.evaluate((token) => Object.values(sessionStorage).includes(token), token),
      tokenInLocalStorage: await page.evaluate((token) => Object.values(localStorage).includes(token), token),
      problems,
    };
  },

  async "unknown-model"(browser) {
    const { page, problems } = await openPage(browser);
    const models = await loadedModels(page);
    await page.selectOption(byTestId("model-select"), "other");
    await page.fill(byTestId("model-custom"), "no-such-model");
    const turn = await sendAndWait(page, README_REQUEST, 1);
    return { models: models.names, stopReason: turn.stopReason, error: turn.error, problems };
  },

  async view(browser) {
    const [file, outdir] = args;
    const { page, problems } = await openPage(browser);
    await page.click(byTestId("tab-viewer"));
    await page.setInputFiles(byTestId("file-input"), file);
    return { ...(await describeViewer(page, path.basename(file))), ...(await saveAll(page, file, outdir)), problems };
  },

  async "view-served"(browser) {
    const { page, problems } = await openPage(browser, "#view");
    await page.waitForFunction(
      (ids) =>
        document.querySelector(ids.title)?.textContent !== "No transcript open" ||
        !document.querySelector(ids.status).hidden,
      { title: byTestId("viewer-title"), status: byTestId("viewer-status") },
    );
    const status = await page.textContent(byTestId("viewer-status"));
    return {
      viewerVisible: await page.isVisible(byTestId("viewer")),
      status,
      ...(await describeViewer(page, "")),
      problems,
    };
  },

  async screenshot(browser) {
    const [outdir, file] = args;
    await mkdir(outdir, { recursive: true });
    const { page, problems } = await openPage(browser);
    const trip = await roundTrip(page);
    const playground = path.join(outdir, "playground.png");
    await page.screenshot({ path: playground });
    const shots = { playground, secondTurn: trip.secondTurn.stopReason };
    if (file !== undefined) {
      await page.click(byTestId("tab-viewer"));
      await page.setInputFiles(byTestId("file-input"), file);
      await describeViewer(page, path.basename(file));
      shots.viewer = path.join(outdir, "viewer.png");
      await page.screenshot({ path: shots.viewer });
    }
    return { ...shots, problems };
  },
};

/** What the viewer shows of the open file: the branch shown, then every entry, and the tree. */
async function describeViewer(page, name) {
  await page.waitForFunction(
    ({ title, status, name }) =>
      ((document.querySelector(title)?.textContent ?? "").startsWith(name) &&
        document.querySelector(title).textContent !== "No transcript open") ||
      document.querySelector(status)?.classList.contains("error"),
    { title: byTestId("viewer-title"), status: byTestId("viewer-status"), name },
  );
  const shown = () =>
    page.evaluate(
      (ids) => {
        const box = document.querySelector(ids.conversation);
        const kinds = new Set([...box.querySelectorAll("[data-block]")].map((node) => node.dataset.block));
        for (const result of box.querySelectorAll(ids.toolResult)) {
          kinds.add(result.dataset.error === "true" ? "tool-result-error" : "tool-result");
        }
        return {
          messages: box.querySelectorAll(ids.message).length,
          roles: [...new Set([...box.querySelectorAll(ids.message)].map((node) => node.dataset.role))],
          blockKinds: [...kinds].sort(),
          sessionEntries: [...box.querySelectorAll(ids.entry)].map((node) => node.dataset.kind),
          images: box.querySelectorAll("img").length,
          totals: document.querySelector(ids.totals).textContent,
          // Every class the file's entries were given, in the conversation and the tree.
          classes: [
            ...new Set(
              [box, document.querySelector(ids.tree)].flatMap((root) =>
                [...root.querySelectorAll("[class]")].flatMap((node) => [...node.classList]),
              ),
            ),
          ].sort(),
          noteClasses: [...box.querySelectorAll(ids.entry)].map((node) => node.className),
          treeKindClasses: [...document.querySelectorAll(`${ids.tree} .tree-kind`)].map((node) => node.className),
          customRoles: [...box.querySelectorAll(ids.custom)].map((node) => node.dataset.customRole),
        };
      },
      {
        tree: byTestId("session-tree"),
        custom: "[data-custom-role]",
        conversation: byTestId("viewer-conversation"),
        message: byTestId("viewer-message"),
        toolResult: '[data-role="toolResult"]',
        entry: byTestId("viewer-entry"),
        totals: byTestId("viewer-totals"),
      },
    );
  const title = await page.textContent(byTestId("viewer-title"));
  const status = await page.textContent(byTestId("viewer-status"));
  const branches = await page.$$eval(`${byTestId("branch-select")} option`, (options) =>
    options.filter((option) => option.value !== "all").map((option) => option.textContent),
  );
  const treeEntries = await page.locator(byTestId("tree-entry")).count();
  const branch = await shown();
  let all = branch;
  if (await page.isEnabled(byTestId("branch-select"))) {
    const chosen = await page.inputValue(byTestId("branch-select"));
    await page.selectOption(byTestId("branch-select"), "all");
    all = await shown();
    await page.selectOption(byTestId("branch-select"), chosen); // back to the branch the viewer chose
  }
  return {
    title,
    status,
    messages: branch.messages,
    blockKinds: branch.blockKinds,
    totals: branch.totals,
    treeEntries,
    branches,
    branch,
    allEntries: all,
  };
}

/** Click each save button; the downloads go into `outdir`, and each is compared with the file loaded. */
async function saveAll(page, file, outdir) {
  await mkdir(outdir, { recursive: true });
  const loaded = await readFile(file);
  const saved = {};
  const sameBytes = {};
  for (const format of ["jsonl", "binpb", "json"]) {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click(byTestId(`save-${format}`))]);
    const target = path.join(outdir, download.suggestedFilename());
    await download.saveAs(target);
    saved[format] = target;
    sameBytes[format] = Buffer.compare(await readFile(target), loaded) === 0;
  }
  const form = path.extname(file).slice(1);
  return { saved, sameBytesAsLoaded: sameBytes, savedInLoadedFormIdentical: sameBytes[form] ?? null };
}

async function main() {
  const run = scenarios[scenario];
  if (run === undefined || base === undefined) {
    console.error(`usage: node ui.mjs {${Object.keys(scenarios).join("|")}} BASE_URL [ARGS...]`);
    return 2;
  }
  const browser = await openChromium();
  try {
    console.log(JSON.stringify({ scenario, ...(await run(browser)) }));
    return 0;
  } catch (error) {
    console.log(JSON.stringify({ scenario, failed: String(error?.stack ?? error) }));
    return 1;
  } finally {
    await browser.close();
  }
}

process.exitCode = await main();
