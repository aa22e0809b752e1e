// #/system: the health of the embedder, the LLM and the sensors; memory counts per layer; search
// latency percentiles; charts of GPU load, VRAM and temperature over the last hours
// (GET /system/history); and the effective configuration, secrets masked (GET /config).

import { api, guarded, latestOnly } from "./api.js";
import { badge, bytes, dataTable, descriptionList, duration, el, field, neutralBadge, num, parseTime, replace, select, time } from "./dom.js";
import { lineChart } from "./charts.js";

const WINDOWS = [
  [60, "Last hour"], [180, "Last 3 hours"], [360, "Last 6 hours"], [720, "Last 12 hours"],
  [1440, "Last 24 hours"], [4320, "Last 3 days"], [10080, "Last 7 days"],
];
const REFRESH_MS = 30_000;

/** The chosen chart window in minutes, kept across visits. */
let minutes = 180;

/**
 * The windows worth offering: those the poller's ring buffer (hardware.chart_hours) can fill, and
 * the whole buffer when no preset matches it.
 */
function chartWindows(chartHours) {
  const kept = Math.round(chartHours * 60);
  const windows = WINDOWS.filter(([window]) => window <= kept);
  if (kept > 0 && !windows.some(([window]) => window === kept)) windows.push([kept, `All kept (${num(chartHours, chartHours % 1 ? 1 : 0)} h)`]);
  return windows;
}

export async function render(main, context) {
  const overview = el("div", { class: "block" });
  const charts = el("div", { class: "charts" });
  const config = el("div", { class: "block" });
  const chartsNote = el("p", { class: "hint" });
  const windowField = el("form", { class: "inline-form", onsubmit: (event) => event.preventDefault() });

  // The config first: it says how far back the charts can go and how often the sensors are read.
  const settings = await api("/config", { signal: context.signal });
  replace(config, configView(settings));
  const hardware = settings?.hardware ?? {};
  const windows = chartWindows(hardware.chart_hours ?? 0);
  if (windows.length && !windows.some(([window]) => window === minutes)) {
    minutes = windows.findLast(([window]) => window <= minutes)?.[0] ?? windows[0][0];
  }
  const nextChartsSignal = latestOnly(context.signal); // a new window aborts the older request

  const loadOverview = async () => replace(overview, overviewView(await api("/stats", { signal: context.signal })));
  const loadCharts = async () => {
    if (!windows.length) {
      chartsNote.textContent = "No charts: hardware.chart_hours is 0, so the daemon keeps no history.";
      charts.replaceChildren();
      return;
    }
    const history = await api("/system/history", { query: { minutes }, signal: nextChartsSignal() });
    const count = history.points?.length ?? 0;
    const interval = hardware.interval_s ?? history.interval_s;
    const every = interval < 10 ? num(interval, 1) : num(interval, 0);
    const hasGpu = (history.points ?? []).some((point) => point.gpu_load_percent !== null || point.vram_used_mb !== null);
    chartsNote.textContent = count
      ? `${count} samples, one every ${every} s (longer while the sensors fail).${hasGpu ? "" : " No GPU sensor has answered: only the host's charts are drawn."}`
      : "No samples yet: the sensors are off or have not answered.";
    replace(charts, chartsView(history, hasGpu));
  };
  if (windows.length) {
    const windowSelect = select("minutes", windows.map(([window, label]) => [String(window), label]), String(minutes));
    windowSelect.addEventListener("change", guarded(() => {
      minutes = Number(windowSelect.value);
      return loadCharts();
    }));
    replace(windowField, field("Window", windowSelect));
  }
  const refresh = el("button", { type: "button", onclick: guarded(() => Promise.all([loadOverview(), loadCharts()])) }, "Refresh");

  replace(
    main,
    el("div", { class: "title-row" }, el("h1", null, "System"), refresh),
    overview,
    el(
      "section",
      { "aria-labelledby": "charts-title", class: "block" },
      el("div", { class: "title-row" }, el("h2", { id: "charts-title" }, "Hardware over time"), windowField),
      chartsNote,
      charts,
    ),
    el("section", { "aria-labelledby": "config-title", class: "block" }, el("h2", { id: "config-title" }, "Configuration"), config),
  );
  await Promise.all([loadOverview(), loadCharts()]);

  // Kept fresh while the page is open; the router calls the cleanup when the page is left.
  const timer = window.setInterval(guarded(() => Promise.all([loadOverview(), loadCharts()])), REFRESH_MS);
  return () => window.clearInterval(timer);
}

/** @param {any} stats GET /stats */
function overviewView(stats) {
  const latency = stats.search_latency ?? {};
  const layers = stats.per_layer ?? {};
  const hardware = stats.hardware ?? {};
  const gpu = hardware.gpu;
  const card = (title, ...content) => el("section", { class: "card", "aria-label": title }, el("h2", null, title), content);
  return el(
    "div",
    { class: "cards" },
    card(
      "Embedder",
      embedderBadge(stats.embedder),
      descriptionList([
        ["Backend", stats.embedder?.backend],
        ["Model", stats.embedder?.model],
        ["Dimensions", stats.embedder?.dim === null ? null : String(stats.embedder?.dim)],
        ["Last error", stats.embedder?.last_error],
      ]),
    ),
    card(
      "LLM",
      llmBadge(stats.llm),
      descriptionList([
        ["Backend", stats.llm?.backend],
        ["Model", stats.llm?.model],
        ["Last answer", stats.llm?.last_ok_at ? [time(stats.llm.last_ok_at), ` in ${duration((stats.llm.last_latency_s ?? 0) * 1000)}`] : null],
        ["Last error", stats.llm?.last_error ? [stats.llm.last_error, stats.llm.last_error_at ? [" (", time(stats.llm.last_error_at), ")"] : null] : null],
      ]),
    ),
    card(
      "Memories",
      dataTable({
        caption: "Live memories per layer",
        rows: ["working", "core", "archive"].map((layer) => ({ layer, count: layers[layer] })),
        columns: [
          { label: "Layer", cell: (row) => row.layer },
          { label: "Live", class: "num", cell: (row) => num(row.count) },
        ],
      }),
      descriptionList([
        ["Live", num(stats.live_memories)],
        ["Superseded", num(stats.superseded)],
        ["Embedded", num(stats.embedded)],
        ["Not embedded", num(stats.unembedded)],
        ["Stale vectors", num(stats.stale_embeddings)],
        ["Database", bytes(stats.db_bytes)],
      ]),
    ),
    card(
      "Disk",
      storageBadge(stats.storage),
      descriptionList([
        ["Free beside the database", stats.storage?.free_bytes === null || stats.storage?.free_bytes === undefined ? null : bytes(stats.storage.free_bytes)],
        ["Full since", stats.storage?.full ? time(stats.storage.full_since) : null],
        ["Writes refused", stats.storage?.refused_writes ? num(stats.storage.refused_writes) : null],
      ]),
    ),
    card(
      "Search latency",
      descriptionList([
        ["p50", latency.p50_ms === null || latency.p50_ms === undefined ? null : `${num(latency.p50_ms, 1)} ms`],
        ["p95", latency.p95_ms === null || latency.p95_ms === undefined ? null : `${num(latency.p95_ms, 1)} ms`],
        ["p99", latency.p99_ms === null || latency.p99_ms === undefined ? null : `${num(latency.p99_ms, 1)} ms`],
        ["Samples", num(latency.samples)],
      ]),
      el("p", { class: "hint" }, "Over the last 1,000 /hybrid-search calls."),
    ),
    card(
      "Sensors",
      sensorBadge(hardware),
      noSensorHelp(hardware),
      descriptionList([
        ["Source", hardware.source],
        ["GPU", gpu?.name],
        ["Load", gpu ? `${num(gpu.load_percent)} %` : null],
        ["VRAM", gpu ? `${num(gpu.vram_used_mb)} / ${num(gpu.vram_total_mb)} MB` : null],
        ["Temperature", gpu ? `${num(gpu.core_temp_c)} °C` : null],
        ["Read at", time(hardware.gpu_read_at)],
        [hardware.gpu_read_at ? "Stale because" : "Last attempt", hardware.stale ? hardware.stale_reason : null],
      ]),
    ),
    card(
      "Ingestion",
      descriptionList([
        ["Pending", num(stats.ingest?.pending)],
        ["Running", num(stats.ingest?.running)],
        ["Failed", num(stats.ingest?.failed)],
        ["Done", num(stats.ingest?.done)],
        ["Last job took", stats.ingest?.last_latency_ms === null || stats.ingest?.last_latency_ms === undefined ? null : duration(stats.ingest.last_latency_ms)],
        ["Up for", stats.uptime_s === undefined ? null : duration(stats.uptime_s * 1000)],
      ]),
    ),
  );
}

/**
 * The LLM's state from its last real call: a success long ago, or a start-up probe, is not "ok"
 * after a call that got no reply.
 * @param {any} llm /stats llm
 */
export function llmBadge(llm) {
  if (!llm) return neutralBadge("unknown");
  if (llm.backend === "rules") return neutralBadge("rules only, no model");
  if (llm.last_call === "failed") return badge(false, "", "last call failed");
  if (llm.last_call === "ok") return badge(true, "last call answered");
  if (llm.last_error) return badge(false, "", "not reachable");
  return neutralBadge(llm.ok ? "reachable, not called yet" : "not called yet");
}

/** @param {any} storage /stats storage */
export function storageBadge(storage) {
  if (!storage) return neutralBadge("unknown");
  return storage.full ? badge(false, "", "full: writes refused, reads work") : badge(true, "writes accepted");
}

/** @param {any} embedder /stats embedder */
export function embedderBadge(embedder) {
  if (!embedder) return neutralBadge("unknown");
  return embedder.ok ? badge(true, "answering") : badge(false, "", embedder.last_error ? "failing: search is text-only" : "down");
}

/** Red only for a sensor that answered before and stopped: no sensor at all is a setting, not a fault. */
function sensorBadge(hardware) {
  if (!hardware.enabled) return neutralBadge("off");
  if (!hardware.gpu_read_at && hardware.stale) return neutralBadge("no GPU sensor");
  return badge(!hardware.stale, "fresh", "stale");
}

/** What to set when no GPU sensor has ever answered (most machines have no LibreHardwareMonitor). */
function noSensorHelp(hardware) {
  if (!hardware.enabled || hardware.gpu_read_at || !hardware.stale) return null;
  return el(
    "p",
    { class: "hint sensor-help" },
    `No GPU sensor configured or answering${hardware.endpoint ? ` at ${hardware.endpoint}` : ""}. `,
    "For GPU load, VRAM and temperature, run LibreHardwareMonitor with its web server and set ",
    el("code", null, "hardware.lhm_host"),
    " and ",
    el("code", null, "hardware.lhm_port"),
    " (on Linux with an AMD GPU: ",
    el("code", null, "hardware.use_pyamdgpuinfo"),
    "). ",
    el("code", null, "hardware.enabled: false"),
    " stops polling; extraction then never waits for the GPU.",
  );
}

/** @param {{interval_s: number, points: any[]}} history GET /system/history */
function chartsView(history, hasGpu) {
  const points = history.points ?? [];
  const times = points.map((point) => parseTime(point.t));
  const values = (key) => points.map((point) => point[key] ?? null);
  if (!hasGpu) {
    return [
      lineChart({ title: "CPU load", unit: "%", times, min: 0, max: 100, series: [{ name: "CPU", values: values("cpu_percent") }] }),
      lineChart({
        title: "Host memory",
        unit: "MB",
        times,
        min: 0,
        series: [
          { name: "RAM used", values: values("ram_used_mb") },
          { name: "Daemon RSS", values: values("process_rss_mb") },
        ],
      }),
    ];
  }
  return [
    lineChart({
      title: "GPU and CPU load",
      unit: "%",
      times,
      min: 0,
      max: 100,
      series: [
        { name: "GPU load", values: values("gpu_load_percent") },
        { name: "CPU", values: values("cpu_percent") },
      ],
    }),
    lineChart({
      title: "VRAM",
      unit: "MB",
      times,
      min: 0,
      series: [
        { name: "Used", values: values("vram_used_mb") },
        { name: "Total", values: values("vram_total_mb") },
      ],
    }),
    lineChart({
      title: "GPU temperature",
      unit: "°C",
      times,
      series: [{ name: "Core", values: values("gpu_temp_c") }],
    }),
    lineChart({
      title: "Host memory",
      unit: "MB",
      times,
      min: 0,
      series: [
        { name: "RAM used", values: values("ram_used_mb") },
        { name: "Daemon RSS", values: values("process_rss_mb") },
      ],
    }),
  ];
}

/** The effective config: one collapsible table per section (secrets arrive masked). */
function configView(config) {
  const sections = Object.entries(config ?? {});
  if (!sections.length) return el("p", { class: "empty" }, "No configuration returned.");
  return sections.map(([name, section]) =>
    el(
      "details",
      { class: "config-section" },
      el("summary", null, name),
      section !== null && typeof section === "object" && !Array.isArray(section)
        ? dataTable({
            caption: `${name} settings`,
            rows: Object.entries(section),
            columns: [
              { label: "Setting", cell: ([key]) => el("code", null, `${name}.${key}`) },
              { label: "Value", class: "config-value", cell: ([, value]) => el("code", null, JSON.stringify(value)) },
            ],
          })
        : el("code", null, JSON.stringify(section)),
    ),
  );
}
