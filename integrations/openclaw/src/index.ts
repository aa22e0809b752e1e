/**
 * Memory Cortex for OpenClaw: long-term memory without patching OpenClaw's agent runner.
 *
 * `register(api)` picks what the host offers:
 *
 *   - a host with `api.registerMemoryCapability` (OpenClaw ≥ 2026.9, plugin in the memory slot):
 *     the capability of memory.ts (OpenClaw's memory search, its memory_search / memory_get tools,
 *     prompt section and flush plan answered by the daemon), plus the hooks it still needs;
 *   - an older host: the hooks alone, as before.
 *
 * The hooks of {@link MemoryHooks} run in both: recall (before_prompt_build: the capability's
 * prompt builder is synchronous and cannot ask the daemon), ingest (agent_end) and the flushes
 * (before_compaction, before_reset, session_end). The `cortex_*` tools of {@link createMemoryTools}
 * are registered in both.
 *
 * OpenClaw calls `register` more than once per process (discovery, then the live runtime), so it has
 * no side effect beyond registering: no timers, no connections, nothing at module load.
 */
import { buildJsonPluginConfigSchema, definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { DaemonClient } from "./client.ts";
import { CONFIG_JSON_SCHEMA, baseUrl, resolveConfig } from "./config.ts";
import { INGEST_TIMEOUT_MS, MemoryHooks } from "./hooks.ts";
import { ScopeBook } from "./identity.ts";
import { CortexSearchManager, SLOT_TOOL_NAMES, createMemoryCapability, createSlotTools } from "./memory.ts";
import type { OpenClawPluginApi } from "./openclaw-types.ts";
import { TOOL_NAMES, createMemoryTools } from "./tools.ts";

export const PLUGIN_ID = "memory-cortex";

/** Grace on top of the plugin's own deadlines before OpenClaw stops waiting for a handler. */
const HOST_GRACE_MS = 250;

/** Registers the capability (when the host has the API), hooks and tools; returns the hooks object
 * (tests and the benchmark drive it). */
export function registerMemoryCortex(api: OpenClawPluginApi): MemoryHooks {
  const config = resolveConfig(api.pluginConfig, (message) => api.logger.warn(message));
  const client = new DaemonClient(baseUrl(config), config.token);
  const scopes = new ScopeBook(config);
  const hooks = new MemoryHooks(config, client, api.logger, scopes);
  if (api.registrationMode === "full") warnWithoutConversationAccess(api);

  // Feature test, not a version check: a host without the unified memory API gets the hooks only.
  const inSlot = typeof (api as Partial<OpenClawPluginApi>).registerMemoryCapability === "function";
  if (inSlot) api.registerMemoryCapability(createMemoryCapability(config, client, hooks));

  const recallBudget = { timeoutMs: config.recallTimeoutMs + HOST_GRACE_MS };
  const ingestBudget = { timeoutMs: INGEST_TIMEOUT_MS + HOST_GRACE_MS };
  api.on("before_prompt_build", (event, ctx) => hooks.beforePromptBuild(event, ctx), recallBudget);
  api.on("agent_end", (event, ctx) => hooks.agentEnd(event, ctx), ingestBudget);
  api.on("before_compaction", (event, ctx) => hooks.beforeCompaction(event, ctx), ingestBudget);
  api.on("before_reset", (event, ctx) => hooks.beforeReset(event, ctx), ingestBudget);
  api.on("session_end", (event, ctx) => hooks.sessionEnd(event, ctx), ingestBudget);

  api.registerTool(
    (toolContext) => {
      const scope = scopes.observe(toolContext);
      return createMemoryTools(client, {
        sessionKey: toolContext.sessionKey || toolContext.sessionId,
        provider: toolContext.messageChannel,
        scope,
      });
    },
    { names: [...TOOL_NAMES] },
  );
  if (inSlot) {
    api.registerTool(
      (toolContext) => {
        const scope = scopes.observe(toolContext);
        const manager = new CortexSearchManager(client, scopes, scope.agent_id, scope);
        return createSlotTools(manager, toolContext.sessionKey || toolContext.sessionId);
      },
      { names: [...SLOT_TOOL_NAMES] },
    );
  }
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
  kind: "memory",
  name: "Memory Cortex",
  description:
    "Long-term memory from the Memory Cortex daemon in OpenClaw's memory slot: recall before each prompt, " +
    "ingest after each turn, flush before compaction, memory_search / memory_get and cortex_* tools.",
  configSchema: buildJsonPluginConfigSchema(CONFIG_JSON_SCHEMA),
  register(api) {
    registerMemoryCortex(api);
  },
});
