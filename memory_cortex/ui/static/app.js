// The dashboard's shell: the hash router (#/overview, #/memories, #/sessions, #/people, #/search, #/ingest,
// #/lifecycle, #/system),
// the navigation, the user picker shared by every page, and the token form.

import { api, AuthRequired, onUnauthorized, reportError, setToken } from "./api.js";
import { clearErrors, el, focusHeading, replace } from "./dom.js";
import { watchHealth } from "./health.js";
import * as ingest from "./ingest.js";
import * as lifecycle from "./lifecycle.js";
import * as memories from "./memories.js";
import * as overview from "./overview.js";
import * as people from "./people.js";
import * as search from "./search.js";
import * as sessions from "./sessions.js";
import * as system from "./system.js";

// "#/" is the overview too: the landing page.
const VIEWS = { "": overview, overview, memories, sessions, people, search, ingest, lifecycle, system };
const DEFAULT_ROUTE = "#/overview";
const USER_KEY = "memory-cortex.user";
const OTHER = "\u0000other"; // the picker's "another user" choice: no real user id starts with NUL

const main = document.getElementById("main");
const tokenPanel = document.getElementById("token-panel");
const tokenForm = document.getElementById("token-form");
const tokenInput = document.getElementById("token-input");
const tokenMessage = document.getElementById("token-message");
const userPicker = document.getElementById("user-picker");
const nav = document.getElementById("nav");
const navToggle = document.getElementById("nav-toggle");

/** What every view may read: the chosen user and the users the store knows. */
const state = { user: window.sessionStorage.getItem(USER_KEY) ?? "", users: [], locked: false };

/** The route in progress: its abort controller (stale answers are dropped) and its cleanup. */
let current = { controller: new AbortController(), cleanup: null };

/**
 * #/memories/12?user=sam → {name: "memories", path: ["memories", "12"], query: URLSearchParams}.
 * @throws {URIError} on a malformed % escape (#/memories/%E0)
 */
function parseHash(hash) {
  const [pathPart, queryPart = ""] = hash.replace(/^#\/?/, "").split("?");
  const path = pathPart.split("/").filter(Boolean).map(decodeURIComponent);
  return { name: path[0] ?? "", path, query: new URLSearchParams(queryPart) };
}

/**
 * Draw the page the hash names. While it loads, main has aria-busy="true"; when it is drawn (or
 * failed), aria-busy="false" and data-route is the hash it drew (tests and scripts wait for both).
 * @param {{focus?: boolean}} [options] focus: move the focus to the new page's heading (on a
 *   hash change, so a screen reader announces the page; not when the user picker redraws it)
 */
async function route({ focus = false } = {}) {
  const hash = window.location.hash;
  let parsed;
  try {
    parsed = parseHash(hash);
  } catch {
    parsed = null; // a malformed % escape: no such page
  }
  const view = parsed ? VIEWS[parsed.name] : undefined;
  if (parsed && !view) {
    window.location.replace(DEFAULT_ROUTE);
    return;
  }
  current.controller.abort();
  current.cleanup?.();
  current = { controller: new AbortController(), cleanup: null };
  const { signal } = current.controller;
  clearErrors();
  markCurrentLink(parsed?.name ?? "");
  closeNavOnPhone();
  if (state.locked) return;
  main.setAttribute("aria-busy", "true");
  delete main.dataset.route;
  try {
    if (!parsed) {
      replace(main, el("h1", null, "Page not found"), el("p", { class: "empty" }, "This address names no page of the dashboard."));
      return;
    }
    replace(main, el("p", { class: "loading" }, "Loading…"));
    const context = {
      path: parsed.path,
      query: parsed.query,
      signal,
      get user() {
        return state.user;
      },
      users: state.users,
      refreshUsers: loadUsers,
      switchUser: (user) => switchUser(user),
    };
    const cleanup = await view.render(main, context);
    if (signal.aborted) cleanup?.();
    else current.cleanup = cleanup ?? null;
  } catch (error) {
    if (!signal.aborted) {
      if (!(error instanceof AuthRequired)) replace(main, el("p", { class: "empty" }, "This page could not be loaded."));
      reportError(error);
    }
  } finally {
    if (!signal.aborted) {
      main.dataset.route = hash;
      main.setAttribute("aria-busy", "false");
      if (focus) focusHeading(main);
    }
  }
}

function markCurrentLink(name) {
  for (const link of nav.querySelectorAll("a")) {
    if (link.getAttribute("href") === `#/${name || "overview"}`) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function closeNavOnPhone() {
  navToggle.setAttribute("aria-expanded", "false");
  nav.classList.remove("open");
}

// -- users ---------------------------------------------------------------------------------
/** The users that have live memories (/stats per_user), for the picker. */
async function loadUsers() {
  const stats = await api("/stats");
  const perUser = stats.per_user ?? {};
  state.users = Object.keys(perUser).sort();
  // First visit: the user with the most memories is the likeliest to be looked at.
  if (!state.user) state.user = state.users.toSorted((a, b) => perUser[b] - perUser[a])[0] ?? "default";
  renderUserPicker();
  return state.users;
}

function renderUserPicker() {
  const known = state.users.includes(state.user);
  const choice = el(
    "select",
    { id: "user-select", name: "user", value: known ? state.user : OTHER },
    state.users.map((user) => el("option", { value: user }, user)),
    el("option", { value: OTHER }, "Another user…"),
  );
  const other = el("input", {
    id: "user-other",
    name: "other_user",
    type: "text",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "user id",
    value: known ? "" : state.user,
  });
  const otherField = el(
    "div",
    { class: "field", hidden: known },
    el("label", { for: "user-other" }, "Other user"),
    other,
    el("button", { type: "submit" }, "Show"),
  );
  choice.addEventListener("change", () => {
    if (choice.value === OTHER) {
      otherField.hidden = false;
      other.focus();
    } else {
      otherField.hidden = true;
      chooseUser(choice.value);
    }
  });
  const form = el("form", { class: "user-form", "aria-label": "Whose memories" }, el("div", { class: "field" }, el("label", { for: "user-select" }, "User"), choice), otherField);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (other.value.trim()) chooseUser(other.value.trim());
  });
  replace(userPicker, form);
}

/** Make `user` the picker's user without leaving the page (a memory of that user is open). */
function switchUser(user) {
  state.user = user;
  window.sessionStorage.setItem(USER_KEY, user);
  renderUserPicker();
}

function chooseUser(user) {
  if (user === state.user) return;
  state.user = user;
  window.sessionStorage.setItem(USER_KEY, user);
  // A memory's or a conversation's page belongs to one user: another user's view of it is their list.
  const detail = /^#\/(memories|sessions)\/[^/?]/.exec(window.location.hash);
  if (detail) window.location.hash = `#/${detail[1]}`;
  else route();
}

// -- the token -----------------------------------------------------------------------------
/** A request answered 401: stop everything and ask for the token (again, if one was refused). */
function lock(hadToken) {
  if (hadToken) setToken("");
  current.controller.abort();
  current.cleanup?.();
  current = { controller: new AbortController(), cleanup: null };
  const firstTime = !state.locked;
  state.locked = true;
  document.body.classList.add("locked");
  main.hidden = true;
  main.replaceChildren();
  delete main.dataset.route;
  userPicker.replaceChildren();
  tokenPanel.hidden = false;
  tokenMessage.textContent = hadToken
    ? "That token was refused. Enter the API token (server.api_token) again."
    : "This daemon needs its API token (server.api_token) before it shows anything.";
  if (firstTime || hadToken) tokenInput.focus();
}

async function unlock(event) {
  event.preventDefault();
  const token = tokenInput.value.trim();
  if (!token) return;
  setToken(token);
  tokenInput.value = "";
  try {
    await loadUsers();
  } catch (error) {
    reportError(error);
    return;
  }
  state.locked = false;
  document.body.classList.remove("locked");
  tokenPanel.hidden = true;
  main.hidden = false;
  route();
}

// -- start ---------------------------------------------------------------------------------
function start() {
  onUnauthorized(lock);
  watchHealth(document.getElementById("health-banner"));
  tokenForm.addEventListener("submit", unlock);
  navToggle.addEventListener("click", () => {
    const open = navToggle.getAttribute("aria-expanded") !== "true";
    navToggle.setAttribute("aria-expanded", String(open));
    nav.classList.toggle("open", open);
  });
  // The phone menu closes on Escape (focus back on its button) and when the focus leaves it.
  for (const part of [nav, navToggle]) {
    part.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && nav.classList.contains("open")) {
        closeNavOnPhone();
        navToggle.focus();
      }
    });
    part.addEventListener("focusout", (event) => {
      const to = event.relatedTarget;
      if (nav.classList.contains("open") && !(to && (nav.contains(to) || to === navToggle))) closeNavOnPhone();
    });
  }
  document.getElementById("skip-link").addEventListener("click", (event) => {
    event.preventDefault(); // #main is no route: focus the content instead of changing the hash
    main.focus();
  });
  window.addEventListener("hashchange", () => route({ focus: true }));
  // No hashchange for this one: the first route() runs once the users are known.
  if (!window.location.hash.startsWith("#/")) window.history.replaceState(null, "", DEFAULT_ROUTE);
  loadUsers().then(() => route(), (error) => {
    if (!(error instanceof AuthRequired)) {
      reportError(error);
      route();
    }
  });
}

start();
