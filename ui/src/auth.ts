/**
 * The token: kept in this tab's sessionStorage only, sent as `authorization: Bearer <token>` by
 * the calls (never in a URL). When a call is refused as UNAUTHENTICATED the panel says so, and
 * why: no token was given, or the one given was refused.
 */

import { byTestId } from "./dom.ts";

const KEY = "pi-proto.token";

/** The token the user gave in this tab, if any. */
export function savedToken(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) || undefined;
  } catch {
    return undefined; // storage disabled: calls go without a token
  }
}

function keep(token: string | undefined): void {
  try {
    if (token === undefined) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, token);
  } catch {
    // storage disabled: nothing is kept
  }
}

/** Whether a status code is the server's "who are you?". */
export function isUnauthenticated(statusCode: string): boolean {
  return statusCode === "UNAUTHENTICATED";
}

/** The token panel the page declares: the reason it is shown, the field, Save and Forget. */
export class AuthPanel {
  private readonly panel = byTestId("auth", HTMLElement);
  private readonly reason = byTestId("auth-error", HTMLElement);
  private readonly input = byTestId("token-input", HTMLInputElement);
  private readonly state = byTestId("token-state", HTMLElement);

  /** `changed` runs once a token was saved or forgotten, to call again with it. */
  constructor(changed: () => void) {
    byTestId("token-form", HTMLFormElement).addEventListener("submit", (event) => {
      event.preventDefault();
      const token = this.input.value.trim();
      keep(token === "" ? undefined : token);
      this.input.value = "";
      this.close();
      changed();
    });
    byTestId("token-forget", HTMLButtonElement).addEventListener("click", () => {
      keep(undefined);
      this.input.value = "";
      this.showState();
      changed();
    });
    byTestId("token-open", HTMLButtonElement).addEventListener("click", () => this.open(""));
    this.showState();
  }

  /** Say why a call was refused (UNAUTHENTICATED), with the server's words, and ask for a token. */
  refused(detail: string): void {
    const why = savedToken() === undefined ? "This server needs a token." : "The token was refused.";
    this.open(`${why} Enter ${savedToken() === undefined ? "it" : "the right one"} below (server: ${detail}).`);
  }

  private open(reason: string): void {
    this.reason.textContent = reason;
    this.reason.hidden = reason === "";
    this.panel.hidden = false;
    this.showState();
    this.input.focus();
  }

  private close(): void {
    this.panel.hidden = true;
    this.reason.textContent = "";
    this.showState();
  }

  private showState(): void {
    this.state.textContent = savedToken() === undefined ? "no token" : "token set (this tab only)";
  }
}
