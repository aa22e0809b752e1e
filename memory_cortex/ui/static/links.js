// Links between the dashboard's pages that name whose data they open (?user=), so the page they
// lead to asks the API as that user: another user's memory is a 404, never shown.

import { el } from "./dom.js";

/** A link to one memory's page. */
export function memoryLink(memory, label = `#${memory.id}`) {
  const query = memory.user_id ? `?user=${encodeURIComponent(memory.user_id)}` : "";
  return el("a", { href: `#/memories/${memory.id}${query}` }, label);
}

/** A link to one conversation's page, as `user`. */
export function sessionLink(session, user, label = session) {
  return el("a", { href: `#/sessions/${encodeURIComponent(session)}?user=${encodeURIComponent(user)}` }, label);
}

/** A link to one entity's page (#/people/{id}), as `user`. */
export function entityLink(entity, user, label = entity.name) {
  return el("a", { href: `#/people/${entity.id}?user=${encodeURIComponent(user)}` }, label);
}
