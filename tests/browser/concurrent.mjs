// Opens a page of the server at BASE in Debian's chromium and starts COUNT SSE streams and a
// ListModels call at once, from the page's own origin; prints, as JSON, when each stream's first
// bytes and its end arrived, when ListModels answered, and the protocol of every request.
import { openChromium } from "./chromium.mjs";

const [base, count] = [process.argv[2], Number(process.argv[3] ?? "8")];
const LIST_MODELS = "/pi.ai.v1.ModelService/ListModels?encoding=json&message=%7B%7D";

const browser = await openChromium();
try {
  const page = await browser.newPage({ ignoreHTTPSErrors: true });
  await page.goto(base + LIST_MODELS);
  const seen = await page.evaluate(async ({ count, listModels }) => {
    const started = performance.now();
    const body = JSON.stringify({ messages: [{ role: "user", content: "hi", timestamp: 1 }] });
    const stream = async () => {
      const response = await fetch("/v1/stream", { method: "POST", headers: { "content-type": "application/json" }, body });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let first = null;
      let text = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        first ??= performance.now() - started;
        text += decoder.decode(value, { stream: true });
      }
      return { first, end: performance.now() - started, done: text.includes('"type":"done"') };
    };
    const streams = Array.from({ length: count }, stream);
    const listed = fetch(listModels).then(() => performance.now() - started);
    const results = await Promise.all(streams);
    const protocols = performance.getEntriesByType("resource").map((entry) => entry.nextHopProtocol);
    return { streams: results, listedAt: await listed, protocols };
  }, { count, listModels: LIST_MODELS });
  console.log(JSON.stringify(seen));
} finally {
  await browser.close();
}
