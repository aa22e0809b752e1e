/**
 * The plugin's settings: `plugins.entries.memory-cortex.config` in `openclaw.json`.
 *
 * The field names and defaults are the ones OpenClaw users already have from the patched agent
 * runner (middlewareHost, middlewarePort, autoIngest, …), so an existing config block keeps working.
 * The same JSON Schema is in `openclaw.plugin.json` (OpenClaw validates against the manifest before
 * loading any code); a test keeps the two equal.
 */

export type MemoryCortexConfig = {
  /** Host of the Memory Cortex daemon. */
  middlewareHost: string;
  /** TCP port of the daemon. */
  middlewarePort: number;
  /** Send each finished turn's session to POST /ingest, and flush before compaction/reset/end. */
  autoIngest: boolean;
  /** Prepend the user's memories (POST /context) to each prompt. */
  autoRecall: boolean;
  /** Longest the recall hook waits for /context before the turn goes on without memories. */
  recallTimeoutMs: number;
  /** Size cap of the whole injected block, in tokens of ~4 characters. */
  recallMaxTokens: number;
  /** Most facts in the injected block. */
  recallMaxFacts: number;
  /** How long a /recall synthesis stays usable for the session's next turn. */
  synthesisCacheTtlMs: number;
  /** Leave heartbeat and cron turns alone (no recall, no ingest). */
  skipHeartbeat: boolean;
  /** The owner: whose memories a turn without a sender id is about; unset: the daemon's default user. */
  userId: string | undefined;
  /** Senders → user ids: `"<channel>:<senderId>"` or `"<senderId>"` → user id (see identity.ts). */
  identities: Readonly<Record<string, string>>;
  /** The daemon's `server.api_token`, when it has one (a daemon on another machine must). */
  token: string | undefined;
};

export const DEFAULT_CONFIG: Readonly<MemoryCortexConfig> = Object.freeze({
  // 127.0.0.1, not localhost: the daemon binds IPv4 loopback, and node resolves localhost to ::1 first.
  middlewareHost: "127.0.0.1",
  middlewarePort: 8300,
  autoIngest: true,
  autoRecall: true,
  recallTimeoutMs: 200,
  recallMaxTokens: 500,
  recallMaxFacts: 15,
  synthesisCacheTtlMs: 300_000,
  skipHeartbeat: true,
  userId: undefined,
  identities: Object.freeze({}),
  token: undefined,
});

/** JSON Schema of the config; `openclaw.plugin.json` carries the same object as `configSchema`. */
export const CONFIG_JSON_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    middlewareHost: {
      type: "string",
      minLength: 1,
      default: "127.0.0.1",
      description: "Host of the Memory Cortex daemon.",
    },
    middlewarePort: {
      type: "integer",
      minimum: 1,
      maximum: 65535,
      default: 8300,
      description: "TCP port of the Memory Cortex daemon.",
    },
    autoIngest: {
      type: "boolean",
      default: true,
      description: "Send each finished turn to POST /ingest; flush before compaction, reset and session end.",
    },
    autoRecall: {
      type: "boolean",
      default: true,
      description: "Prepend the user's long-term memories (POST /context) to each prompt.",
    },
    recallTimeoutMs: {
      type: "integer",
      minimum: 1,
      maximum: 60000,
      default: 200,
      description: "Longest wait for /context; on timeout the turn goes on without memories.",
    },
    recallMaxTokens: {
      type: "integer",
      minimum: 16,
      maximum: 20000,
      default: 500,
      description: "Size cap of the injected block, in tokens of about 4 characters.",
    },
    recallMaxFacts: {
      type: "integer",
      minimum: 1,
      maximum: 200,
      default: 15,
      description: "Most facts in the injected block.",
    },
    synthesisCacheTtlMs: {
      type: "integer",
      minimum: 0,
      default: 300000,
      description: "How long a /recall synthesis is kept for the session's next turn (0: never use it).",
    },
    skipHeartbeat: {
      type: "boolean",
      default: true,
      description: "Skip heartbeat and cron turns: no recall, no ingest.",
    },
    userId: {
      type: "string",
      description: "The owner: whose memories a turn without a sender id is about; unset: the daemon's default user.",
    },
    identities: {
      type: "object",
      additionalProperties: { type: "string", minLength: 1 },
      description:
        'Senders to user ids: "<channel>:<senderId>" or "<senderId>" -> user id. A sender not listed is "<channel>:<senderId>".',
    },
    token: {
      type: "string",
      description: "The daemon's API token (server.api_token), sent as a Bearer token; unset: none.",
    },
  },
} as const;

type Warn = (message: string) => void;

/**
 * The settings from `api.pluginConfig`, with the defaults for what is missing.
 *
 * OpenClaw validates against the manifest first; this is the second line: a value of the wrong type
 * or out of range is replaced by its default with a warning, never an exception (a bad setting must
 * not take the agent down).
 */
export function resolveConfig(raw: unknown, warn: Warn = () => {}): MemoryCortexConfig {
  const source: Record<string, unknown> = isRecord(raw) ? raw : {};
  const config: MemoryCortexConfig = { ...DEFAULT_CONFIG };
  const props = CONFIG_JSON_SCHEMA.properties;

  config.middlewareHost = pickString(source, "middlewareHost", DEFAULT_CONFIG.middlewareHost, warn);
  config.middlewarePort = pickInteger(source, "middlewarePort", props.middlewarePort, warn);
  config.autoIngest = pickBoolean(source, "autoIngest", DEFAULT_CONFIG.autoIngest, warn);
  config.autoRecall = pickBoolean(source, "autoRecall", DEFAULT_CONFIG.autoRecall, warn);
  config.recallTimeoutMs = pickInteger(source, "recallTimeoutMs", props.recallTimeoutMs, warn);
  config.recallMaxTokens = pickInteger(source, "recallMaxTokens", props.recallMaxTokens, warn);
  config.recallMaxFacts = pickInteger(source, "recallMaxFacts", props.recallMaxFacts, warn);
  config.synthesisCacheTtlMs = pickInteger(source, "synthesisCacheTtlMs", props.synthesisCacheTtlMs, warn);
  config.skipHeartbeat = pickBoolean(source, "skipHeartbeat", DEFAULT_CONFIG.skipHeartbeat, warn);
  const userId = source.userId;
  if (typeof userId === "string" && userId.trim()) {
    config.userId = userId.trim();
  } else if (userId !== undefined && userId !== null && userId !== "") {
    warn("memory-cortex: config userId must be a string; using the daemon's default user");
  }
  config.identities = pickIdentities(source.identities, warn);
  const token = source.token;
  if (typeof token === "string" && token.trim()) {
    config.token = token.trim();
  } else if (token !== undefined && token !== null && token !== "") {
    warn("memory-cortex: config token must be a string; sending no token");
  }
  return config;
}

/** The daemon's base URL (an IPv6 literal gets its brackets). */
export function baseUrl(config: Pick<MemoryCortexConfig, "middlewareHost" | "middlewarePort">): string {
  const host = config.middlewareHost.includes(":") && !config.middlewareHost.startsWith("[")
    ? `[${config.middlewareHost}]`
    : config.middlewareHost;
  return `http://${host}:${config.middlewarePort}`;
}

/** The identities table: string keys to non-empty string values; anything else is dropped with a warning. */
function pickIdentities(value: unknown, warn: Warn): Readonly<Record<string, string>> {
  if (value === undefined || value === null) return DEFAULT_CONFIG.identities;
  if (!isRecord(value)) {
    warn("memory-cortex: config identities must be an object of sender -> user id; ignoring it");
    return DEFAULT_CONFIG.identities;
  }
  const table: Record<string, string> = {};
  for (const [sender, user] of Object.entries(value)) {
    if (typeof user === "string" && user.trim() && sender.trim()) {
      table[sender.trim()] = user.trim();
    } else {
      warn(`memory-cortex: config identities[${JSON.stringify(sender)}] must be a non-empty user id; ignoring it`);
    }
  }
  return Object.freeze(table);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function pickString(source: Record<string, unknown>, key: string, fallback: string, warn: Warn): string {
  const value = source[key];
  if (value === undefined) return fallback;
  if (typeof value === "string" && value.trim()) return value.trim();
  warn(`memory-cortex: config ${key} must be a non-empty string; using ${JSON.stringify(fallback)}`);
  return fallback;
}

function pickBoolean(source: Record<string, unknown>, key: string, fallback: boolean, warn: Warn): boolean {
  const value = source[key];
  if (value === undefined) return fallback;
  if (typeof value === "boolean") return value;
  warn(`memory-cortex: config ${key} must be true or false; using ${fallback}`);
  return fallback;
}

function pickInteger(
  source: Record<string, unknown>,
  key: string,
  spec: { readonly default: number; readonly minimum: number; readonly maximum?: number },
  warn: Warn,
): number {
  const value = source[key];
  if (value === undefined) return spec.default;
  const max = spec.maximum ?? Number.MAX_SAFE_INTEGER;
  if (typeof value === "number" && Number.isInteger(value) && value >= spec.minimum && value <= max) {
    return value;
  }
  warn(`memory-cortex: config ${key} must be an integer from ${spec.minimum} to ${max}; using ${spec.default}`);
  return spec.default;
}
