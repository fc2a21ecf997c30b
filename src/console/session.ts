/**
 * The operator's session: the key (kept in this tab's session storage only), its role, the network the page
 * shows, and the calls to the service's own API made with them.
 */

const KEY_STORAGE = "token-transfer-console-key";

/** What the service answered a call: its status, and the JSON body (an error envelope when not 2xx). */
export interface Answer<T> {
  status: number;
  body: T & { code?: string; message?: string };
}

/** An answer of 4xx or 5xx, with the service's code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class ConsoleSession {
  key: string | undefined = sessionStorage.getItem(KEY_STORAGE) ?? undefined;
  /** An admin key may read the wallet and press the buttons that change something. */
  admin = false;
  /** The network the wallet and the lists show (the switcher's choice); undefined: the default, with one network. */
  network: string | undefined;

  async call<T>(method: string, path: string, payload?: object): Promise<Answer<T>> {
    const headers = { ...this.#headers("application/json"), ...(payload && { "content-type": "application/json" }) };
    const response = await fetch(path, { method, headers, ...(payload && { body: JSON.stringify(payload) }) });
    const body = (await response.json().catch(() => ({}))) as Answer<T>["body"];
    return { status: response.status, body };
  }

  /** The body of a 2xx answer; an ApiError for any other. */
  async get<T>(path: string): Promise<T> {
    return bodyOf(await this.call<T>("GET", path));
  }

  /** A file the service answers (a CSV export), with the name the service gives it; an ApiError for a refusal. */
  async file(path: string, accept: string): Promise<{ name: string; blob: Blob }> {
    const response = await fetch(path, { headers: this.#headers(accept) });
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
      throw new ApiError(response.status, body.code ?? "ERROR", body.message ?? `HTTP ${response.status}`);
    }
    const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? "download";
    return { name, blob: await response.blob() };
  }

  // The operator's key on every call, and what the answer is to be.
  #headers(accept: string): Record<string, string> {
    return { authorization: `Bearer ${this.key ?? ""}`, accept };
  }

  /** The list filter of the chosen network (none with one network). */
  onNetwork(): string {
    return this.network === undefined ? "" : `&network=${encodeURIComponent(this.network)}`;
  }

  keep(key: string): void {
    this.key = key;
    sessionStorage.setItem(KEY_STORAGE, key);
  }

  forget(): void {
    this.key = undefined;
    sessionStorage.removeItem(KEY_STORAGE);
  }
}

/** The body of a 2xx answer; an ApiError for any other. */
export function bodyOf<T>(answer: Answer<T>): T {
  if (answer.status >= 400) throw new ApiError(answer.status, answer.body.code ?? "ERROR", answer.body.message ?? `HTTP ${answer.status}`);
  return answer.body;
}
