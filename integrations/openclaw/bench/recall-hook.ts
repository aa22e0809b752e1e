/**
 * Timing driver for bench/openclaw_plugin_latency.py: what the plugin adds to an OpenClaw turn.
 *
 *   node bench/recall-hook.ts SPEC.json > RESULT.json
 *
 * SPEC: {mode: "hook" | "context", port, user_id, queries: string[], warmup, recall_timeout_ms,
 * recall_max_tokens, recall_max_facts, sessions}. Mode "hook" registers the plugin as OpenClaw does
 * and times its before_prompt_build handler per turn (what the turn waits for); mode "context" times
 * a bare POST /context with the same body (the daemon alone), for comparison.
 *
 * Between turns the background /recall the hook starts is awaited, untimed: in OpenClaw it runs
 * while the model writes its answer, which takes longer than the synthesis request.
 */
import { readFile } from "node:fs/promises";

import { registerMemoryCortex } from "../src/index.ts";
import type { OpenClawPluginApi } from "../src/openclaw-types.ts";

type Spec = {
  mode: "hook" | "context";
  port: number;
  user_id: string;
  queries: string[];
  warmup: number;
  recall_timeout_ms: number;
  recall_max_tokens: number;
  recall_max_facts: number;
  sessions: number;
};

type Result = { latencies_ms: number[]; injected: boolean[]; block_chars: number[] };

const spec = JSON.parse(await readFile(process.argv[2] ?? "/dev/stdin", "utf8")) as Spec;
const result: Result = { latencies_ms: [], injected: [], block_chars: [] };

if (spec.mode === "hook") {
  const handlers = new Map<string, (event: unknown, ctx: unknown) => unknown>();
  const api = {
    id: "memory-cortex",
    name: "Memory Cortex",
    source: "bench",
    registrationMode: "full",
    config: { plugins: { entries: { "memory-cortex": { hooks: { allowConversationAccess: true } } } } },
    pluginConfig: {
      middlewarePort: spec.port,
      userId: spec.user_id,
      recallTimeoutMs: spec.recall_timeout_ms,
      recallMaxTokens: spec.recall_max_tokens,
      recallMaxFacts: spec.recall_max_facts,
    },
    logger: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
    on: (name: string, handler: (event: unknown, ctx: unknown) => unknown) => handlers.set(name, handler),
    registerTool: () => {},
  } as unknown as OpenClawPluginApi;
  const hooks = registerMemoryCortex(api);
  const beforePromptBuild = handlers.get("before_prompt_build")!;

  for (const [i, query] of spec.queries.entries()) {
    const sessionKey = `agent:main:bench-${i % spec.sessions}`;
    const event = { prompt: query, currentUserMessage: query, messages: [] };
    const ctx = { sessionKey, sessionId: `${sessionKey}-id`, agentId: "main", trigger: "user", runId: `bench-${i}` };
    const started = performance.now();
    const outcome = (await beforePromptBuild(event, ctx)) as { prependContext?: string } | undefined;
    const elapsed = performance.now() - started;
    await hooks.idle();
    if (i < spec.warmup) continue;
    result.latencies_ms.push(elapsed);
    result.injected.push(Boolean(outcome?.prependContext));
    result.block_chars.push(outcome?.prependContext?.length ?? 0);
  }
} else {
  for (const [i, query] of spec.queries.entries()) {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${spec.port}/context`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, user_id: spec.user_id, max_tokens: spec.recall_max_tokens, max_facts: spec.recall_max_facts }),
    });
    const body = (await response.json()) as { context?: string };
    const elapsed = performance.now() - started;
    if (i < spec.warmup) continue;
    result.latencies_ms.push(elapsed);
    result.injected.push(Boolean(body.context));
    result.block_chars.push(body.context?.length ?? 0);
  }
}

process.stdout.write(`${JSON.stringify(result)}\n`);
