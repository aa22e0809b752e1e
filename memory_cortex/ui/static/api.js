// The one way the dashboard talks to the daemon: JSON in and out, the API token from
// sessionStorage as a Bearer header, a 401 hands over to the token form, and every other failure
// becomes an ApiError whose message the page shows in its alert region.

import { showError } from "./dom.js";

const TOKEN_KEY = "memory-cortex.api-token";

// The API lives next to /ui/ (a reverse proxy may mount the daemon under a prefix).
const API_BASE = window.location.pathname.replace(/\/ui(\/.*)?$/, "");

/** Thrown when the daemon wants a (different) token: the token form is showing, nothing to report. */
export class AuthRequired extends Error {
  constructor() {
    super("The API token is required.");
    this.name = "AuthRequired";
  }
}

/** A non-2xx answer (or no answer): `status` 0 when the daemon could not be reached. */
export class ApiError extends Error {
  constructor(status, code, message, runId) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.runId = runId; // lifecycle_busy: the run under way (error.run_id)
  }
}

let unauthorizedHandler = () => {};

/** Called with `hadToken` (true: the stored token was refused) whenever a request answers 401. */
export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

export function getToken() {
  return window.sessionStorage.getItem(TOKEN_KEY) ?? "";
}

export function setToken(token) {
  if (token) window.sessionStorage.setItem(TOKEN_KEY, token);
  else window.sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * One API request.
 * @param {string} path e.g. "/memories"
 * @param {{method?: string, query?: Record<string, any>, body?: any, signal?: AbortSignal}} [options]
 *   query values that are undefined, null or "" are left out.
 * @returns {Promise<any>} the parsed JSON body
 * @throws {AuthRequired|ApiError|DOMException} DOMException "AbortError" when `signal` aborted it
 */
export async function api(path, { method = "GET", query, body, signal } = {}) {
  const url = new URL(API_BASE + path, window.location.origin);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, String(value));
  }
  const headers = { Accept: "application/json" };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, signal, cache: "no-store", credentials: "omit" };
  // Every write declares JSON, a body-less DELETE or POST included: the daemon refuses a write
  // that does not (so that no other web page can send it one without a CORS preflight).
  if (method !== "GET" && method !== "HEAD") headers["Content-Type"] = "application/json";
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "unreachable", `The daemon did not answer (${error.message}).`);
  }
  if (response.status === 401) {
    unauthorizedHandler(Boolean(token));
    throw new AuthRequired();
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const code = data?.error?.code ?? `http_${response.status}`;
    const message = data?.error?.message ?? response.statusText;
    throw new ApiError(response.status, code, `${method} ${path}: ${message} (${response.status})`, data?.error?.run_id);
  }
  return data;
}

/**
 * For a part of a page that reloads (a list, a search, a chart): each call aborts the request of
 * the call before it and returns the signal for a new one, also aborted when the page is left
 * (`pageSignal`). A late answer to an older request can then never overwrite a newer one.
 * @param {AbortSignal} pageSignal the route's signal
 * @returns {() => AbortSignal}
 */
export function latestOnly(pageSignal) {
  let previous = null;
  return () => {
    previous?.abort();
    const controller = new AbortController();
    const abort = () => controller.abort();
    pageSignal.addEventListener("abort", abort, { once: true });
    controller.signal.addEventListener("abort", () => pageSignal.removeEventListener("abort", abort), { once: true });
    if (pageSignal.aborted) controller.abort();
    previous = controller;
    return controller.signal;
  };
}

/** True for the AbortError of a request that a newer one replaced (the page itself is still open). */
export function isSuperseded(error, pageSignal) {
  return error?.name === "AbortError" && !pageSignal.aborted;
}

/**
 * Report an error from a view or an action: a 401 (the token form is showing) and an abandoned
 * request (the user went elsewhere) need no message; anything else is shown.
 */
export function reportError(error) {
  if (error instanceof AuthRequired || error?.name === "AbortError") return;
  showError(error instanceof ApiError ? error.message : `Unexpected error: ${error?.message ?? error}`);
  if (!(error instanceof ApiError)) console.warn(error); // a bug in the page: keep the stack
}

/** Wrap an event handler so that its failures are reported instead of lost. */
export function guarded(handler) {
  return async (event) => {
    try {
      await handler(event);
    } catch (error) {
      reportError(error);
    }
  };
}
