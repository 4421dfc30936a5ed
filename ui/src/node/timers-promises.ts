/** `node:timers/promises`' setTimeout, as client.ts waits before a Resume: the browser's timer, as a promise. */

/** Resolve with `value` after `ms` milliseconds; reject at once when `options.signal` aborts. */
export function setTimeout<T>(ms: number, value?: T, options: { signal?: AbortSignal } = {}): Promise<T | undefined> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const abort = (): void => {
      globalThis.clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = globalThis.setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve(value);
    }, ms);
    signal?.addEventListener("abort", abort, { once: true });
  });
}
