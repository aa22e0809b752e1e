/**
 * The plugin's own agent tools over the daemon's memory endpoints (named `cortex_*`, so they never
 * clash with OpenClaw's `memory_search` / `memory_get`, which memory.ts answers in the memory slot):
 *
 *   cortex_search  → POST /hybrid-search (facts and/or turns, with ids for cortex_forget)
 *   cortex_store   → POST /memories (dedup and corrections apply, as for extracted facts)
 *   cortex_forget  → PATCH /memories/{id} {layer: "archive"}, or DELETE /memories/{id} when asked
 *
 * Every call carries the caller's scope (identity.ts): a tool sees and writes only what the
 * requester may (a memory stored from a group is shared with that group, from a private chat private).
 *
 * Unlike the hooks, a tool that fails throws: that is OpenClaw's tool contract ("throw on failure
 * instead of encoding errors in content"), and the model then sees the error as the tool's result.
 * Every call still has its own deadline, so a dead daemon costs a tool call at most TOOL_TIMEOUT_MS.
 */
import type { DaemonClient, DaemonResult } from "./client.ts";
import { type Scope, scopeQuery } from "./identity.ts";
import { RECALLED_LABEL, noteLine } from "./messages.ts";
import type { AgentTool } from "./openclaw-types.ts";

export const TOOL_NAMES = ["cortex_search", "cortex_store", "cortex_forget"] as const;
/** A store embeds the fact before it answers; a few seconds on a busy CPU. */
export const TOOL_TIMEOUT_MS = 10_000;
export const CATEGORIES = [
  "identity",
  "preference",
  "decision",
  "fact",
  "insight",
  "todo",
  "correction",
  "skill",
  "relationship",
  "project_state",
] as const;

/**
 * OpenClaw lists tools in a compact directory with descriptions cut at 180 characters (the model
 * reads the rest only if it asks), so each description says what matters within that.
 */
export const TOOL_DIRECTORY_DESCRIPTION_CHARS = 180;

/** Where a tool call comes from (the tool factory's context): its session, provider and scope. */
export type ToolOrigin = { sessionKey: string | undefined; provider: string | undefined; scope: Scope };

type SearchHit = {
  id: number;
  topic: string;
  fact: string;
  importance: number;
  category: string;
  score: number;
  layer?: string;
  created_at: string;
};
type MemoryOut = { id: number; fact: string; topic: string; action?: string | null; superseded?: number | null; layer: string };

export function createMemoryTools(client: DaemonClient, origin: ToolOrigin): AgentTool[] {
  const { scope } = origin;
  const query = scopeQuery(scope); // blank user_id: the daemon's default user

  const memorySearch: AgentTool = {
    name: "cortex_search",
    label: "Cortex search",
    description:
      "Search Memory Cortex for facts and/or past messages (turns) of the user, with the memory ids " +
      "that cortex_forget takes. Use when the recalled memories are not enough.",
    parameters: {
      type: "object",
      additionalProperties: false,
      required: ["query"],
      properties: {
        query: { type: "string", minLength: 1, description: "What to look for, in plain words (a question works)." },
        limit: { type: "integer", minimum: 1, maximum: 20, description: "How many facts to return (default 5)." },
        kinds: {
          type: "array",
          items: { type: "string", enum: ["fact", "turn"] },
          minItems: 1,
          description: "fact (what is known) and/or turn (past messages as said); default both.",
        },
      },
    },
    async execute(_toolCallId, params, signal) {
      const text = requireString(params, "query").slice(0, 2_000);
      const limit = optionalInteger(params, "limit", 1, 20) ?? 5;
      const kinds = optionalKinds(params);
      const result = await client.post<{ results: SearchHit[] }>(
        "/hybrid-search",
        { query: text, ...scope, limit, ...(kinds ? { kinds } : {}) },
        TOOL_TIMEOUT_MS,
        signal,
      );
      const hits = unwrap(result, "search the memories").results ?? [];
      const listing = hits.length
        ? RECALLED_LABEL + "\n" + hits.map((hit) => `#${hit.id} ${hit.topic ? `[${noteLine(hit.topic)}] ` : ""}${noteLine(hit.fact)} (importance ${hit.importance}, ${hit.created_at.slice(0, 10)})`).join("\n")
        : "No matching memories.";
      return { content: [{ type: "text", text: listing }], details: { count: hits.length, results: hits } };
    },
  };

  const memoryStore: AgentTool = {
    name: "cortex_store",
    label: "Cortex store",
    description:
      "Save a lasting fact about the user (when asked to remember, or a stated preference, decision or " +
      "correction) as one self-contained sentence. Duplicates merge. No secrets.",
    parameters: {
      type: "object",
      additionalProperties: false,
      required: ["fact"],
      properties: {
        fact: { type: "string", minLength: 1, maxLength: 2000, description: "The fact, one self-contained sentence." },
        topic: { type: "string", maxLength: 100, description: "A short label, e.g. family, work, food." },
        importance: { type: "integer", minimum: 1, maximum: 10, description: "1 trivia … 10 identity (default 5)." },
        category: { type: "string", enum: [...CATEGORIES], description: "Kind of fact (default fact)." },
      },
    },
    async execute(_toolCallId, params, signal) {
      const fact = requireString(params, "fact");
      const topic = optionalString(params, "topic") ?? "";
      const importance = optionalInteger(params, "importance", 1, 10) ?? 5;
      const category = optionalString(params, "category") ?? "fact";
      if (!(CATEGORIES as readonly string[]).includes(category)) {
        throw new Error(`category must be one of ${CATEGORIES.join(", ")}`);
      }
      const result = await client.post<MemoryOut>(
        "/memories",
        {
          fact,
          topic: topic.slice(0, 500),
          importance,
          category,
          user_id: scope.user_id,
          agent_id: scope.agent_id,
          // Said in a group: that group may recall it; said in private: private sessions only.
          visibility: scope.session_kind === "group" ? "shared" : "private",
          source_session: origin.sessionKey?.slice(0, 500),
          // The conversation it is from: the group's identity in a group, else the provider. The
          // daemon reads a shared memory's source_channel as the one group that recalls it.
          source_channel: (scope.channel ?? origin.provider ?? "openclaw").slice(0, 500),
        },
        TOOL_TIMEOUT_MS,
        signal,
      );
      const memory = unwrap(result, "store the memory");
      const text = memory.action === "merged"
        ? `Merged into existing memory #${memory.id}: ${memory.fact}`
        : `Stored memory #${memory.id}.${memory.superseded ? ` It replaces memory #${memory.superseded}.` : ""}`;
      return { content: [{ type: "text", text }], details: { id: memory.id, action: memory.action ?? "created", superseded: memory.superseded ?? null } };
    },
  };

  const memoryForget: AgentTool = {
    name: "cortex_forget",
    label: "Cortex forget",
    description:
      "Forget a memory by id: it is archived (no longer recalled, restorable). hard=true deletes it for good: " +
      "only when the user explicitly asks for deletion.",
    parameters: {
      type: "object",
      additionalProperties: false,
      required: ["id"],
      properties: {
        id: { type: "integer", minimum: 1, description: "The memory's id." },
        hard: { type: "boolean", description: "Delete for good instead of archiving (only on explicit request)." },
      },
    },
    async execute(_toolCallId, params, signal) {
      const id = optionalInteger(params, "id", 1, Number.MAX_SAFE_INTEGER);
      if (id === undefined) throw new Error("id is required: the memory's id from cortex_search");
      const hard = optionalBoolean(params, "hard") ?? false;
      if (hard) {
        const result = await client.request<{ deleted: boolean }>("DELETE", `/memories/${id}`, {
          query,
          timeoutMs: TOOL_TIMEOUT_MS,
          signal,
        });
        unwrap(result, `delete memory #${id}`);
        return { content: [{ type: "text", text: `Deleted memory #${id} permanently.` }], details: { id, action: "deleted" } };
      }
      const result = await client.request<MemoryOut>("PATCH", `/memories/${id}`, {
        body: { layer: "archive" },
        query,
        timeoutMs: TOOL_TIMEOUT_MS,
        signal,
      });
      unwrap(result, `archive memory #${id}`);
      return { content: [{ type: "text", text: `Archived memory #${id}: it will no longer be recalled.` }], details: { id, action: "archived" } };
    },
  };

  return [memorySearch, memoryStore, memoryForget];
}

/** The body of a 2xx, or an Error a model can act on. */
function unwrap<T>(result: DaemonResult<T>, what: string): T {
  if (result.ok) return result.body;
  if (result.status === 404) throw new Error(`Could not ${what}: no such memory for this user.`);
  if (result.status !== undefined && result.status < 500) throw new Error(`Could not ${what}: ${result.message}`);
  throw new Error(`Could not ${what}: the Memory Cortex daemon is unavailable (${result.message}).`);
}

function field(params: unknown, name: string): unknown {
  return typeof params === "object" && params !== null ? (params as Record<string, unknown>)[name] : undefined;
}

function requireString(params: unknown, name: string): string {
  const value = field(params, name);
  if (typeof value !== "string" || !value.trim()) throw new Error(`${name} is required (a non-empty string)`);
  return value.trim();
}

function optionalString(params: unknown, name: string): string | undefined {
  const value = field(params, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Error(`${name} must be a string`);
  return value.trim() || undefined;
}

function optionalInteger(params: unknown, name: string, min: number, max: number): number | undefined {
  const value = field(params, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function optionalKinds(params: unknown): ("fact" | "turn")[] | undefined {
  const value = field(params, "kinds");
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((kind) => kind === "fact" || kind === "turn")) {
    throw new Error('kinds must be a list of "fact" and/or "turn"');
  }
  return [...new Set(value as ("fact" | "turn")[])];
}

function optionalBoolean(params: unknown, name: string): boolean | undefined {
  const value = field(params, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new Error(`${name} must be true or false`);
  return value;
}
