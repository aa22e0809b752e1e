// #/people: the people, pets, places and plans one user's memories are about; #/people/{id}: one of
// them — what is believed now (its current facts), what it replaced and until when, its relations
// drawn as a small graph, and the conversation turns its facts were read from.

import { api } from "./api.js";
import { dataTable, el, replace, svg, time } from "./dom.js";
import { entityLink, memoryLink, sessionLink } from "./links.js";

const KIND_LABELS = { self: "the user", person: "person", pet: "pet", place: "place", plan: "plan", organisation: "organisation", thing: "thing" };

export async function render(main, context) {
  const id = context.path[1];
  if (id !== undefined) return renderEntity(main, context, id);
  return renderList(main, context);
}

async function renderList(main, context) {
  const body = await api("/entities", { query: { user_id: context.user }, signal: context.signal });
  replace(
    main,
    el("h1", null, "People & things ", el("span", { class: "subtle" }, `of ${context.user}`)),
    el("p", { class: "subtle" }, "Whom and what the memories are about: the user, the people they talk about or with, pets, places and plans. Each keeps its current facts and what they replaced."),
    dataTable({
      caption: `People and things of ${context.user}`,
      rows: body.entities,
      empty: "Nobody yet: entities appear once a conversation names someone or states a fact such as a home, a job or a plan's date.",
      columns: [
        { label: "Name", cell: (e) => entityLink(e, context.user) },
        { label: "Kind", cell: (e) => KIND_LABELS[e.kind] ?? e.kind },
        { label: "Current facts", class: "num", cell: (e) => String(e.facts) },
        { label: "Relations", class: "num", cell: (e) => String(e.relations) },
      ],
    }),
  );
}

async function renderEntity(main, context, id) {
  // || not ??: a blank ?user= must not drop the owner check (the API leaves out empty values).
  const user = context.query.get("user") || context.user;
  const view = await api(`/entities/${encodeURIComponent(id)}`, { query: { user_id: user }, signal: context.signal });
  const entity = view.entity;
  const factColumns = [
    { label: "Attribute", cell: (m) => m.attribute ?? "—" },
    { label: "Value", cell: (m) => m.value ?? "—" },
    { label: "Fact", cell: (m) => m.fact },
    { label: "Said", cell: (m) => time(m.valid_from ?? m.occurred_at ?? m.created_at) },
    { label: "Memory", cell: (m) => memoryLink(m) },
  ];
  replace(
    main,
    el("p", null, el("a", { href: "#/people" }, "← People & things")),
    el("h1", null, entity.name, " ", el("span", { class: "subtle" }, KIND_LABELS[entity.kind] ?? entity.kind)),
    el("h2", null, "What is believed now"),
    dataTable({ caption: `Current facts of ${entity.name}`, rows: view.current, empty: "No current fact.", columns: factColumns }),
    el("h2", null, "What it replaced"),
    dataTable({
      caption: `Earlier facts of ${entity.name}`,
      rows: view.history,
      empty: "Nothing was replaced: no later statement changed what was said.",
      columns: [...factColumns.slice(0, 4), { label: "Until", cell: (m) => time(m.valid_to) }, factColumns[4]],
    }),
    el("h2", null, "Relations"),
    view.relations.length ? relationGraph(entity, view.relations) : null,
    dataTable({
      caption: `Relations of ${entity.name}`,
      rows: view.relations,
      empty: "No relation known.",
      columns: [
        { label: "Subject", cell: (r) => entityLink({ id: r.subject_id, name: r.subject }, user) },
        { label: "Relation", cell: (r) => r.predicate },
        { label: "Object", cell: (r) => entityLink({ id: r.object_id, name: r.object }, user) },
        { label: "Since", cell: (r) => time(r.created_at) },
        { label: "Ended", cell: (r) => (r.ended ? time(r.ended) : "—") },
        { label: "Source", cell: (r) => (r.source_memory_id ? memoryLink({ id: r.source_memory_id, user_id: user }) : "written by hand") },
      ],
    }),
    el("h2", null, "Where it was said"),
    dataTable({
      caption: `Turns the facts of ${entity.name} were read from`,
      rows: view.source_turns,
      empty: "No turn recorded (facts written directly, or before turns were kept).",
      columns: [
        { label: "Said", cell: (m) => time(m.occurred_at ?? m.created_at) },
        { label: "Turn", cell: (m) => m.fact },
        { label: "Conversation", cell: (m) => (m.source_session ? sessionLink(m.source_session, user) : "—") },
      ],
    }),
  );
}

/** The entity in the middle, each other entity it relates to around it, an arrow per relation. */
function relationGraph(entity, relations) {
  const others = [];
  for (const relation of relations) {
    for (const [otherId, name] of [[relation.subject_id, relation.subject], [relation.object_id, relation.object]]) {
      if (otherId !== entity.id && !others.some((o) => o.id === otherId)) others.push({ id: otherId, name });
    }
  }
  const size = 360;
  const centre = size / 2;
  const radius = others.length > 1 ? 130 : 110;
  const place = new Map([[entity.id, { x: centre, y: centre }]]);
  others.forEach((other, i) => {
    const angle = (2 * Math.PI * i) / Math.max(others.length, 1) - Math.PI / 2;
    place.set(other.id, { x: centre + radius * Math.cos(angle), y: centre + radius * Math.sin(angle) });
  });
  const edges = relations.map((relation) => {
    const from = place.get(relation.subject_id);
    const to = place.get(relation.object_id);
    return svg(
      "g",
      { class: relation.ended ? "graph-edge ended" : "graph-edge" },
      svg("line", { x1: from.x, y1: from.y, x2: to.x, y2: to.y, "marker-end": "url(#graph-arrow)" }),
      svg("text", { x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 - 4, "text-anchor": "middle" }, relation.predicate),
    );
  });
  const nodes = [{ id: entity.id, name: entity.name }, ...others].map((node) => {
    const at = place.get(node.id);
    return svg(
      "g",
      { class: node.id === entity.id ? "graph-node focus" : "graph-node" },
      svg("circle", { cx: at.x, cy: at.y, r: 26 }),
      svg("text", { x: at.x, y: at.y + 42, "text-anchor": "middle" }, node.name),
    );
  });
  return svg(
    "svg",
    { class: "relation-graph", viewBox: `0 0 ${size} ${size + 20}`, role: "img", "aria-label": `${entity.name} and the ${others.length} entities it is related to` },
    svg("defs", null, svg("marker", { id: "graph-arrow", viewBox: "0 0 10 10", refX: 34, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z" }))),
    edges,
    nodes,
  );
}
