// Tiny DOM helpers. Data only ever reaches the page as text (textContent, attribute values):
// nothing here parses HTML, so a memory that contains markup is shown as the characters it is.

const SVG_NS = "http://www.w3.org/2000/svg";

// Set as properties after the children exist (a <select>'s value needs its options first).
const PROPERTIES = new Set(["value", "checked", "selected", "disabled", "hidden", "open", "indeterminate"]);

/**
 * Create an element.
 * @param {string} tag
 * @param {Record<string, any>|null} [attrs] attributes; `class`; `dataset`; `on<event>` listeners;
 *   value/checked/disabled/hidden… as properties; null, undefined and false are left out.
 * @param {...any} children strings and numbers become text nodes; arrays are flattened; null is skipped.
 * @returns {HTMLElement}
 */
export function el(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** Like el(), in the SVG namespace (for the charts). */
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(node, attrs, children) {
  const properties = [];
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "style") throw new Error("no style attributes: the page's CSP forbids them");
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      node.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else if (PROPERTIES.has(key)) {
      properties.push([key, value]);
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  for (const [key, value] of properties) node[key] = value;
  return node;
}

/** Append children (text, nodes, nested arrays; null/undefined/false skipped). */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replace everything inside `node` with `children`. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

let idCounter = 0;
/** A unique id for label/control pairs. */
export function uid(prefix = "f") {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/**
 * A labelled form field: <div class="field"><label for=…>label</label>control</div>.
 * @param {string} label
 * @param {HTMLElement} control an input, select or textarea (its id is set when missing)
 * @param {string} [hint] a short help text, tied to the control by aria-describedby
 */
export function field(label, control, hint) {
  if (!control.id) control.id = uid("field");
  let hintNode = null;
  if (hint) {
    hintNode = el("small", { class: "hint", id: uid("hint") }, hint);
    control.setAttribute("aria-describedby", hintNode.id);
  }
  return el("div", { class: "field" }, el("label", { for: control.id }, label), control, hintNode);
}

/** A <select> from [value, label] pairs (or plain strings). */
export function select(name, options, value) {
  return el(
    "select",
    { name, value: value ?? "" },
    options.map((option) => {
      const [optionValue, optionLabel] = Array.isArray(option) ? option : [option, option];
      return el("option", { value: optionValue }, optionLabel);
    }),
  );
}

/**
 * A table inside a horizontally scrolling, keyboard-focusable region (tables scroll on a phone).
 * On a phone (under 600px) each row is drawn as a card (style.css), so nothing scrolls sideways.
 * @param {{caption: string, columns: {label: string, cell: (row: any) => any, class?: string,
 *          sort?: "ascending"|"descending"}[],
 *          rows: any[], empty?: string, rowClass?: (row: any) => string|undefined,
 *          after?: (row: any) => HTMLElement|null}} spec  `after` may add a full-width row below each row.
 */
export function dataTable({ caption, columns, rows, empty = "Nothing to show.", rowClass, after }) {
  if (!rows.length) return el("p", { class: "empty" }, empty);
  const body = el("tbody");
  for (const row of rows) {
    body.append(
      el(
        "tr",
        { class: rowClass?.(row) },
        // data-label: on a phone each row is a card, and each cell says which column it is.
        columns.map((column) => el("td", { class: column.class, "data-label": column.label }, column.cell(row))),
      ),
    );
    const extra = after?.(row);
    if (extra) body.append(extra);
  }
  const table = el(
    "table",
    null,
    el("caption", null, caption),
    el("thead", null, el("tr", null, columns.map((column) => el("th", { scope: "col", class: column.class, "aria-sort": column.sort }, column.label, column.sort === "descending" ? " ↓" : null)))),
    body,
  );
  return el("div", { class: "table-scroll", role: "region", "aria-label": caption, tabindex: "0" }, table);
}

/** A <dl> from [term, description] pairs; null descriptions show a dash. */
export function descriptionList(pairs, className = "facts") {
  return el(
    "dl",
    { class: className },
    // A <div> per pair (allowed in a <dl>) lets the pairs wrap as units on a narrow screen.
    pairs.map(([term, description]) =>
      el(
        "div",
        null,
        el("dt", null, term),
        el("dd", null, description === null || description === undefined || description === "" ? "—" : description),
      ),
    ),
  );
}

/**
 * Parse the daemon's timestamps. They are UTC ("…Z"); one without a zone is read as UTC too.
 * @returns {Date|null}
 */
export function parseTime(value) {
  if (!value) return null;
  const text = /[zZ]|[+-]\d\d:?\d\d$/.test(value) || !value.includes("T") ? value : `${value}Z`;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** A timestamp in the browser's local time, inside a <time> that keeps the exact value. */
export function time(value) {
  const date = parseTime(value);
  if (!date) return "—";
  return el("time", { datetime: date.toISOString(), title: date.toISOString() }, dateFormat.format(date));
}

/** "5 s", "3 min", "2 h", "4 d": how long ago `value` was. */
export function age(value, now = Date.now()) {
  const date = parseTime(value);
  if (!date) return "—";
  const seconds = Math.max(0, (now - date.getTime()) / 1000);
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

/**
 * A duration people read: 850 ms, 4.2 s, 2 min 17 s, 1 h 5 min, 3 d 4 h (never "137445").
 * @param {number|null|undefined} ms milliseconds
 */
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "—";
  const value = Math.max(0, Number(ms));
  if (value < 1000) return `${Math.round(value)} ms`;
  if (value < 10_000) return `${(value / 1000).toFixed(1)} s`;
  const seconds = Math.round(value / 1000);
  if (seconds < 60) return `${seconds} s`;
  const parts = [[86400, "d"], [3600, "h"], [60, "min"], [1, "s"]]
    .map(([size, unit], index, all) => [Math.floor((seconds % (all[index - 1]?.[0] ?? Infinity)) / size), unit]);
  const first = parts.findIndex(([count]) => count > 0);
  return parts
    .slice(first, first + 2)
    .filter(([count], index) => index === 0 || count > 0)
    .map(([count, unit]) => `${count} ${unit}`)
    .join(" ");
}

/** A number with a fixed number of decimals, or a dash. */
export function num(value, decimals = 0) {
  return value === null || value === undefined || Number.isNaN(value) ? "—" : Number(value).toFixed(decimals);
}

/** A byte count in KB/MB/GB. */
export function bytes(value) {
  if (value === null || value === undefined) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let size = value;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(unit ? 1 : 0)} ${units[unit]}`;
}

/** A badge that says a state in words, not a yes or a no: "not called yet", "no sensor". */
export function neutralBadge(text) {
  return el("span", { class: "badge badge-neutral" }, text);
}

/** A yes/no badge that does not rely on colour alone. */
export function badge(ok, yes = "ok", no = "down") {
  return el("span", { class: ["badge", ok ? "badge-ok" : "badge-bad"] }, ok ? `✓ ${yes}` : `✗ ${no}`);
}

/** Say something to screen-reader users (and show it briefly) without moving focus. */
export function announce(message) {
  const region = document.getElementById("status");
  if (!region) return;
  region.textContent = message;
}

/**
 * Move the focus to the page's <h1> (focusable by script only), so that a screen reader reads
 * where the user is after a new page or after the control they pressed was redrawn away.
 */
export function focusHeading(container) {
  const heading = container.querySelector("h1");
  if (!heading) return;
  heading.tabIndex = -1;
  heading.focus();
}

/** Show an error in the alert region; it stays until dismissed or the page changes. */
export function showError(message) {
  const region = document.getElementById("errors");
  if (!region) return;
  region.append(
    el(
      "div",
      { class: "error" },
      el("span", null, message),
      el("button", { type: "button", class: "link", onclick: (event) => event.currentTarget.parentElement.remove() }, "Dismiss"),
    ),
  );
}

/** Remove every shown error (on navigation). */
export function clearErrors() {
  document.getElementById("errors")?.replaceChildren();
}

/**
 * A modal <dialog> with a form; resolves with the form element when submitted, null when cancelled.
 * The first field has the focus; in a `danger` dialog, Cancel has it (Enter must not destroy).
 * @param {{title: string, body: any[], submit: string, danger?: boolean}} spec
 * @returns {Promise<HTMLFormElement|null>}
 */
export function dialogForm({ title, body, submit, danger = false }) {
  return new Promise((resolve) => {
    const headingId = uid("dialog-title");
    let result = null;
    const form = el(
      "form",
      {
        class: "dialog-form",
        onsubmit: (event) => {
          event.preventDefault();
          if (!form.reportValidity()) return;
          result = form;
          dialog.close();
        },
      },
      el("h2", { id: headingId }, title),
      body,
      el(
        "div",
        { class: "actions" },
        el("button", { type: "submit", class: danger ? "danger" : "primary" }, submit),
        el("button", { type: "button", autofocus: danger, onclick: () => dialog.close() }, "Cancel"),
      ),
    );
    const dialog = el("dialog", { "aria-labelledby": headingId }, form);
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(result);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
