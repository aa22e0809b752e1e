// #/ and #/overview, the landing page: one user's memories over time (by layer, by kind), facts per
// day by extraction method, the extraction backlog and latency, search latency over time, the
// categories and topics, and what each lifecycle run moved (GET /stats/overview), with the state
// of the models and the queue at a glance (GET /stats).

import { api, guarded, latestOnly } from "./api.js";
import { barChart, countText, dayLabel, lineChart, rankChart } from "./charts.js";
import { duration, el, field, parseTime, replace, select } from "./dom.js";
import { embedderBadge, llmBadge } from "./system.js";

const WINDOWS = [["7", "Last 7 days"], ["30", "Last 30 days"], ["90", "Last 90 days"], ["365", "Last year"]];
const METHOD_NAMES = {
  llm: "LLM",
  "llm+rules": "LLM + rules",
  rules: "rules",
  summary: "lifecycle summary",
  direct: "written directly",
};
const REFRESH_MS = 60_000;

/** The chosen window in days, kept across visits. */
let days = "30";

export async function render(main, context) {
  const tiles = el("div", { class: "tiles", role: "list", "aria-label": "At a glance" });
  const charts = el("div", { class: "charts overview-charts" });
  const nextSignal = latestOnly(context.signal);
  const windowSelect = select("days", WINDOWS, days);
  const load = async () => {
    const signal = nextSignal();
    const [overview, stats] = await Promise.all([
      api("/stats/overview", { query: { user_id: context.user, days }, signal }),
      api("/stats", { signal }),
    ]);
    replace(tiles, tileViews(overview, stats));
    replace(charts, chartViews(overview));
  };
  windowSelect.addEventListener("change", guarded(() => {
    days = windowSelect.value;
    return load();
  }));
  replace(
    main,
    el(
      "div",
      { class: "title-row" },
      el("h1", null, "Overview ", el("span", { class: "subtle" }, `of ${context.user}`)),
      el(
        "div",
        { class: "title-actions" },
        el("form", { class: "inline-form", onsubmit: (event) => event.preventDefault() }, field("Window", windowSelect)),
        el("button", { type: "button", onclick: guarded(load) }, "Refresh"),
      ),
    ),
    tiles,
    charts,
    el("p", { class: "hint" }, "Days are UTC days. Memories are counted in the layer each is in now; extraction, search and lifecycle numbers are the whole daemon's (every user)."),
  );
  await load();
  const timer = window.setInterval(guarded(load), REFRESH_MS);
  return () => window.clearInterval(timer);
}

function tile(label, value, detail) {
  return el("div", { class: "tile", role: "listitem" }, el("span", { class: "tile-label" }, label), el("span", { class: "tile-value" }, value), detail ? el("span", { class: "tile-detail" }, detail) : null);
}

function tileViews(overview, stats) {
  const today = overview.days.at(-1);
  const kinds = today?.live_by_kind ?? {};
  const lastLatency = overview.days.findLast((day) => day.extraction_p95_ms !== null);
  const searches = overview.search.slice(-60);
  const searchP95 = searches.length ? Math.max(...searches.map((point) => point.p95_ms)) : null;
  return [
    tile("Facts", countText(kinds.fact ?? 0), `${countText(kinds.summary ?? 0)} summaries`),
    tile("Conversation turns", countText(kinds.turn ?? 0), "kept as said"),
    tile("Waiting for extraction", countText(overview.backlog_now), `${countText(stats.ingest?.failed ?? 0)} failed`),
    tile("Extraction p95", lastLatency ? duration(lastLatency.extraction_p95_ms) : "—", lastLatency ? `on ${dayLabel(parseTime(lastLatency.day))}` : "no job finished"),
    tile("Search p95", searchP95 === null ? "—" : duration(searchP95), searches.length ? "worst minute, last hour of searches" : "no search since start"),
    tile("LLM", llmBadge(stats.llm), stats.llm?.model),
    tile("Embedder", embedderBadge(stats.embedder), stats.embedder?.model),
  ];
}

function chartViews(overview) {
  const times = overview.days.map((day) => parseTime(day.day));
  const labels = times.map(dayLabel);
  const perDay = (pick) => overview.days.map(pick);
  const runs = overview.lifecycle_runs;
  const moveKinds = [...new Set(runs.flatMap((run) => Object.keys(run.moves)))].filter((kind) => runs.some((run) => run.moves[kind] > 0));
  const searchTimes = overview.search.map((point) => parseTime(point.t));
  const keptHours = Math.round(overview.search_kept_minutes / 60);
  return [
    lineChart({
      title: "Memories by layer",
      times,
      days: true,
      min: 0,
      series: ["working", "core", "archive"].map((layer) => ({ name: layer, values: perDay((day) => day.live_by_layer[layer] ?? 0) })),
    }),
    lineChart({
      title: "Memories by kind",
      times,
      days: true,
      min: 0,
      series: [["fact", "facts"], ["turn", "turns"], ["summary", "summaries"]].map(([kind, name]) => ({ name, values: perDay((day) => day.live_by_kind[kind] ?? 0) })),
    }),
    barChart({
      title: "Facts per day, by extraction method",
      labels,
      series: overview.methods.map((method) => ({ name: METHOD_NAMES[method] ?? method, values: perDay((day) => day.facts_by_method[method] ?? 0) })),
    }),
    barChart({
      title: "Extraction jobs per day",
      labels,
      series: [
        { name: "done", values: perDay((day) => day.jobs_done) },
        { name: "failed", values: perDay((day) => day.jobs_failed) },
        { name: "still waiting", values: perDay((day) => Math.max(0, day.jobs_received - day.jobs_done - day.jobs_failed)) },
      ],
    }),
    lineChart({
      title: "Extraction backlog",
      times,
      days: true,
      min: 0,
      series: [{ name: "jobs waiting at the day's end", values: perDay((day) => day.backlog) }],
    }),
    lineChart({
      title: "Extraction latency",
      times,
      days: true,
      format: duration,
      series: [
        { name: "p50", values: perDay((day) => day.extraction_p50_ms) },
        { name: "p95", values: perDay((day) => day.extraction_p95_ms) },
      ],
    }),
    lineChart({
      title: "Search latency per minute",
      times: searchTimes,
      format: duration,
      series: [
        { name: "p50", values: overview.search.map((point) => point.p50_ms) },
        { name: "p95", values: overview.search.map((point) => point.p95_ms) },
      ],
      note: `Searches (/hybrid-search and MCP search_memory), kept in memory for ${keptHours} h: the chart starts empty again when the daemon restarts.`,
    }),
    barChart({
      title: "Lifecycle moves per run",
      labels: runs.map((run) => `#${run.run_id} ${dayLabel(parseTime(run.started_at))}`),
      series: moveKinds.map((kind) => ({ name: kind, values: runs.map((run) => run.moves[kind] ?? 0) })),
      note: runs.length
        ? moveKinds.length ? null : `The last ${runs.length === 1 ? "run" : `${runs.length} runs`} moved nothing (a young store: nothing old or unread enough yet).`
        : "No lifecycle run yet: it runs every night (lifecycle.daily_at), or from the Lifecycle page.",
    }),
    rankChart({ title: "Categories", items: overview.categories.map((item) => ({ name: item.name, count: item.count })), empty: "No fact yet" }),
    rankChart({ title: "Topics", items: overview.topics.map((item) => ({ name: item.name || "(no topic)", count: item.count })), empty: "No fact yet" }),
  ];
}
