// Small SVG charts, drawn here (no library, nothing the CSP forbids: sizes are SVG attributes, never
// style attributes). Three kinds: lines over time, stacked bars per category (days, runs), and
// horizontal bars (a ranking). Every chart:
// - is drawn at the width it will be shown at (about), so its 12px text stays 12px on a phone;
// - places its axis labels so that none overlaps another (ticks are dropped, never squeezed);
// - says its values in words to a screen reader (<title> and a hidden summary).
// Colours come from style.css (.series-0 … .series-5).

import { el, svg, uid } from "./dom.js";

const HEIGHT = 210;
const MARGIN = { top: 12, right: 84, bottom: 28, left: 66 };
const CHAR_PX = 7; // about one character of 12px label text, to space labels
const LABEL_GAP = 14; // px between two stacked last-value labels
const MAX_WIDTH = 560;

const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const clockSeconds = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const dayMonth = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
const dayMonthUtc = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", timeZone: "UTC" });

/** A count: 7, 1,234, 12.5K. */
export function countText(value) {
  return Math.abs(value) >= 10_000 ? compact.format(value) : Math.round(value).toLocaleString();
}

/** "2026-03-04" (a UTC day from the API) → "4 Mar" / "Mar 4", as the browser's locale writes it. */
export function dayLabel(date) {
  return dayMonthUtc.format(date);
}

/** The width to draw at: the screen's width on a phone, MAX_WIDTH on anything larger. */
function chartWidth() {
  return Math.max(280, Math.min(MAX_WIDTH, window.innerWidth - 48));
}

/** Round numbers for a y axis from 0 (or low) to at least high: 0, 5, 10, 15 / 0, 250, 500… */
function niceTicks(low, high, integer = false, count = 4) {
  const span = high - low || 1;
  const raw = integer ? Math.max(1, span / count) : span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const steps = [1, 2, 2.5, 5, 10].map((f) => f * magnitude).filter((s) => !integer || Number.isInteger(s));
  const step = steps.find((s) => s >= raw) ?? 10 * magnitude;
  const start = Math.floor(low / step) * step;
  const ticks = [];
  for (let value = start; value < high + step * 0.999; value += step) ticks.push(Number(value.toPrecision(12)));
  return ticks;
}

/**
 * Keep the labels (sorted by position) whose boxes do not overlap the last one kept; the first and
 * the last are preferred. Each label: {x, width} (x is its centre after anchoring).
 */
function spaced(labels) {
  if (labels.length <= 1) return labels;
  const kept = [labels[0]];
  const last = labels.at(-1);
  const fits = (a, b) => Math.abs(a.x - b.x) >= (a.width + b.width) / 2 + 8;
  for (const label of labels.slice(1, -1)) {
    if (fits(kept.at(-1), label) && fits(label, last)) kept.push(label);
  }
  if (fits(kept.at(-1), last)) kept.push(last);
  return kept;
}

function figure({ title, series, summary, chart, note }) {
  return el(
    "figure",
    { class: "chart" },
    el(
      "figcaption",
      null,
      el("strong", { class: "chart-title" }, title),
      series.length > 1 || series[0]?.name !== title
        ? el("span", { class: "legend" }, series.map((line, index) => el("span", { class: "legend-item" }, el("span", { class: ["swatch", `series-${index}`] }), line.name)))
        : null,
      el("span", { class: "visually-hidden" }, summary),
    ),
    chart,
    note ? el("p", { class: "hint chart-note" }, note) : null,
  );
}

function emptyChart(title, width, titleId, message = "No data yet") {
  return svg(
    "svg",
    { viewBox: `0 0 ${width} ${HEIGHT / 2}`, width, height: HEIGHT / 2, role: "img", "aria-labelledby": titleId, class: "chart-svg" },
    svg("title", { id: titleId }, `${title}: ${message.toLowerCase()}`),
    svg("text", { x: width / 2, y: HEIGHT / 4, "text-anchor": "middle", class: "chart-empty" }, message),
  );
}

/** The y axis: grid lines and labelled ticks; returns the scale and the nodes. */
function yAxis(low, high, width, format, integer = false) {
  const ticks = niceTicks(low, high, integer);
  const top = ticks.at(-1);
  const bottom = ticks[0];
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const y = (value) => MARGIN.top + (1 - (value - bottom) / (top - bottom || 1)) * plotHeight;
  const nodes = ticks.flatMap((value) => [
    svg("line", { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(value), y2: y(value), class: "chart-grid" }),
    svg("text", { x: MARGIN.left - 6, y: y(value) + 4, "text-anchor": "end", class: "chart-label" }, format(value)),
  ]);
  nodes.push(
    svg("line", { x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + plotHeight, class: "chart-axis" }),
    svg("line", { x1: MARGIN.left, x2: width - MARGIN.right, y1: MARGIN.top + plotHeight, y2: MARGIN.top + plotHeight, class: "chart-axis" }),
  );
  return { y, nodes };
}

/** x-axis labels at the given positions, thinned so that none overlaps another. */
function xLabels(candidates, width) {
  const left = MARGIN.left;
  const right = width - MARGIN.right;
  const labels = candidates.map(({ x, text }) => {
    const labelWidth = text.length * CHAR_PX;
    // Anchored so that it stays inside the plot's width: start at the left edge, end at the right.
    const centre = Math.min(Math.max(x, left + labelWidth / 2), right + MARGIN.right / 2 - labelWidth / 2);
    return { x: centre, width: labelWidth, text };
  });
  return spaced(labels).map((label) => svg("text", { x: label.x, y: HEIGHT - 8, "text-anchor": "middle", class: "chart-label" }, label.text));
}

/**
 * A line chart of one or more series over time.
 * @param {{title: string, times: Date[], series: {name: string, values: (number|null)[]}[],
 *          unit?: string, format?: (value: number) => string, min?: number, max?: number,
 *          days?: boolean, note?: string}} spec
 *   `values[i]` belongs to `times[i]`; null leaves a gap. `format` writes a value with its unit
 *   (default: the number and `unit`). `min`/`max` fix the y range (e.g. 0–100 %); `days`: the
 *   times are UTC days (labels "4 Mar").
 * @returns {HTMLElement} a <figure> with the chart and its legend
 */
export function lineChart({ title, unit = "", times, series, min, max, format, days = false, note }) {
  const width = chartWidth();
  const titleId = uid("chart-title");
  const present = series.flatMap((line) => line.values.filter((value) => value !== null && value !== undefined));
  if (!present.length || times.length === 0) {
    return figure({ title, series, summary: "No data yet.", chart: emptyChart(title, width, titleId), note });
  }
  let low = min ?? Math.min(0, ...present);
  let high = max ?? Math.max(...present);
  if (high - low < 1e-9) high = low + 1;
  const decimals = high - low < 5 && !Number.isInteger(high - low) ? 1 : 0;
  const write = format ?? ((value) => `${decimals ? value.toFixed(1) : countText(value)}${unit ? (unit === "%" ? "" : " ") + unit : ""}`);
  // Counts get whole-number ticks (0, 1, 2, never 0.25 written as "0").
  const integer = !format && present.every((value) => Number.isInteger(value));
  const { y, nodes: axis } = yAxis(low, high, width, write, integer);
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const start = times[0].getTime();
  const span = Math.max(1, times.at(-1).getTime() - start);
  const x = (date) => MARGIN.left + (times.length === 1 ? plotWidth / 2 : ((date.getTime() - start) / span) * plotWidth);
  const timeText = days ? dayLabel : span < 10 * 60_000 ? (d) => clockSeconds.format(d) : span < 36 * 3600_000 ? (d) => clock.format(d) : (d) => dayMonth.format(d);
  const ticks = xLabels(times.map((date) => ({ x: x(date), text: timeText(date) })), width);

  const lines = [];
  const ends = [];
  const summaries = [];
  series.forEach((line, index) => {
    for (const segment of segments(line.values)) {
      const points = segment.map((i) => `${x(times[i]).toFixed(1)},${y(line.values[i]).toFixed(1)}`).join(" ");
      lines.push(
        segment.length === 1
          ? svg("circle", { cx: x(times[segment[0]]), cy: y(line.values[segment[0]]), r: 3, class: `series-${index}` })
          : svg("polyline", { points, class: ["chart-line", `series-${index}`], fill: "none" }),
      );
    }
    const lastIndex = line.values.findLastIndex((value) => value !== null && value !== undefined);
    if (lastIndex >= 0) {
      const value = line.values[lastIndex];
      ends.push({ x: x(times[lastIndex]) + 6, y: y(value) + 4, index, text: write(value) });
      summaries.push(`${line.name} ${write(value)}`);
    }
  });
  // Last-value labels: pushed apart where series end close together, and kept inside the chart.
  ends.sort((a, b) => a.y - b.y);
  ends.forEach((label, position) => {
    if (position && label.y - ends[position - 1].y < LABEL_GAP) label.y = ends[position - 1].y + LABEL_GAP;
  });
  const bottom = HEIGHT - MARGIN.bottom + 2;
  for (let position = ends.length - 1, limit = bottom; position >= 0; position -= 1, limit -= LABEL_GAP) {
    if (ends[position].y > limit) ends[position].y = limit;
  }
  for (const label of ends) lines.push(svg("text", { x: label.x, y: label.y, class: ["chart-value", `series-${label.index}`] }, label.text));

  const summary = `${title}, ${timeText(times[0])} to ${timeText(times.at(-1))}; last values: ${summaries.join("; ")}.`;
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: "img", "aria-labelledby": titleId, class: "chart-svg" },
    svg("title", { id: titleId }, summary),
    axis,
    ticks,
    lines,
  );
  return figure({ title, series, summary, chart, note });
}

/**
 * Stacked bars, one bar per label (a day, a run), one colour per series.
 * @param {{title: string, labels: string[], series: {name: string, values: number[]}[],
 *          format?: (value: number) => string, note?: string}} spec
 */
export function barChart({ title, labels, series, format = countText, note }) {
  const width = chartWidth();
  const titleId = uid("chart-title");
  const totals = labels.map((_, i) => series.reduce((sum, line) => sum + (line.values[i] ?? 0), 0));
  if (!labels.length || !totals.some((total) => total > 0)) {
    return figure({ title, series, summary: "Nothing yet.", chart: emptyChart(title, width, titleId, "Nothing yet"), note });
  }
  const { y, nodes: axis } = yAxis(0, Math.max(...totals), width, format, format === countText);
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const slot = plotWidth / labels.length;
  const barWidth = Math.max(2, Math.min(36, slot * 0.7));
  const centre = (i) => MARGIN.left + slot * (i + 0.5);
  const bars = [];
  labels.forEach((label, i) => {
    let base = 0;
    series.forEach((line, index) => {
      const value = line.values[i] ?? 0;
      if (value <= 0) return;
      const top = y(base + value);
      bars.push(
        svg(
          "rect",
          { x: centre(i) - barWidth / 2, y: top, width: barWidth, height: Math.max(1, y(base) - top), class: ["chart-bar", `series-${index}`] },
          svg("title", null, `${label}: ${line.name} ${format(value)}`),
        ),
      );
      base += value;
    });
  });
  const ticks = xLabels(labels.map((label, i) => ({ x: centre(i), text: label })), width);
  const busiest = totals.indexOf(Math.max(...totals));
  const summary = `${title}: ${labels.length} bars, ${format(totals.reduce((a, b) => a + b, 0))} in all, most on ${labels[busiest]} (${format(totals[busiest])}).`;
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: "img", "aria-labelledby": titleId, class: "chart-svg" },
    svg("title", { id: titleId }, summary),
    axis,
    ticks,
    bars,
  );
  return figure({ title, series, summary, chart, note });
}

/**
 * Horizontal bars, largest first: a name on the left, its count at the end of its bar.
 * @param {{title: string, items: {name: string, count: number}[], empty?: string, note?: string}} spec
 */
export function rankChart({ title, items, empty = "Nothing yet", note }) {
  const width = chartWidth();
  const titleId = uid("chart-title");
  const series = [{ name: title }];
  if (!items.length) return figure({ title, series, summary: `${empty}.`, chart: emptyChart(title, width, titleId, empty), note });
  const row = 22;
  const nameWidth = Math.min(150, Math.max(...items.map((item) => item.name.length)) * CHAR_PX + 8);
  const height = items.length * row + 8;
  const longest = Math.max(...items.map((item) => item.count));
  const barSpace = width - nameWidth - 56;
  const nodes = items.flatMap((item, i) => {
    const top = 4 + i * row;
    const name = item.name.length * CHAR_PX > nameWidth - 8 ? `${item.name.slice(0, Math.floor((nameWidth - 8) / CHAR_PX) - 1)}…` : item.name;
    const length = Math.max(2, (item.count / longest) * barSpace);
    return [
      svg("text", { x: nameWidth - 6, y: top + 15, "text-anchor": "end", class: "chart-label" }, svg("title", null, item.name), name),
      svg("rect", { x: nameWidth, y: top + 3, width: length, height: row - 8, class: ["chart-bar", "series-0"] }),
      svg("text", { x: nameWidth + length + 6, y: top + 15, class: "chart-label" }, countText(item.count)),
    ];
  });
  const summary = `${title}: ${items.map((item) => `${item.name} ${item.count}`).join(", ")}.`;
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-labelledby": titleId, class: "chart-svg" },
    svg("title", { id: titleId }, summary),
    nodes,
  );
  return figure({ title, series, summary, chart, note });
}

/** Index runs of non-missing values: [3, null, 4, 5] → [[0], [2, 3]]. */
function segments(values) {
  const runs = [];
  let run = [];
  values.forEach((value, index) => {
    if (value === null || value === undefined) {
      if (run.length) runs.push(run);
      run = [];
    } else {
      run.push(index);
    }
  });
  if (run.length) runs.push(run);
  return runs;
}
