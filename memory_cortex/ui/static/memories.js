// #/memories: one user's memories with filters and keyset paging; #/memories/{id}: one memory,
// where it came from, how often it was read, its supersession/merge chain, and the edits.

import { api, ApiError, guarded, isSuperseded, latestOnly } from "./api.js";
import { announce, dataTable, descriptionList, dialogForm, el, field, focusHeading, replace, select, time } from "./dom.js";
import { memoryLink, sessionLink } from "./links.js";

const LAYERS = ["working", "core", "archive"];
const CATEGORIES = [
  "identity", "preference", "decision", "fact", "insight", "todo", "correction", "skill",
  "relationship", "project_state", "history_summary", "session_summary",
];
const PAGE_SIZES = ["10", "25", "50", "100", "200"];
const EMPTY_FILTERS = {
  q: "", topic: "", layer: "", kinds: "", category: "", min_importance: "", max_importance: "",
  since: "", until: "", include_superseded: false, limit: "50",
  agent_id: "", visibility: "", source_channel: "",
};

/**
 * The list's state outlives a visit to a memory's page (back to the list = same filters, same page).
 * `cursors` holds the cursor of every page walked so far (null: the newest page); the last one is
 * the page shown. A cursor is the pair the API hands back (next_before_id, next_before_created_at):
 * the next page comes even when the row it names was deleted in between. Keyset paging: a page costs the same at row 100,000 as at row 1.
 */
const list = { user: null, filters: { ...EMPTY_FILTERS }, cursors: [null], filtersOpen: false };

export async function render(main, context) {
  const id = context.path[1];
  if (id !== undefined) return renderDetail(main, context, id);
  return renderList(main, context);
}

// -- the list ------------------------------------------------------------------------------
async function renderList(main, context) {
  if (list.user !== context.user) {
    list.user = context.user;
    list.cursors = [null];
  }
  const results = el("div", { class: "results", "aria-live": "polite", "aria-busy": "true" });
  const nextSignal = latestOnly(context.signal);
  const pager = buildPager(() => loadPage(results, pager, context, nextSignal));
  const form = filterForm(() => {
    list.cursors = [null];
    toggle.textContent = filtersLabel();
    return loadPage(results, pager, context, nextSignal);
  });
  const toggle = filtersToggle(form);
  replace(
    main,
    el("div", { class: "title-row" }, el("h1", null, "Memories ", el("span", { class: "subtle" }, `of ${context.user}`)), toggle),
    form,
    el("p", { class: "subtle", id: "list-order" }, "Newest first, by the date each memory was created (ties: the later stored first)."),
    results,
    pager.node,
  );
  await loadPage(results, pager, context, nextSignal);
}

/**
 * On a narrow screen (style.css, up to 760px: a phone) the filters fold behind this button, so the
 * list is on the first screen; it counts the filters in force. On a wider screen it is not shown
 * and the form always is.
 */
function filtersToggle(form) {
  const toggle = el(
    "button",
    { type: "button", class: "filters-toggle", "aria-controls": form.id, "aria-expanded": String(list.filtersOpen) },
    filtersLabel(),
  );
  toggle.addEventListener("click", () => {
    list.filtersOpen = !list.filtersOpen; // kept while a memory is visited, like the filters
    toggle.setAttribute("aria-expanded", String(list.filtersOpen));
    form.classList.toggle("open", list.filtersOpen);
  });
  form.classList.toggle("open", list.filtersOpen);
  return toggle;
}

/** "Filters", or "Filters (2 active)": the rows per page are no filter. */
function filtersLabel() {
  const active = Object.keys(EMPTY_FILTERS).filter((key) => key !== "limit" && String(list.filters[key]).trim() !== String(EMPTY_FILTERS[key]).trim()).length;
  return active ? `Filters (${active} active)` : "Filters";
}

function filterForm(apply) {
  const f = list.filters;
  const input = (name, attrs = {}) => el("input", { name, value: f[name], ...attrs });
  const form = el(
    "form",
    { class: "filters foldable", id: "memory-filters", "aria-label": "Filter memories" },
    el(
      "div",
      { class: "field-grid" },
      field("Text contains", input("q", { type: "search", spellcheck: "false" }), "In the topic or the fact, any case"),
      field("Topic", input("topic", { type: "text" })),
      field("Layer", select("layer", [["", "Any layer"], ...LAYERS], f.layer)),
      field("Kind", select("kinds", [["", "Facts and turns"], ["fact", "Facts"], ["turn", "Conversation turns"]], f.kinds)),
      field("Category", select("category", [["", "Any category"], ...CATEGORIES], f.category)),
      field("Seen by agent", input("agent_id", { type: "text", spellcheck: "false" }), "Its own and every agent's memories"),
      field("Visibility", select("visibility", [["", "Private and shared"], ["private", "Private"], ["shared", "Shared"]], f.visibility)),
      field("Channel", input("source_channel", { type: "text", spellcheck: "false" }), "The conversation it came from"),
      field("Importance from", input("min_importance", { type: "number", min: 1, max: 10, inputmode: "numeric" })),
      field("Importance to", input("max_importance", { type: "number", min: 1, max: 10, inputmode: "numeric" })),
      field("Created from", input("since", { type: "date" })),
      field("Created until", input("until", { type: "date" })),
      field("Rows per page", select("limit", PAGE_SIZES, f.limit)),
      el(
        "div",
        { class: "field checkbox" },
        el("input", { type: "checkbox", name: "include_superseded", id: "include-superseded", checked: f.include_superseded }),
        el("label", { for: "include-superseded" }, "Show superseded"),
      ),
    ),
    el(
      "div",
      { class: "actions" },
      el("button", { type: "submit", class: "primary" }, "Apply filters"),
      el("button", { type: "reset" }, "Clear"),
    ),
  );
  form.addEventListener(
    "submit",
    guarded(async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      for (const key of Object.keys(EMPTY_FILTERS)) {
        list.filters[key] = key === "include_superseded" ? data.has(key) : String(data.get(key) ?? "").trim();
      }
      await apply();
    }),
  );
  form.addEventListener(
    "reset",
    guarded(async (event) => {
      event.preventDefault();
      list.filters = { ...EMPTY_FILTERS };
      for (const element of form.elements) {
        if (element.name in EMPTY_FILTERS) {
          if (element.type === "checkbox") element.checked = false;
          else element.value = EMPTY_FILTERS[element.name];
        }
      }
      await apply();
    }),
  );
  return form;
}

/**
 * Newest / Newer / Older buttons that stay in place (keyboard focus survives a page change). While
 * a page loads they ignore clicks (aria-disabled, not disabled: that would drop the focus), so a
 * double click on "Older" moves one page, not two.
 */
function buildPager(reload) {
  const position = el("span", { class: "page-position" });
  const newest = el("button", { type: "button" }, "Newest");
  const newer = el("button", { type: "button" }, "← Newer");
  const older = el("button", { type: "button" }, "Older →");
  const onClick = (button, move) =>
    button.addEventListener("click", guarded(() => {
      if (pager.loading) return undefined;
      move();
      return reload();
    }));
  onClick(newest, () => {
    list.cursors = [null];
  });
  onClick(newer, () => {
    if (list.cursors.length > 1) list.cursors.pop();
  });
  onClick(older, () => {
    if (pager.next !== null && pager.next.id !== list.cursors.at(-1)?.id) list.cursors.push(pager.next);
  });
  const buttons = [newest, newer, older];
  const pager = {
    next: null,
    loading: false,
    node: el("nav", { class: "pager", "aria-label": "Pages" }, newest, newer, position, older),
    setLoading(loading) {
      pager.loading = loading;
      for (const button of buttons) {
        if (loading) button.setAttribute("aria-disabled", "true");
        else button.removeAttribute("aria-disabled");
      }
    },
    update(next, shown) {
      pager.next = next;
      newest.disabled = newer.disabled = list.cursors.length <= 1;
      older.disabled = next === null;
      position.textContent = `Page ${list.cursors.length} · ${shown} shown`;
    },
  };
  return pager;
}

/**
 * Load the page `list` points at. Each load aborts the one before it (`nextSignal`), so the table
 * always shows the answer to the last request, whatever order the answers arrive in.
 */
async function loadPage(results, pager, context, nextSignal) {
  const f = list.filters;
  const signal = nextSignal();
  results.setAttribute("aria-busy", "true");
  pager.setLoading(true);
  let body;
  try {
    body = await api("/memories", {
      query: {
        user_id: context.user,
        q: f.q,
        topic: f.topic,
        layer: f.layer,
        kinds: f.kinds,
        category: f.category,
        agent_id: f.agent_id,
        visibility: f.visibility,
        source_channel: f.source_channel,
        min_importance: f.min_importance,
        max_importance: f.max_importance,
        since: localDayStart(f.since),
        until: localDayEnd(f.until),
        include_superseded: f.include_superseded ? "true" : "",
        limit: f.limit,
        order: "created",
        before_id: list.cursors.at(-1)?.id,
        before_created_at: list.cursors.at(-1)?.createdAt,
      },
      signal,
    });
  } catch (error) {
    if (isSuperseded(error, context.signal)) return; // a newer load owns the table now
    if (!signal.aborted) {
      results.setAttribute("aria-busy", "false");
      pager.setLoading(false);
    }
    throw error;
  }
  replace(results, memoryTable(body.memories, `Memories of ${context.user}, page ${list.cursors.length}`));
  results.setAttribute("aria-busy", "false");
  pager.setLoading(false);
  const next = body.next_before_id == null ? null : { id: body.next_before_id, createdAt: body.next_before_created_at };
  pager.update(next, body.memories.length);
}

/** "2026-03-04" (a local date from <input type=date>) → the UTC instant its local day starts. */
function localDayStart(date) {
  if (!date) return "";
  const [year, month, day] = date.split("-").map(Number);
  return new Date(year, month - 1, day).toISOString();
}

/** …and the last millisecond of that local day (the filter is inclusive). */
function localDayEnd(date) {
  if (!date) return "";
  const [year, month, day] = date.split("-").map(Number);
  return new Date(year, month - 1, day, 23, 59, 59, 999).toISOString();
}

function memoryTable(memories, caption) {
  return dataTable({
    caption,
    rows: memories,
    empty: "No memory matches these filters.",
    rowClass: (memory) => (memory.superseded_by ? "superseded" : undefined),
    columns: [
      { label: "ID", class: "num", cell: (memory) => memoryLink(memory) },
      { label: "Created", sort: "descending", cell: (memory) => time(memory.created_at) },
      { label: "Topic", cell: (memory) => memory.topic || "—" },
      {
        label: "Fact",
        class: "fact",
        cell: (memory) => [
          el("div", { class: "clamp" }, memory.fact),
          memory.superseded_by ? el("small", { class: "subtle" }, `superseded by #${memory.superseded_by}`) : null,
        ],
      },
      {
        label: "Kind",
        cell: (memory) =>
          memory.kind === "turn"
            ? ["turn · ", memory.source_session ? sessionLink(memory.source_session, memory.user_id) : "no session"]
            : "fact",
      },
      { label: "Layer", cell: (memory) => memory.layer },
      { label: "Category", cell: (memory) => memory.category },
      { label: "Scope", cell: (memory) => scopeText(memory) },
      { label: "Importance", class: "num", cell: (memory) => memory.importance },
      { label: "Reads", class: "num", cell: (memory) => memory.access_count },
    ],
  });
}

// -- one memory ----------------------------------------------------------------------------
/**
 * One memory, as the user in ?user= (links from other pages carry it) or else the picker's user.
 * Every request sends that user_id, so another user's memory is a 404, not a page that shows it.
 */
async function renderDetail(main, context, id) {
  // || not ??: a blank ?user= must not drop the owner check (the API leaves out empty values).
  const user = context.query.get("user") || context.user;
  const load = () => api(`/memories/${encodeURIComponent(id)}/history`, { query: { user_id: user }, signal: context.signal });
  let history;
  try {
    history = await load();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    replace(main, notFoundView(id, user));
    return;
  }
  const reload = async () => {
    draw(await load());
    focusHeading(main); // the buttons pressed are gone: the heading is where reading resumes
  };
  const draw = (shown) => replace(main, otherUserNote(user, context), detailView(shown, user, reload));
  draw(history);
}

/**
 * The header's picker names whose memories the dashboard shows: a memory of someone else (a link
 * with ?user=) says so, with a button that makes its user the picker's.
 */
function otherUserNote(user, context) {
  if (user === context.user) return null;
  const note = el(
    "div",
    { class: "notice", role: "note", id: "other-user" },
    el("span", null, `This memory belongs to ${user}; the user picker shows ${context.user}. `),
    el("button", { type: "button", onclick: () => {
      context.switchUser(user);
      note.remove();
    } }, `Show ${user}'s memories`),
  );
  return note;
}

function notFoundView(id, user) {
  return [
    el("p", { class: "breadcrumb" }, el("a", { href: "#/memories" }, "← Memories")),
    el("h1", null, "Memory not found"),
    el(
      "p",
      { class: "empty", id: "not-found" },
      `There is no memory #${id} among the memories of ${user}: it belongs to another user, or it was deleted.`,
    ),
  ];
}

/**
 * @param {any} history GET /memories/{id}/history
 * @param {string} user the user the page is scoped to (sent as user_id on every change)
 * @param {() => Promise<void>} reload fetch and draw again after a change, then focus the heading
 */
function detailView(history, user, reload) {
  const memory = history.memory;
  const scope = { user_id: user };
  const patch = async (body, done) => {
    await api(`/memories/${memory.id}`, { method: "PATCH", query: scope, body });
    announce(done);
    await reload();
  };
  const restore = (layer) =>
    el(
      "button",
      { type: "button", onclick: guarded(() => patch({ layer }, `Memory #${memory.id} restored to ${layer}.`)) },
      `Restore to ${layer}`,
    );
  const actions = el(
    "div",
    { class: "actions", role: "group", "aria-label": "Change this memory" },
    el("button", { type: "button", class: "primary", onclick: guarded(() => editMemory(memory, patch)) }, "Edit"),
    memory.superseded_by
      ? el("button", { type: "button", onclick: guarded(() => patch({ superseded_by: null }, `Memory #${memory.id} is live again.`)) }, "Make live again")
      : el("button", { type: "button", onclick: guarded(() => supersedeMemory(memory, patch)) }, "Supersede…"),
    // The API does not say which layer an archived memory came from: the user picks.
    memory.layer === "archive"
      ? [restore("working"), restore("core")]
      : el("button", { type: "button", onclick: guarded(() => patch({ layer: "archive" }, `Memory #${memory.id} archived.`)) }, "Archive"),
    el("button", { type: "button", class: "danger", onclick: guarded(() => deleteMemory(memory, scope)) }, "Delete…"),
  );
  return [
    el("p", { class: "breadcrumb" }, el("a", { href: "#/memories" }, "← Memories")),
    el("h1", null, `Memory #${memory.id}`, memory.superseded_by ? el("span", { class: "badge badge-bad" }, "superseded") : null),
    el("blockquote", { class: "fact-text" }, memory.fact),
    actions,
    el(
      "div",
      { class: "columns" },
      el(
        "section",
        { "aria-labelledby": "memory-about" },
        el("h2", { id: "memory-about" }, "About"),
        descriptionList([
          ["User", memory.user_id],
          ["Kind", memory.kind === "turn" ? "a conversation turn, as said" : "fact"],
          ["Visibility", memory.visibility === "shared" ? "shared: recalled in group sessions too" : "private: recalled one-to-one only"],
          ["Agent", memory.agent_id ?? "every agent"],
          ["Topic", memory.topic],
          ["Category", memory.category],
          ["Importance", String(memory.importance)],
          ["Layer", [memory.layer, memory.layer_since ? [" since ", time(memory.layer_since)] : null]],
          ["Created", time(memory.created_at)],
          ["Updated", time(memory.updated_at)],
          ["Reference", memory.ref],
          [
            "Extracted from",
            memory.derived_from?.length
              ? memory.derived_from.flatMap((turnId, i) => [i ? ", " : "", memoryLink({ id: turnId, user_id: memory.user_id })])
              : null,
          ],
          ["Embedded", memory.embedded ? `yes (${memory.embedding_model})` : "no"],
        ]),
      ),
      el(
        "section",
        { "aria-labelledby": "memory-source" },
        el("h2", { id: "memory-source" }, "Source and reads"),
        descriptionList([
          ["Session", memory.source_session ? sessionLink(memory.source_session, memory.user_id) : null],
          ["Channel", memory.source_channel],
          ["Ingest job", history.ingest_job ? el("a", { href: `#/ingest/${history.ingest_job}` }, `job #${history.ingest_job}`) : null],
          ["Reads", String(memory.access_count)],
          ["Last read", time(memory.last_accessed)],
        ]),
        Object.keys(memory.metadata ?? {}).length
          ? [el("h3", null, "Metadata"), el("pre", { class: "json" }, JSON.stringify(memory.metadata, null, 2))]
          : null,
      ),
    ),
    el(
      "section",
      { "aria-labelledby": "memory-chain" },
      el("h2", { id: "memory-chain" }, "Supersession and merge chain"),
      chainView(history),
    ),
  ];
}

function chainView(history) {
  const relations = [
    ["Replaces (older versions it hid)", history.replaces],
    ["Replaced by (nearest first)", history.replaced_by],
    ["Merged from", history.merged_from],
    ["Merged into", history.merged_into],
    ["Summarises", history.summarises],
    ["Summarised in", history.summary ? [history.summary] : []],
  ].filter(([, rows]) => rows?.length);
  if (!relations.length) return el("p", { class: "empty" }, "Not part of any supersession, merge or summary.");
  return relations.map(([title, rows]) =>
    dataTable({
      caption: title,
      rows,
      columns: [
        { label: "ID", class: "num", cell: (memory) => memoryLink(memory) },
        { label: "Fact", class: "fact", cell: (memory) => el("div", { class: "clamp" }, memory.fact) },
        { label: "Layer", cell: (memory) => memory.layer },
        { label: "Created", cell: (memory) => time(memory.created_at) },
      ],
    }),
  );
}

async function editMemory(memory, patch) {
  const form = await dialogForm({
    title: `Edit memory #${memory.id}`,
    submit: "Save",
    body: [
      field("Fact", el("textarea", { name: "fact", rows: 5, required: true, value: memory.fact })),
      field("Topic", el("input", { name: "topic", type: "text", value: memory.topic })),
      field("Category", el("input", { name: "category", type: "text", required: true, value: memory.category, list: "category-list" })),
      el("datalist", { id: "category-list" }, CATEGORIES.map((category) => el("option", { value: category }))),
      field("Importance", el("input", { name: "importance", type: "number", min: 1, max: 10, required: true, value: String(memory.importance) }), "1 (trivia) … 10 (identity)"),
    ],
  });
  if (!form) return;
  const data = new FormData(form);
  const changes = {};
  const fact = String(data.get("fact"));
  const topic = String(data.get("topic"));
  const category = String(data.get("category")).trim();
  const importance = Number(data.get("importance"));
  if (fact !== memory.fact) changes.fact = fact;
  if (topic !== memory.topic) changes.topic = topic;
  if (category !== memory.category) changes.category = category;
  if (importance !== memory.importance) changes.importance = importance;
  if (!Object.keys(changes).length) {
    announce("Nothing changed.");
    return;
  }
  await patch(changes, `Memory #${memory.id} saved.`);
}

async function supersedeMemory(memory, patch) {
  const form = await dialogForm({
    title: `Supersede memory #${memory.id}`,
    submit: "Supersede",
    body: [
      el("p", null, "The memory stays stored but is hidden from search behind the one that replaces it."),
      field("Replaced by memory ID", el("input", { name: "superseded_by", type: "number", min: 1, required: true, inputmode: "numeric" })),
    ],
  });
  if (!form) return;
  const replacement = Number(new FormData(form).get("superseded_by"));
  await patch({ superseded_by: replacement }, `Memory #${memory.id} is now superseded by #${replacement}.`);
}

async function deleteMemory(memory, scope) {
  const form = await dialogForm({
    title: `Delete memory #${memory.id}?`,
    submit: "Delete for good",
    danger: true,
    body: [
      el("p", null, "This removes the memory, its vector and its search entries. It cannot be undone; archive it to keep it out of the way instead."),
      el("blockquote", { class: "fact-text" }, memory.fact),
    ],
  });
  if (!form) return;
  await api(`/memories/${memory.id}`, { method: "DELETE", query: scope });
  announce(`Memory #${memory.id} deleted.`);
  window.location.hash = "#/memories";
}

/** Who may have it recalled, in a few words: "private · every agent", "shared in g1 · agent work". */
function scopeText(memory) {
  const where = memory.visibility === "shared" ? (memory.source_channel ? `shared in ${memory.source_channel}` : "shared") : "private";
  return `${where} · ${memory.agent_id ? `agent ${memory.agent_id}` : "every agent"}`;
}
