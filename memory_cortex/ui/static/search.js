// #/search: run a query as the chosen user and see how /hybrid-search ranked it: the fused list
// with each hit's FTS part, vector part and final score, the FTS-only and vector-only lists beside
// it, the MATCH expressions that were built, and the time each stage took (after the hits on a phone).

import { api, guarded, latestOnly } from "./api.js";
import { dataTable, descriptionList, el, field, num, replace } from "./dom.js";
import { memoryLink } from "./links.js";

const LAYERS = ["working", "core", "archive"];
// style.css's narrow screen (a phone): there the hits come first, how the query was run after them.
const NARROW = window.matchMedia("(max-width: 760px)");

/** The last search, kept while the page is left and revisited. */
const last = { query: "", limit: "10", layers: [], user: null, result: null };

export async function render(main, context) {
  if (last.user !== context.user) {
    last.user = context.user;
    last.result = null;
  }
  const output = el("div", { class: "search-output", "aria-live": "polite" });
  const nextSignal = latestOnly(context.signal); // a new search aborts the one still running
  const form = searchForm(async () => {
    const result = await api("/search/debug", {
      method: "POST",
      body: {
        query: last.query,
        user_id: context.user,
        limit: Number(last.limit),
        ...(last.layers.length ? { layers: last.layers } : {}),
      },
      signal: nextSignal(),
    });
    last.result = result;
    replace(output, resultView(result));
    arrange(output);
  });
  replace(
    main,
    el("h1", null, "Search debug ", el("span", { class: "subtle" }, `as ${context.user}`)),
    el("p", { class: "hint" }, "The same search as POST /hybrid-search; reads here are not counted as accesses."),
    form,
    output,
  );
  if (last.result) {
    replace(output, resultView(last.result));
    arrange(output);
  }
  // A window resized across the breakpoint, a tablet turned: the order follows, until the page is left.
  NARROW.addEventListener("change", () => arrange(output), { signal: context.signal });
}

/**
 * On a wide screen how the query was run (its MATCH expressions, its stage timings) stands above
 * the hits; on a narrow one the hits come first, or a phone shows a screenful of timing cards
 * before any result. The nodes themselves move (not CSS order), so the keyboard and a screen reader
 * meet them in the order they are seen; the part that holds the focus stays put.
 */
function arrange(output) {
  const how = output.querySelector(":scope > .query-run");
  const hits = output.querySelector(":scope > .hit-lists");
  if (!how || !hits) return;
  const [first, second] = NARROW.matches ? [hits, how] : [how, hits];
  if (output.firstElementChild === first) return;
  if (second.contains(document.activeElement)) output.prepend(first);
  else output.append(second);
}

function searchForm(run) {
  const form = el(
    "form",
    { class: "filters", "aria-label": "Search" },
    el(
      "div",
      { class: "field-grid" },
      field("Query", el("input", { name: "query", type: "search", required: true, value: last.query, class: "wide", spellcheck: "false" })),
      field("Results", el("input", { name: "limit", type: "number", min: 1, max: 200, required: true, value: last.limit, inputmode: "numeric" })),
      el(
        "fieldset",
        { class: "inline" },
        el("legend", null, "Layers"),
        LAYERS.map((layer) =>
          el(
            "label",
            { class: "checkbox" },
            el("input", { type: "checkbox", name: "layers", value: layer, checked: last.layers.includes(layer) }),
            ` ${layer}`,
          ),
        ),
      ),
    ),
    el("p", { class: "hint" }, "No layer ticked: the layers /hybrid-search searches by default."),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, "Search")),
  );
  form.addEventListener(
    "submit",
    guarded(async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      last.query = String(data.get("query")).trim();
      last.limit = String(data.get("limit"));
      last.layers = data.getAll("layers").map(String);
      if (last.query) await run();
    }),
  );
  return form;
}

/** @param {any} result POST /search/debug */
function resultView(result) {
  const score = (value) => num(value, 3);
  const hitLink = (hit) => memoryLink({ id: hit.id, user_id: result.user_id });
  const factCell = (hit) => el("div", { class: "clamp" }, hit.fact);
  const list = (id, title, rows, columns) =>
    el(
      "section",
      { id, class: "hit-list", "aria-labelledby": `${id}-title` },
      el("h2", { id: `${id}-title` }, title),
      dataTable({ caption: `${title}: ${rows.length} hits`, rows, columns, empty: "No hits." }),
    );
  return [
    el(
      "section",
      { class: "columns query-run", "aria-label": "How the query was run" },
      el(
        "div",
        null,
        el("h2", null, "Query as built"),
        descriptionList([
          ["FTS MATCH", el("code", { id: "fts-match" }, result.fts_match || "(none)")],
          ["Trigram MATCH", el("code", null, result.fts_trigram_match || "(none)")],
          ["Substrings", result.fts_substrings?.length ? result.fts_substrings.map((text) => el("code", { class: "chip" }, text)) : null],
          ["Vector used", result.vector_used ? "yes" : "no (FTS only)"],
          ["Weights", `FTS ${result.fts_weight} · vector ${result.vector_weight}`],
          ["Ranking", result.ranking_enabled ? "importance/recency re-ranking on" : "off (score = relevance)"],
          [
            "Similarity floor",
            `${result.min_similarity}: a hit only the vector side found, with a cosine to the query below it, is left out of /hybrid-search and /context (shown here, marked)`,
          ],
        ]),
      ),
      el("div", null, el("h2", null, "Timings"), timingsTable(result.timings_ms ?? {})),
    ),
    el(
      "div",
      { class: "hit-lists" },
      list("fused", "Fused (as /hybrid-search)", result.fused, [
        { label: "Rank", class: "num", cell: (hit) => hit.rank },
        { label: "ID", class: "num", cell: hitLink },
        { label: "Fact", class: "fact", cell: factCell },
        { label: "Source", cell: (hit) => hit.source },
        { label: "FTS", class: "num", cell: (hit) => score(hit.fts_score) },
        { label: "Vector", class: "num", cell: (hit) => score(hit.vector_score) },
        { label: "Factors", cell: factorsCell },
        { label: "Relevance", class: "num", cell: (hit) => score(hit.relevance) },
        { label: "Score", class: "num", cell: (hit) => score(hit.score) },
        { label: "Layer", cell: (hit) => hit.layer },
        { label: "Cosine as asked", class: "num", cell: (hit) => (hit.query_cosine == null ? "—" : score(hit.query_cosine)) },
        { label: "In /hybrid-search", cell: (hit) => (hit.below_floor ? "no: below the floor" : "yes") },
      ]),
      list("fts-only", "FTS only", result.fts_only, [
        { label: "Rank", class: "num", cell: (hit) => hit.rank },
        { label: "ID", class: "num", cell: hitLink },
        { label: "Fact", class: "fact", cell: factCell },
        { label: "FTS", class: "num", cell: (hit) => score(hit.fts_score) },
      ]),
      list("vector-only", "Vector only", result.vector_only, [
        { label: "Rank", class: "num", cell: (hit) => hit.rank },
        { label: "ID", class: "num", cell: hitLink },
        { label: "Fact", class: "fact", cell: factCell },
        { label: "Vector", class: "num", cell: (hit) => score(hit.vector_score) },
      ]),
    ),
  ];
}

/**
 * What each stage did to a hit's score: "time ×1.25 · subject ×1.3 · +0.041": relevance is
 * (FTS·weight + vector·weight) × these factors + the bonus, and score is relevance × ranking.
 */
function factorsCell(hit) {
  const parts = Object.entries(hit.factors ?? {}).map(([name, value]) => `${name.replaceAll("_", " ")} ×${num(value, 3)}`);
  if (hit.bonus) parts.push(`+${num(hit.bonus, 3)} session`);
  return parts.length ? parts.join(" · ") : "—";
}

/** {hybrid: {fts_and_embed: 1.2, …}, fts: {…}, vector: {…}}: a row per stage, a column per search. */
function timingsTable(timings) {
  const searches = Object.keys(timings);
  const stages = [...new Set(searches.flatMap((search) => Object.keys(timings[search] ?? {})))];
  // "total" last, whatever order the stages came in.
  stages.sort((a, b) => (a === "total") - (b === "total"));
  return dataTable({
    caption: "Time per stage (ms)",
    rows: stages,
    empty: "No timings.",
    rowClass: (stage) => (stage === "total" ? "total" : undefined),
    columns: [
      { label: "Stage", cell: (stage) => stage.replaceAll("_", " ") },
      ...searches.map((search) => ({
        label: search,
        class: "num",
        cell: (stage) => (typeof timings[search]?.[stage] === "number" ? num(timings[search][stage], 2) : "—"),
      })),
    ],
  });
}
