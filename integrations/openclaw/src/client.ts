/**
 * The one HTTP client of the plugin: every call to the daemon goes through `DaemonClient.request`.
 *
 * It never throws. A hook that throws is logged by OpenClaw as a plugin failure and, worse, a hook
 * that hangs holds the turn for the runner's default budget (15-30 s); so every request carries its
 * own deadline (AbortSignal.timeout, which also covers reading the body) and every outcome, good or
 * bad, comes back as a value the caller can log and move on from.
 */

export type DaemonSuccess<T> = { ok: true; status: number; body: T };

export type DaemonFailure = {
  ok: false;
  /** HTTP status when the daemon answered; absent when it did not (refused, timed out…). */
  status?: number;
  /** The daemon's `error.code` when it answered with its JSON error shape. */
  code?: string;
  /** One line for a log or a tool error. Never contains the request body (memory text). */
  message: string;
  /** True when the deadline passed before the answer was complete. */
  timedOut: boolean;
};

export type DaemonResult<T> = DaemonSuccess<T> | DaemonFailure;

export type RequestOptions = {
  /** JSON body. */
  body?: unknown;
  /** Query-string parameters (values sent as given, empty strings included). */
  query?: Record<string, string>;
  /** Deadline for the whole exchange, connect to last byte. */
  timeoutMs: number;
  /** The caller's own cancellation (e.g. the tool call's signal), combined with the deadline. */
  signal?: AbortSignal;
};

export class DaemonClient {
  readonly baseUrl: string;
  readonly #token: string | undefined;

  /**
   * @param baseUrl e.g. `http://127.0.0.1:8300`.
   * @param token the daemon's `server.api_token`, sent as `Authorization: Bearer …` (never logged).
   */
  constructor(baseUrl: string, token?: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#token = token || undefined;
  }

  /** One request; `T` is the JSON body the caller expects on a 2xx. */
  async request<T>(method: string, path: string, options: RequestOptions): Promise<DaemonResult<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const deadline = AbortSignal.timeout(Math.max(1, options.timeoutMs));
    const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
    try {
      const headers: Record<string, string> = { accept: "application/json" };
      // The daemon refuses a write that does not declare JSON, a body-less DELETE included
      // (the rule that keeps web pages from sending it writes).
      if (method !== "GET" && method !== "HEAD") headers["content-type"] = "application/json";
      if (this.#token) headers.authorization = `Bearer ${this.#token}`;
      const response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal,
      });
      const text = await response.text();
      const parsed = parseJson(text);
      if (!response.ok) {
        const error = errorBody(parsed);
        return {
          ok: false,
          status: response.status,
          code: error?.code,
          message: `${method} ${path}: HTTP ${response.status}${error ? ` ${error.code}: ${error.message}` : ""}`,
          timedOut: false,
        };
      }
      return { ok: true, status: response.status, body: parsed as T };
    } catch (error) {
      const timedOut = deadline.aborted;
      const reason = timedOut
        ? `no answer within ${options.timeoutMs} ms`
        : options.signal?.aborted
          ? "cancelled"
          : describeNetworkError(error);
      return { ok: false, message: `${method} ${path}: ${reason} (${this.baseUrl})`, timedOut };
    }
  }

  post<T>(path: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<DaemonResult<T>> {
    return this.request<T>("POST", path, { body, timeoutMs, signal });
  }
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorBody(parsed: unknown): { code: string; message: string } | undefined {
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const error = (parsed as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== "string" || typeof message !== "string") return undefined;
  return { code, message };
}

/** fetch's own message is "fetch failed"; the useful part (ECONNREFUSED…) is in `cause`. */
function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return typeof code === "string" ? `${code} (${cause.message})` : cause.message;
    }
    return error.message;
  }
  return String(error);
}
