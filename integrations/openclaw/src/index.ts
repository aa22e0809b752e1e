/**
 * Memory Cortex for OpenClaw: long-term memory without patching OpenClaw's agent runner.
 *
 * `register(api)` wires the hooks of {@link MemoryHooks} and the tools of {@link createMemoryTools}.
 * OpenClaw calls `register` more than once per process (discovery, then the live runtime), so it has
 * no side effect beyond registering: no timers, no connections, nothing at module load.
 */
import { buildJsonPluginConfigSchema, definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { DaemonClient } from "./client.ts";
import { CONFIG_JSON_SCHEMA, baseUrl, resolveConfig } from "./config.ts";
import { INGEST_TIMEOUT_MS, MemoryHooks } from "./hooks.ts";
import type { OpenClawPluginApi } from "./openclaw-types.ts";
import { TOOL_NAMES, createMemoryTools } from "./tools.ts";

export const PLUGIN_ID = "memory-cortex";

/** Grace on top of the plugin's own deadlines before OpenClaw stops waiting for a handler. */
const HOST_GRACE_MS = 250;

/** Registers hooks and tools; returns the hooks object (tests and the benchmark drive it). */
export function registerMemoryCortex(api: OpenClawPluginApi): MemoryHooks {
  const config = resolveConfig(api.pluginConfig, (message) => api.logger.warn(message));
  const client = new DaemonClient(baseUrl(config), config.token);
  const hooks = new MemoryHooks(config, client, api.logger);
  if (api.registrationMode === "full") warnWithoutConversationAccess(api);

  const recallBudget = { timeoutMs: config.recallTimeoutMs + HOST_GRACE_MS };
  const ingestBudget = { timeoutMs: INGEST_TIMEOUT_MS + HOST_GRACE_MS };
  api.on("before_prompt_build", (event, ctx) => hooks.beforePromptBuild(event, ctx), recallBudget);
  api.on("agent_end", (event, ctx) => hooks.agentEnd(event, ctx), ingestBudget);
  api.on("before_compaction", (event, ctx) => hooks.beforeCompaction(event, ctx), ingestBudget);
  api.on("before_reset", (event, ctx) => hooks.beforeReset(event, ctx), ingestBudget);
  api.on("session_end", (event, ctx) => hooks.sessionEnd(event, ctx), ingestBudget);

  api.registerTool(
    (toolContext) =>
      createMemoryTools(config, client, {
        sessionKey: toolContext.sessionKey || toolContext.sessionId,
        channel: toolContext.messageChannel,
      }),
    { names: [...TOOL_NAMES] },
  );
  return hooks;
}

/**
 * A plugin that is not bundled with OpenClaw gets no conversation hooks (before_prompt_build,
 * agent_end) unless the user's config allows it, and OpenClaw's only sign is a diagnostic in
 * `openclaw plugins inspect`. Recall and ingest would silently never happen: say so in the log.
 */
function warnWithoutConversationAccess(api: OpenClawPluginApi): void {
  const entry = api.config?.plugins?.entries?.[api.id];
  if (entry?.hooks?.allowConversationAccess === true) return;
  api.logger.warn(
    `memory-cortex: plugins.entries.${api.id}.hooks.allowConversationAccess is not true in openclaw.json, ` +
      "so OpenClaw drops this plugin's recall (before_prompt_build) and ingest (agent_end) hooks: " +
      "memories are neither recalled nor saved. Set it to true (see integrations/openclaw/README.md).",
  );
}

export default definePluginEntry({
  id: PLUGIN_ID,
  name: "Memory Cortex",
  description:
    "Long-term memory from the Memory Cortex daemon: recall before each prompt, ingest after each turn, " +
    "flush before compaction, and memory_search / memory_store / memory_forget tools.",
  configSchema: buildJsonPluginConfigSchema(CONFIG_JSON_SCHEMA),
  register(api) {
    registerMemoryCortex(api);
  },
});
