// Small SVG line charts, drawn here (no library): a y axis with a few labelled ticks, the first,
// middle and last time on the x axis, a polyline per series (broken where a value is missing),
// and each series' last value at its end. Colours come from style.css (.series-0, .series-1, …).

import { el, svg, uid } from "./dom.js";

// Drawn at about its viewBox size on a desktop, so 12px text stays readable.
const WIDTH = 520;
const HEIGHT = 200;
const MARGIN = { top: 12, right: 78, bottom: 26, left: 62 };
const Y_TICKS = 4;

const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const clockSeconds = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const LABEL_GAP = 13; // px between two last-value labels, so that close values stay readable
const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });

/**
 * A line chart of one or more series over time.
 * @param {{title: string, unit: string, times: Date[],
 *          series: {name: string, values: (number|null)[]}[],
 *          min?: number, max?: number}} spec
 *   `values[i]` belongs to `times[i]`; null leaves a gap. `min`/`max` fix the y range (e.g. 0–100 %);
 *   otherwise it spans the data.
 * @returns {HTMLElement} a <figure> with the chart and its legend
 */
export function lineChart({ title, unit, times, series, min, max }) {
  const present = series.flatMap((line) => line.values.filter((value) => value !== null && value !== undefined));
  const titleId = uid("chart-title");
  const figure = (chart, summary) =>
    el(
      "figure",
      { class: "chart" },
      chart,
      el(
        "figcaption",
        null,
        el("strong", null, title),
        " ",
        series.map((line, index) => el("span", { class: "legend-item" }, el("span", { class: ["swatch", `series-${index}`] }), line.name)),
        el("span", { class: "visually-hidden" }, summary),
      ),
    );
  if (!present.length || times.length === 0) {
    const empty = svg(
      "svg",
      { viewBox: `0 0 ${WIDTH} ${HEIGHT / 2}`, role: "img", "aria-labelledby": titleId, class: "chart-svg" },
      svg("title", { id: titleId }, `${title}: no data yet`),
      svg("text", { x: WIDTH / 2, y: HEIGHT / 4, "text-anchor": "middle", class: "chart-empty" }, "No data yet"),
    );
    return figure(empty, "No data yet.");
  }

  let low = min ?? Math.min(...present);
  let high = max ?? Math.max(...present);
  if (high - low < 1e-9) {
    low -= 1;
    high += 1;
  }
  // A narrow range (57.5–58.5 °C) needs a decimal to tell its ticks apart; big numbers are compact.
  const decimals = high - low < 5 ? 1 : 0;
  const format = (value) => {
    const text = Math.abs(value) >= 10_000 ? compact.format(value) : value.toFixed(decimals);
    return `${text}${unit === "%" ? "" : " "}${unit}`;
  };
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const start = times[0].getTime();
  const span = Math.max(1, times.at(-1).getTime() - start);
  const x = (date) => MARGIN.left + ((date.getTime() - start) / span) * plotWidth;
  const y = (value) => MARGIN.top + (1 - (value - low) / (high - low)) * plotHeight;

  const grid = [];
  for (let tick = 0; tick <= Y_TICKS; tick += 1) {
    const value = low + ((high - low) * tick) / Y_TICKS;
    const position = y(value);
    grid.push(
      svg("line", { x1: MARGIN.left, x2: MARGIN.left + plotWidth, y1: position, y2: position, class: "chart-grid" }),
      svg("text", { x: MARGIN.left - 6, y: position + 4, "text-anchor": "end", class: "chart-label" }, format(value)),
    );
  }
  const timeFormat = span < 10 * 60_000 ? clockSeconds : clock;
  const timeLabels = [0, Math.floor((times.length - 1) / 2), times.length - 1]
    .filter((index, position, all) => all.indexOf(index) === position)
    .map((index, position, all) =>
      svg(
        "text",
        {
          x: x(times[index]),
          y: HEIGHT - 8,
          "text-anchor": position === 0 ? "start" : position === all.length - 1 ? "end" : "middle",
          class: "chart-label",
        },
        timeFormat.format(times[index]),
      ),
    );

  const lines = [];
  const labels = [];
  const summaries = [];
  series.forEach((line, index) => {
    for (const segment of segments(line.values)) {
      const points = segment.map((i) => `${x(times[i]).toFixed(1)},${y(line.values[i]).toFixed(1)}`).join(" ");
      lines.push(
        segment.length === 1
          ? svg("circle", { cx: x(times[segment[0]]), cy: y(line.values[segment[0]]), r: 2.5, class: `series-${index}` })
          : svg("polyline", { points, class: ["chart-line", `series-${index}`], fill: "none" }),
      );
    }
    const lastIndex = line.values.findLastIndex((value) => value !== null && value !== undefined);
    if (lastIndex >= 0) {
      const value = line.values[lastIndex];
      labels.push({ x: x(times[lastIndex]) + 6, y: y(value) + 4, index, text: format(value) });
      summaries.push(`${line.name} now ${format(value)}`);
    }
  });
  // Push last-value labels apart (top to bottom) where two series end close together.
  labels.sort((a, b) => a.y - b.y);
  labels.forEach((label, position) => {
    if (position && label.y - labels[position - 1].y < LABEL_GAP) label.y = labels[position - 1].y + LABEL_GAP;
    lines.push(svg("text", { x: label.x, y: label.y, class: ["chart-value", `series-${label.index}`] }, label.text));
  });

  const summary = `${title}, ${clock.format(times[0])} to ${clock.format(times.at(-1))}: ${summaries.join("; ")}.`;
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-labelledby": titleId, class: "chart-svg" },
    svg("title", { id: titleId }, summary),
    grid,
    svg("line", { x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + plotHeight, class: "chart-axis" }),
    svg("line", { x1: MARGIN.left, x2: MARGIN.left + plotWidth, y1: MARGIN.top + plotHeight, y2: MARGIN.top + plotHeight, class: "chart-axis" }),
    timeLabels,
    lines,
  );
  return figure(chart, summary);
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
