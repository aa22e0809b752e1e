// #/sessions: one user's conversations posted to /ingest; #/sessions/{id}: one of them as it was
// said (its turns, oldest first), each fact beside the turns it was extracted from (the fact's
// derived_from), and its session summary.

import { api, guarded, latestOnly } from "./api.js";
import { dataTable, descriptionList, el, replace, time } from "./dom.js";
import { memoryLink, sessionLink } from "./links.js";

const PAGE = 50;
// Turns fetched per request on a conversation's page (the API's largest page).
const TURNS_PER_LOAD = 1000;

export async function render(main, context) {
  const session = context.path[1];
  if (session !== undefined) return renderConversation(main, context, session);
  return renderList(main, context);
}

// -- the list ------------------------------------------------------------------------------
async function renderList(main, context) {
  const results = el("div", { class: "results", "aria-live": "polite" });
  const more = el("button", { type: "button", hidden: true }, "Older conversations");
  const nextSignal = latestOnly(context.signal);
  const shown = [];
  let offset = 0;
  const load = async () => {
    const body = await api("/sessions", { query: { user_id: context.user, limit: PAGE, offset }, signal: nextSignal() });
    shown.push(...body.sessions);
    offset = body.next_offset ?? offset;
    more.hidden = body.next_offset === null;
    replace(results, sessionTable(shown, context.user));
  };
  more.addEventListener("click", guarded(load));
  replace(
    main,
    el("h1", null, "Conversations ", el("span", { class: "subtle" }, `of ${context.user}`)),
    el("p", { class: "subtle" }, "Every conversation posted to /ingest, most recently active first. Its turns are kept as said; the facts are what the extractor found in them."),
    results,
    el("nav", { class: "pager", "aria-label": "More conversations" }, more),
  );
  await load();
}

function sessionTable(sessions, user) {
  return dataTable({
    caption: `Conversations of ${user}`,
    rows: sessions,
    empty: "No conversation yet: turns appear here once a client posts to /ingest.",
    columns: [
      { label: "Session", cell: (s) => sessionLink(s.session, user) },
      { label: "Channel", cell: (s) => s.channel || "—" },
      { label: "Turns", class: "num", cell: (s) => String(s.turns) },
      { label: "First said", cell: (s) => time(s.first_said) },
      { label: "Last said", cell: (s) => time(s.last_said) },
      { label: "Summary", cell: (s) => (s.summary_id ? memoryLink({ id: s.summary_id, user_id: user }) : "—") },
    ],
  });
}

// -- one conversation ----------------------------------------------------------------------
async function renderConversation(main, context, session) {
  // || not ??: a blank ?user= must not drop the owner check (the API leaves out empty values).
  const user = context.query.get("user") || context.user;
  const scope = { user_id: user, session };
  const [facts, firstTurns] = await Promise.all([
    api("/memories", { query: { ...scope, kinds: "fact", limit: 200 }, signal: context.signal }),
    api("/memories", { query: { ...scope, kinds: "turn", limit: TURNS_PER_LOAD }, signal: context.signal }),
  ]);
  const summaries = facts.memories.filter((m) => m.category === "session_summary");
  const extracted = facts.memories.filter((m) => m.category !== "session_summary");
  // Each fact goes beside the newest of its turns that the page shows (where it was extracted).
  const factsByTurn = new Map();
  const placed = new Set();
  const shownTurns = new Set();
  const place = () => {
    for (const fact of extracted.toSorted((a, b) => a.id - b.id)) {
      if (placed.has(fact.id)) continue;
      const turnId = (fact.derived_from ?? []).filter((id) => shownTurns.has(id)).at(-1);
      if (turnId === undefined) continue;
      if (!factsByTurn.has(turnId)) factsByTurn.set(turnId, []);
      factsByTurn.get(turnId).push(fact);
      placed.add(fact.id);
    }
  };
  const transcript = el("ol", { class: "transcript", "aria-label": "The conversation, oldest first" });
  const earlier = el("button", { type: "button" }, "Earlier turns");
  let cursor = null;
  const addTurns = (page) => {
    // The API pages newest first; the transcript reads oldest first, so each page goes on top.
    for (const turn of page.memories) shownTurns.add(turn.id);
    place();
    transcript.prepend(...[...page.memories].reverse().map((turn) => turnItem(turn, factsByTurn.get(turn.id) ?? [])));
    cursor = page.next_before_id ?? null;
    earlier.hidden = cursor === null;
  };
  earlier.addEventListener(
    "click",
    guarded(async () => {
      addTurns(await api("/memories", { query: { ...scope, kinds: "turn", limit: TURNS_PER_LOAD, before_id: cursor }, signal: context.signal }));
    }),
  );
  addTurns(firstTurns);
  const turns = firstTurns.memories;
  const unplaced = extracted.filter((fact) => !placed.has(fact.id));
  replace(
    main,
    el("p", { class: "breadcrumb" }, el("a", { href: "#/sessions" }, "← Conversations")),
    el("h1", null, "Conversation ", el("span", { class: "subtle" }, session)),
    descriptionList([
      ["User", user],
      ["Channel", turns[0]?.source_channel],
      ["Turns shown", String(turns.length)],
      ["Last said", time(turns[0]?.occurred_at ?? turns[0]?.created_at)],
    ]),
    el("h2", null, "Summary"),
    summaries.length
      ? summaries.map((m) => el("blockquote", { class: "fact-text" }, m.fact, " ", memoryLink(m)))
      : el("p", { class: "empty" }, "No session summary yet: the nightly lifecycle writes one once the conversation has been quiet for a while (with an LLM that writes prose)."),
    el("h2", null, "As it was said, with what was extracted"),
    el("p", { class: "subtle" }, `${extracted.length} ${extracted.length === 1 ? "fact" : "facts"} extracted; each stands beside the turn it was extracted after.`),
    turns.length ? [el("nav", { class: "pager", "aria-label": "Earlier turns" }, earlier), transcript] : el("p", { class: "empty" }, `No turn of session ${session} among the memories of ${user}.`),
    unplaced.length || !extracted.length ? el("h2", null, turns.length ? "Other facts from it" : "Facts extracted from it") : null,
    unplaced.length
      ? [
          el("p", { class: "subtle" }, "Written without naming their turns (before turns were kept, or directly), or from turns not shown here."),
          el("ul", { class: "plain" }, unplaced.map((m) => el("li", null, memoryLink(m), " ", m.fact))),
        ]
      : !extracted.length
        ? el("p", { class: "empty" }, "No fact was extracted from this conversation.")
        : null,
  );
}

function turnItem(turn, facts) {
  const role = turn.metadata?.role;
  return el(
    "li",
    { class: ["turn", facts.length ? "has-facts" : null], dataset: { turn: String(turn.id) } },
    el(
      "div",
      { class: ["said", role ? `role-${role}` : null] },
      el("span", { class: "subtle" }, time(turn.occurred_at ?? turn.created_at), " ", memoryLink(turn)),
      el("div", { class: "fact-text" }, turn.fact),
    ),
    facts.length
      ? el(
          "aside",
          { class: "extracted", "aria-label": `Extracted from turn #${turn.id}` },
          el("span", { class: "extracted-title" }, facts.length === 1 ? "Extracted fact" : `${facts.length} extracted facts`),
          el(
            "ul",
            { class: "plain" },
            facts.map((fact) => el("li", { class: "extracted-fact" }, memoryLink(fact), " ", fact.fact, el("span", { class: "subtle" }, ` · ${fact.category}`))),
          ),
        )
      : null,
  );
}
