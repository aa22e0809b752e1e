// #/lifecycle: what the next lifecycle run would do (a dry run), "Run now", and the log of past
// runs with each one's report. Reports are drawn generically, stage by stage, so a new stage or
// count shows up without a change here.

import { ApiError, api, guarded, latestOnly, reportError } from "./api.js";
import { announce, dataTable, descriptionList, dialogForm, duration, el, field, replace, select, time } from "./dom.js";

const IDS_SHOWN = 12;

export async function render(main, context) {
  const scopeSelect = select("scope", [["", "All users"], [context.user, `Only ${context.user}`]], "");
  const preview = el("div", { class: "block", "aria-live": "polite" });
  const log = el("div", { class: "block" });
  const runButton = el("button", { type: "button", class: "primary" }, "Run now");
  const progress = el("p", { class: "subtle run-progress", role: "status", "aria-live": "polite" });
  const userId = () => scopeSelect.value || undefined;
  const nextPreviewSignal = latestOnly(context.signal); // a scope change aborts the older preview

  const loadPreview = async () => {
    const user = userId();
    const signal = nextPreviewSignal(); // also ends the following of an older scope's dry run
    try {
      const report = await api("/lifecycle/preview", { query: { user_id: user }, signal });
      replace(preview, reportView(report, "preview"));
    } catch (error) {
      // A store too large to plan within one request: the daemon answers 503 timeout. The same
      // plan is then made by a dry run in the background, which the page follows.
      if (!(error instanceof ApiError) || error.status !== 503 || error.code !== "timeout") throw error;
      replace(preview, backgroundPlan(user, signal, loadLog));
    }
  };
  const loadLog = async () => {
    const body = await api("/lifecycle/log", { query: { limit: 20 }, signal: context.signal });
    replace(log, logTable(body.runs));
  };
  scopeSelect.addEventListener("change", guarded(loadPreview));
  runButton.addEventListener(
    "click",
    guarded(async () => {
      if (!(await confirmRun(userId()))) return;
      runButton.disabled = true;
      runButton.textContent = "Running…";
      try {
        // The daemon answers at once (202) and runs in the background; follow the run by its id.
        // A run already under way (409) is followed instead of starting another.
        const started = await startOrFollow(userId());
        await loadLog();
        const run = await follow(started, progress, context.signal);
        const why = run.report?.error ? `: ${run.report.error}` : "";
        announce(`Lifecycle run ${run.id} ${run.status}${why}.`);
      } catch (error) {
        progress.textContent = "";
        reportError(error); // 409: a run is already in progress; its message names it
      } finally {
        runButton.disabled = false;
        runButton.textContent = "Run now";
      }
      await Promise.all([loadLog(), loadPreview()]);
    }),
  );

  replace(
    main,
    el("h1", null, "Lifecycle"),
    el(
      "form",
      { class: "filters", "aria-label": "Lifecycle scope", onsubmit: (event) => event.preventDefault() },
      el("div", { class: "field-grid" }, field("Scope", scopeSelect)),
      el("div", { class: "actions" }, runButton),
      progress,
    ),
    el("section", { "aria-labelledby": "preview-title" }, el("h2", { id: "preview-title" }, "Next run (preview)"), preview),
    el("section", { "aria-labelledby": "log-title" }, el("h2", { id: "log-title" }, "Past runs"), log),
  );
  await Promise.all([loadPreview(), loadLog()]);
}

/** How often "Run now" asks how its run is getting on. */
const RUN_POLL_MS = 500;

/** Start a run (a dry run when `dryRun`); when one is already under way (409 naming it), that run
 * instead. */
async function startOrFollow(user, dryRun = false) {
  try {
    return await api("/lifecycle/run", { method: "POST", query: { user_id: user, dry_run: dryRun || undefined } });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 409 || error.runId === undefined) throw error;
    const kind = dryRun ? "dry run" : "run";
    announce(`A lifecycle ${kind} is already under way: following ${kind} ${error.runId}.`);
    return await api(`/lifecycle/runs/${error.runId}`);
  }
}

/** Poll a run until it has ended, saying in `progress` how it is getting on; the ended run. */
async function follow(run, progress, signal) {
  while (run.status === "running") {
    progress.textContent = progressText(run);
    await sleep(RUN_POLL_MS, signal);
    run = await api(`/lifecycle/runs/${run.id}`, { signal });
  }
  progress.textContent = "";
  return run;
}

/** The preview's place when planning outlasts a request: why, and a button that plans the same
 * run as a dry run in the background (logged like any run) and shows its report here. `signal`
 * ends with this preview (a scope change, the page left): the run goes on, the page stops following. */
function backgroundPlan(user, signal, loadLog) {
  const scope = user ? `the memories of ${user}` : "the memories of all users";
  const progress = el("p", { class: "subtle run-progress", role: "status", "aria-live": "polite" });
  const button = el("button", { type: "button" }, "Plan in the background");
  const place = el(
    "div",
    { class: "background-plan" },
    el("p", null, `Planning the next run over ${scope} takes longer than one request may on a store this size.`),
    el("div", { class: "actions" }, button),
    progress,
  );
  button.addEventListener(
    "click",
    guarded(async () => {
      button.disabled = true;
      try {
        const started = await startOrFollow(user, true);
        loadLog().catch(reportError); // the dry run shows in the log while it plans
        const run = await follow(started, progress, signal);
        if (run.status !== "done" || !run.report) {
          const why = run.report?.error ? `: ${run.report.error}` : "";
          announce(`Dry run ${run.id} ${run.status}${why}.`);
        } else if ((run.report.user_id ?? undefined) !== user) {
          // Dry runs take turns, whatever their scope: the one followed was another scope's.
          announce(`Dry run ${run.id} planned ${run.report.user_id ? `for ${run.report.user_id}` : "for all users"}; plan again for this scope.`);
        } else {
          replace(place, reportView(run.report, "preview"));
        }
        await loadLog();
      } finally {
        progress.textContent = "";
        button.disabled = false;
      }
    }),
  );
  return place;
}

/** "Run 7: merge (stage 2 of 6)…"; "finishing" once every stage has ended. */
function progressText(run) {
  const name = `${run.dry_run ? "Dry run" : "Run"} ${run.id}`;
  if (run.stage === null) return `${name}: finishing…`;
  return `${name}: ${run.stage} (stage ${run.stages_done + 1} of ${run.stages_total})…`;
}

/** Resolves after `ms`, or rejects when `signal` aborts (the page was left). */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** Ask before a run: it changes memories (promotes, merges, archives), for everyone or one user. */
async function confirmRun(user) {
  const scope = user ? `only the memories of ${user}` : "the memories of all users";
  const form = await dialogForm({
    title: "Run the lifecycle now?",
    submit: "Run now",
    body: [
      el("p", { class: "run-scope" }, `Scope: ${scope}.`),
      el("p", null, "The run promotes, merges, archives and summarises memories as the preview shows; it deletes nothing."),
    ],
  });
  return form !== null;
}

/** The runs; each unfolds its report in a full-width row below it. */
function logTable(runs) {
  const reportRows = new Map();
  const toggle = (run) => (event) => {
    const button = event.currentTarget;
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "Hide report" : "Show report";
    reportRows.get(run.id).hidden = !open;
  };
  return dataTable({
    caption: "Lifecycle runs, newest first",
    rows: runs,
    empty: "No run yet.",
    columns: [
      { label: "Run", class: "num", cell: (run) => `#${run.id}` },
      { label: "Trigger", cell: (run) => run.trigger + (run.dry_run ? " (dry run)" : "") },
      { label: "Status", cell: (run) => el("span", { class: ["status", `status-${run.status}`] }, run.status) },
      { label: "Started", cell: (run) => time(run.started_at) },
      { label: "Finished", cell: (run) => time(run.finished_at) },
      { label: "Changes", cell: (run) => totals(run.report) },
      {
        label: "Report",
        cell: (run) =>
          run.report
            ? el("button", { type: "button", class: "link", "aria-expanded": "false", "aria-controls": `run-report-${run.id}`, "aria-label": `Report of run ${run.id}`, onclick: toggle(run) }, "Show report")
            : "—",
      },
    ],
    after: (run) => {
      if (!run.report) return null;
      const row = el("tr", { id: `run-report-${run.id}`, class: "sub-row", hidden: true }, el("td", { colspan: 7 }, reportView(run.report, `run ${run.id}`)));
      reportRows.set(run.id, row);
      return row;
    },
  });
}

/** "promoted 3 · archived 1": the non-zero counts of every stage. */
function totals(report) {
  const counts = {};
  for (const stage of report?.stages ?? []) {
    for (const [kind, count] of Object.entries(stage.counts ?? {})) counts[kind] = (counts[kind] ?? 0) + count;
  }
  const parts = Object.entries(counts).filter(([, count]) => count).map(([kind, count]) => `${kind} ${count}`);
  return parts.length ? parts.join(" · ") : "no change";
}

/** One report (LifecycleReportOut): its header, then a row per stage. */
function reportView(report, key) {
  return [
    descriptionList(
      [
        ["Status", report.status + (report.dry_run ? " (dry run)" : "")],
        ["Users", report.user_id ?? "all"],
        ["Judged at", time(report.now)],
        ["Rows before", String(report.rows_before)],
        ["Rows after", report.rows_after === null ? null : String(report.rows_after)],
        ["Error", report.error],
      ],
      "facts inline",
    ),
    dataTable({
      caption: `Stages (${key})`,
      rows: report.stages ?? [],
      empty: "No stage ran.",
      columns: [
        { label: "Stage", cell: (stage) => stage.name },
        { label: "Status", cell: (stage) => el("span", { class: ["status", `status-${stage.status}`] }, stage.status) },
        { label: "Reason", cell: (stage) => stage.reason ?? "—" },
        { label: "Took", class: "num", cell: (stage) => duration(stage.duration_ms) },
        { label: "Counts", cell: (stage) => countsList(stage.counts) },
        { label: "Memories", cell: (stage) => idsList(stage, report.user_id) },
        { label: "Groups", class: "num", cell: (stage) => (stage.groups?.length ? String(stage.groups.length) : "—") },
      ],
    }),
  ];
}

/** The non-zero counts of a stage ("nothing" when it changed nothing). */
function countsList(counts) {
  const entries = Object.entries(counts ?? {}).filter(([, count]) => count);
  if (!entries.length) return el("span", { class: "subtle" }, "nothing");
  return el("ul", { class: "plain" }, entries.map(([kind, count]) => el("li", null, `${kind}: ${count}`)));
}

/**
 * The ids per kind, each a link to the memory; long lists are cut (the counts stay complete). The
 * link names the memory's user where the report knows it (a one-user run, or a merge or summary
 * group), so the memory's page opens as that user.
 */
function idsList(stage, reportUser) {
  const entries = Object.entries(stage.ids ?? {}).filter(([, list]) => list.length);
  if (!entries.length) return "—";
  const owners = new Map();
  for (const group of stage.groups ?? []) {
    for (const id of [group.into, ...group.ids]) if (id !== null && id !== undefined) owners.set(id, group.user_id);
  }
  const link = (id) => {
    const user = reportUser ?? owners.get(id);
    const query = user ? `?user=${encodeURIComponent(user)}` : "";
    return el("a", { href: `#/memories/${id}${query}` }, `#${id}`);
  };
  return el(
    "ul",
    { class: "plain" },
    entries.map(([kind, list]) =>
      el(
        "li",
        null,
        `${kind}: `,
        list.slice(0, IDS_SHOWN).flatMap((id, index) => [index ? ", " : "", link(id)]),
        list.length > IDS_SHOWN ? ` … +${list.length - IDS_SHOWN}` : "",
      ),
    ),
  );
}
