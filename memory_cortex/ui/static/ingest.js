// #/ingest: the extraction queue (pending, running, failed jobs with their session, age, attempts
// and last error; a failed job can be retried) and the recent extractions with the facts they
// produced. #/ingest/{id}: one job and its facts.

import { api, guarded } from "./api.js";
import { age, announce, dataTable, descriptionList, duration, el, replace, time } from "./dom.js";
import { memoryLink } from "./links.js";

const RECENT_DONE = 20;

export async function render(main, context) {
  const id = context.path[1];
  if (id !== undefined) return renderJob(main, context, id);
  const body = el("div");
  const reload = async () => replace(body, await queueView(context, reload));
  replace(
    main,
    el("div", { class: "title-row" },
      el("h1", null, "Ingestion"),
      el("button", { type: "button", onclick: guarded(reload) }, "Refresh")),
    body,
  );
  await reload();
}

async function queueView(context, reload) {
  const jobs = (status, limit = 50) =>
    api("/ingest/jobs", { query: { status, limit }, signal: context.signal }).then((body) => body.jobs);
  const [pending, running, failed, done] = await Promise.all([
    jobs("pending"), jobs("running"), jobs("failed"), jobs("done", RECENT_DONE),
  ]);
  const retry = (job) =>
    guarded(async () => {
      const answer = await api(`/ingest/jobs/${job.id}/retry`, { method: "POST" });
      announce(answer.retried ? `Job #${job.id} queued again.` : `Job #${job.id} was not retried.`);
      await reload();
    });
  const session = (job) => [job.session_id ?? "(default session)", job.channel ? el("small", { class: "subtle" }, ` · ${job.channel}`) : null];
  const jobLink = (job) => el("a", { href: `#/ingest/${job.id}` }, `#${job.id}`);
  const queueColumns = [
    { label: "Job", class: "num", cell: jobLink },
    { label: "User", cell: (job) => job.user_id },
    { label: "Session", cell: session },
    { label: "Age", class: "num", cell: (job) => el("span", { title: job.received_at }, age(job.received_at)) },
    { label: "Messages", class: "num", cell: (job) => job.message_count },
    { label: "Attempts", class: "num", cell: (job) => job.attempts },
    { label: "Last error", class: "error-text", cell: (job) => job.last_error ?? "—" },
  ];
  return [
    section("Pending", `${pending.length} waiting`, dataTable({ caption: "Pending jobs", rows: pending, columns: queueColumns, empty: "No job is waiting." })),
    section("Running", `${running.length} running`, dataTable({ caption: "Running jobs", rows: running, columns: queueColumns, empty: "No job is running." })),
    section(
      "Failed",
      `${failed.length} failed`,
      dataTable({
        caption: "Failed jobs",
        rows: failed,
        empty: "No failed job.",
        columns: [
          ...queueColumns,
          { label: "Action", cell: (job) => el("button", { type: "button", onclick: retry(job), "aria-label": `Retry job ${job.id}` }, "Retry") },
        ],
      }),
    ),
    section("Recent extractions", `last ${RECENT_DONE}`, recentTable(done, context)),
  ];
}

function section(title, summary, content) {
  const id = `jobs-${title.toLowerCase().replaceAll(" ", "-")}`;
  return el(
    "section",
    { "aria-labelledby": id, class: "block" },
    el("h2", { id }, title, " ", el("span", { class: "subtle" }, summary)),
    content,
  );
}

/** Finished jobs; each can unfold the facts it stored (fetched on demand: one request per job). */
function recentTable(jobs, context) {
  const factRows = new Map();
  const toggle = (job) =>
    guarded(async (event) => {
      const button = event.currentTarget;
      const row = factRows.get(job.id);
      const open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", String(open));
      row.hidden = !open;
      if (open && !row.dataset.loaded) {
        const { facts } = await api(`/ingest/jobs/${job.id}`, { signal: context.signal });
        replace(row.firstChild, unlistedNote(job.facts_stored, facts.length), factsTable(facts, `Facts stored by job ${job.id}`));
        row.dataset.loaded = "true";
      }
    });
  return dataTable({
    caption: "Recent extractions",
    rows: jobs,
    empty: "Nothing extracted yet.",
    columns: [
      { label: "Job", class: "num", cell: (job) => el("a", { href: `#/ingest/${job.id}` }, `#${job.id}`) },
      { label: "User", cell: (job) => job.user_id },
      { label: "Session", cell: (job) => job.session_id ?? "(default session)" },
      { label: "Finished", cell: (job) => time(job.finished_at) },
      { label: "Took", class: "num", cell: (job) => duration(job.duration_ms) },
      { label: "New messages", class: "num", cell: (job) => job.new_messages ?? "—" },
      { label: "Method", cell: (job) => job.method ?? "—" },
      {
        label: "Facts",
        cell: (job) =>
          job.facts_stored
            ? el("button", { type: "button", class: "link", "aria-expanded": "false", "aria-controls": `job-facts-${job.id}`, onclick: toggle(job) }, `stored ${job.facts_stored}`)
            : "0",
      },
    ],
    after: (job) => {
      if (!job.facts_stored) return null;
      const row = el("tr", { id: `job-facts-${job.id}`, class: "sub-row", hidden: true }, el("td", { colspan: 8 }, "Loading…"));
      factRows.set(job.id, row);
      return row;
    },
  });
}

/**
 * The job's count is what it stored; the list is what still carries its job id. Facts that dedup
 * merged into an existing memory (or that were deleted since) are counted but not listed.
 */
function unlistedNote(stored, listed) {
  if (listed >= stored) return null;
  return el("p", { class: "hint" }, `${listed} of the ${stored} stored facts are listed: the others were merged into existing memories or deleted since.`);
}

function factsTable(facts, caption) {
  return dataTable({
    caption,
    rows: facts,
    empty: "This job stored no fact (or they were deleted since).",
    columns: [
      { label: "ID", class: "num", cell: (memory) => memoryLink(memory) },
      { label: "Topic", cell: (memory) => memory.topic || "—" },
      { label: "Fact", class: "fact", cell: (memory) => el("div", { class: "clamp" }, memory.fact) },
      { label: "Category", cell: (memory) => memory.category },
      { label: "Importance", class: "num", cell: (memory) => memory.importance },
      { label: "Layer", cell: (memory) => memory.layer },
    ],
  });
}

async function renderJob(main, context, id) {
  const { job, facts } = await api(`/ingest/jobs/${encodeURIComponent(id)}`, { signal: context.signal });
  const retry = guarded(async () => {
    await api(`/ingest/jobs/${job.id}/retry`, { method: "POST" });
    announce(`Job #${job.id} queued again.`);
    await renderJob(main, context, id);
  });
  replace(
    main,
    el("p", { class: "breadcrumb" }, el("a", { href: "#/ingest" }, "← Ingestion")),
    el("h1", null, `Ingest job #${job.id}`),
    job.status === "failed" ? el("div", { class: "actions" }, el("button", { type: "button", class: "primary", onclick: retry }, "Retry")) : null,
    descriptionList([
      ["Status", job.status],
      ["User", job.user_id],
      ["Session", job.session_id],
      ["Channel", job.channel],
      ["Received", time(job.received_at)],
      ["Started", time(job.started_at)],
      ["Finished", time(job.finished_at)],
      ["Duration", job.duration_ms === null ? null : duration(job.duration_ms)],
      ["Messages", String(job.message_count)],
      ["New messages", job.new_messages === null ? null : String(job.new_messages)],
      ["Attempts", String(job.attempts)],
      ["Method", job.method],
      ["Last error", job.last_error],
    ]),
    el("h2", null, "Facts it stored"),
    unlistedNote(job.facts_stored ?? 0, facts.length),
    factsTable(facts, `Facts stored by job ${job.id}`),
  );
}
