/**
 * Who is speaking, to which agent, in what kind of conversation: OpenClaw's hook and tool context
 * mapped to the daemon's scope fields (`user_id`, `agent_id`, `session_kind`, `channel`).
 *
 *   agent_id      ctx.agentId, else the `<id>` of a session key `agent:<id>:…`.
 *   session_kind  "group" when the key's rest names a group or channel conversation
 *                 (`agent:main:telegram:group:<id>`, `agent:main:discord:channel:<id>`), or is not a
 *                 conversation with the owner at all (`cron:…`, `hook:…`, `subagent:…`: a subagent may
 *                 be spawned from a group; `global`), or when the context's chat type says group,
 *                 channel or supergroup; else "private" (`agent:main:main`, `…:direct:<peer>`).
 *   channel       a group: the conversation itself from the key (`telegram:group:<id>`), so two groups
 *                 never share; a cron/hook/subagent/global session: its key; private: the provider
 *                 (ctx.channel or ctx.messageProvider).
 *   user_id       a sender (ctx.senderId or channelContext.sender.id) is looked up in the `identities`
 *                 table (`"<channel>:<senderId>"`, then `"<senderId>"`); a sender not in it is
 *                 `"<channel>:<senderId>"`, never the owner. No sender: the configured `userId`
 *                 (unset: the daemon's default user).
 *
 * OpenClaw's memory runtime searches without a sender, so {@link ScopeBook} keeps the scope last
 * seen in each session's hooks for it.
 */

export type SessionKind = "private" | "group";

/** The daemon's scope fields, as sent in a request body (undefined fields are left out by JSON). */
export type Scope = {
  user_id: string | undefined;
  agent_id: string | undefined;
  session_kind: SessionKind;
  channel: string | undefined;
};

/** What OpenClaw's hook and tool contexts may carry (all optional; names as in the SDK types). */
export type OriginContext = {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  senderId?: string;
  requesterSenderId?: string;
  channel?: string;
  messageProvider?: string;
  messageChannel?: string;
  channelContext?: { sender?: { id?: unknown }; chat?: { id?: unknown; [key: string]: unknown } } | undefined;
  /** Not in the hook context's SDK type, but in the run's (`direct` | `group` | `channel`). */
  chatType?: unknown;
};

export type IdentitySettings = {
  /** The owner: whose memories a turn without a sender id is about (unset: the daemon's default). */
  userId: string | undefined;
  /** `"<channel>:<senderId>"` or `"<senderId>"` → user id. */
  identities: Readonly<Record<string, string>>;
};

/** Longest value sent for a scope field (the daemon's own limits are larger). */
const MAX_FIELD = 200;

/** Conversation kinds of OpenClaw's peer session keys that several people share. */
const SHARED_PEER_KINDS = new Set(["group", "channel"]);

export type ParsedSessionKey = { agentId: string; rest: string };

/**
 * `agent:<id>:<rest>` → `{agentId, rest}` (lower-cased, as OpenClaw compares them); anything else
 * (a bare session id, an empty key) → undefined.
 */
export function parseSessionKey(key: string | undefined): ParsedSessionKey | undefined {
  const raw = (key ?? "").trim().toLowerCase();
  const parts = raw.split(":");
  if (parts.length < 3 || parts[0] !== "agent" || !parts[1] || !parts.slice(2).join(":")) return undefined;
  return { agentId: parts[1], rest: parts.slice(2).join(":") };
}

/**
 * The shared conversation a session key names, e.g. `telegram:group:-100123` for
 * `agent:main:telegram:group:-100123` (a thread suffix after it is left out: one group, one
 * conversation); undefined for a private session.
 */
export function groupConversation(key: string | undefined): string | undefined {
  const parsed = parseSessionKey(key);
  if (!parsed) return undefined;
  const segments = parsed.rest.split(":");
  for (let i = 1; i + 1 < segments.length; i++) {
    if (SHARED_PEER_KINDS.has(segments[i]!) && segments[i + 1]) {
      return `${segments[i - 1]}:${segments[i]}:${segments[i + 1]}`.slice(0, MAX_FIELD);
    }
  }
  return undefined;
}

/** Sessions that are not a conversation with the owner: kinds of `agent:<id>:<kind>:…` keys. */
const NOT_PRIVATE_KEY_KINDS = new Set(["cron", "hook", "subagent", "global"]);

/**
 * The channel of a session that is not a one-to-one conversation with the owner although its key
 * names no group: OpenClaw's cron jobs (`agent:<id>:cron:…`), hooks (`agent:<id>:hook:…`),
 * subagents (`agent:<id>:subagent:…`, possibly spawned from a group) and the `global` session
 * (`global`, `agent:<id>:global`): the key itself, so each sees only what is shared everywhere.
 */
export function nonPrivateSession(key: string | undefined): string | undefined {
  const raw = (key ?? "").trim().toLowerCase();
  if (raw === "global") return raw;
  const parsed = parseSessionKey(raw);
  if (!parsed) return undefined;
  return NOT_PRIVATE_KEY_KINDS.has(parsed.rest.split(":")[0]!) ? raw.slice(0, MAX_FIELD) : undefined;
}

/** Chat types of OpenClaw and its channels that several people share. */
const SHARED_CHAT_TYPES = new Set(["group", "channel", "supergroup"]);

/** The chat type the context carries (`ctx.chatType`, `channelContext.chat.type` / `.chatType`), lower-cased. */
export function chatTypeOf(ctx: OriginContext): string | undefined {
  const chat = ctx.channelContext?.chat;
  for (const value of [ctx.chatType, chat?.type, chat?.chatType, chat?.kind]) {
    if (typeof value === "string" && value.trim()) return value.trim().toLowerCase();
  }
  return undefined;
}

export function sessionKindOf(key: string | undefined): SessionKind {
  return groupConversation(key) || nonPrivateSession(key) ? "group" : "private";
}

/** The provider a turn came through (telegram, discord, webchat…), if OpenClaw said. */
export function providerOf(ctx: OriginContext): string | undefined {
  const provider = ctx.channel || ctx.messageProvider || ctx.messageChannel;
  return provider ? provider.trim().slice(0, MAX_FIELD) || undefined : undefined;
}

export function senderOf(ctx: OriginContext): string | undefined {
  const nested = ctx.channelContext?.sender?.id;
  const sender = ctx.senderId || ctx.requesterSenderId || (typeof nested === "string" ? nested : undefined);
  return sender ? sender.trim().slice(0, MAX_FIELD) || undefined : undefined;
}

/** The user a sender is: the identities table, else `<channel>:<senderId>`; no sender: the owner. */
export function userIdOf(settings: IdentitySettings, provider: string | undefined, sender: string | undefined): string | undefined {
  if (!sender) return settings.userId;
  const qualified = `${provider ?? "unknown"}:${sender}`;
  return settings.identities[qualified] ?? settings.identities[sender] ?? qualified.slice(0, MAX_FIELD);
}

/** The daemon's scope for one hook or tool call. */
export function scopeOf(settings: IdentitySettings, ctx: OriginContext): Scope {
  const key = ctx.sessionKey || undefined;
  const provider = providerOf(ctx);
  let conversation = groupConversation(key) ?? nonPrivateSession(key);
  // A chat type only ever narrows: a group chat in a key that looks private (OpenClaw's
  // groupScope "main" puts group rooms in the main session) is a group; "direct" widens nothing.
  const chatType = chatTypeOf(ctx);
  if (!conversation && chatType && SHARED_CHAT_TYPES.has(chatType)) {
    const chatId = ctx.channelContext?.chat?.id;
    conversation = (
      typeof chatId === "string" && chatId.trim() ? `${provider ?? "unknown"}:${chatType}:${chatId.trim()}` : key ?? `${provider ?? "unknown"}:${chatType}`
    ).slice(0, MAX_FIELD);
  }
  const agent = ctx.agentId?.trim() || parseSessionKey(key)?.agentId;
  return {
    user_id: userIdOf(settings, provider, senderOf(ctx)),
    agent_id: agent ? agent.slice(0, MAX_FIELD) : undefined,
    session_kind: conversation ? "group" : "private",
    channel: conversation ?? provider,
  };
}

/** The scope fields of a scope, for a query string (GET/PATCH/DELETE): empty ones left out. */
export function scopeQuery(scope: Scope): Record<string, string> {
  const query: Record<string, string> = { user_id: scope.user_id ?? "", session_kind: scope.session_kind };
  if (scope.agent_id) query.agent_id = scope.agent_id;
  if (scope.channel) query.channel = scope.channel;
  return query;
}

/** The requester who sees the least of the owner's memories: a group session with no channel. */
export function leastScope(settings: IdentitySettings, agentId: string | undefined): Scope {
  const agent = agentId?.trim();
  return { user_id: settings.userId, agent_id: agent ? agent.slice(0, MAX_FIELD) : undefined, session_kind: "group", channel: undefined };
}

/** Whether two scopes are the same requester (user, agent, session kind, channel). */
export function sameScope(a: Scope, b: Scope): boolean {
  return a.user_id === b.user_id && a.agent_id === b.agent_id && a.session_kind === b.session_kind && a.channel === b.channel;
}

/** Sessions whose last scope is kept (least recently seen are dropped). */
export const MAX_REMEMBERED_SESSIONS = 1024;

/**
 * The scope last seen in each session's hooks and tool calls, for the callers that have only a
 * session key (OpenClaw's memory runtime: `search(query, {sessionKey})`, `authorizeSearchHits`).
 */
export class ScopeBook {
  readonly settings: IdentitySettings;
  readonly #bySession = new Map<string, Scope>();

  constructor(settings: IdentitySettings) {
    this.settings = settings;
  }

  /** The scope of a hook or tool call, remembered for its session. */
  observe(ctx: OriginContext): Scope {
    const scope = scopeOf(this.settings, ctx);
    const key = ctx.sessionKey || ctx.sessionId;
    if (key) {
      this.#bySession.delete(key);
      this.#bySession.set(key, scope);
      while (this.#bySession.size > MAX_REMEMBERED_SESSIONS) {
        this.#bySession.delete(this.#bySession.keys().next().value as string);
      }
    }
    return scope;
  }

  /**
   * The scope of a caller that has only a session key: the one last seen in that session, else the
   * owner with the session kind and agent the key names (`agentId` when the key names none). No key
   * at all: the requester who sees the least (fail closed), the owner in a group session with no
   * channel, which the daemon answers with the memories shared everywhere only.
   */
  forSession(sessionKey: string | undefined, agentId?: string): Scope {
    const seen = sessionKey ? this.#bySession.get(sessionKey) : undefined;
    if (seen) return seen;
    if (!sessionKey) return leastScope(this.settings, agentId);
    return scopeOf(this.settings, { sessionKey, agentId: parseSessionKey(sessionKey)?.agentId ?? agentId });
  }
}
