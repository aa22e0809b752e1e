/**
 * Real `openclaw agent --local` turns with the plugin installed (in OpenClaw's memory slot), a real
 * daemon and a scripted loopback OpenAI-compatible model that records what OpenClaw sends it: the
 * recall block and the memory prompt section in the prompt, OpenClaw's memory_search tool answered
 * from the daemon, and a context overflow whose compaction is preceded by the plugin's flush.
 *
 * Opt-in (it takes minutes and a second OpenClaw install): MEMORY_CORTEX_OPENCLAW_E2E=1 npm test.
 * The OpenClaw that runs must live outside this package (OpenClaw refuses a host inside the plugin
 * it loads): OPENCLAW_BIN, else openclaw@2026.9.6 installed once under ~/.cache/memory-cortex.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { Daemon } from "../helpers.ts";

const run = promisify(execFile);
const ENABLED = process.env.MEMORY_CORTEX_OPENCLAW_E2E === "1";
const PLUGIN_DIR = path.resolve(import.meta.dirname, "..", "..");
const OPENCLAW_VERSION = "2026.9.6";

let daemon: Daemon;
let model: Server;
let modelLog: string;
let home: string;
let openclaw: string;
let installedSlot: unknown;

async function openclawBin(): Promise<string> {
  if (process.env.OPENCLAW_BIN) return process.env.OPENCLAW_BIN;
  const cache = path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache"), "memory-cortex", `openclaw-${OPENCLAW_VERSION}`);
  const bin = path.join(cache, "node_modules", ".bin", "openclaw");
  if (!existsSync(bin)) {
    await mkdir(cache, { recursive: true });
    await run("npm", ["install", "--prefix", cache, "--ignore-scripts", "--no-audit", "--no-fund", `openclaw@${OPENCLAW_VERSION}`], {
      timeout: 600_000,
    });
  }
  return bin;
}

type ModelRequest = { url: string; status: number; body: any };

/**
 * A scripted OpenAI-compatible `/v1/chat/completions` (streaming, as OpenClaw asks) that logs each
 * request with the status it answered:
 *
 *   - a user message with "What is my sister called?" and no tool result yet → a call of
 *     OpenClaw's `memory_search` (through `tool_call`: OpenClaw 2026.9 offers plugin tools as
 *     deferred schemas behind it); once the tool result is in the request → a sentence;
 *   - a user message with "COMPACT-NOW", the first time → 400 context_length_exceeded (OpenClaw
 *     compacts the session and retries);
 *   - anything else (the retry, the compaction's summary) → a fixed sentence.
 */
async function startModel(logPath: string): Promise<Server> {
  let overflowed = false;
  const server = createServer(async (request, response) => {
    let raw = "";
    for await (const chunk of request) raw += chunk;
    const body = raw ? JSON.parse(raw) : null;
    const messages: { role: string; content: unknown }[] = body?.messages ?? [];
    const userText = messages.filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
    const hasToolResult = messages.some((message) => message.role === "tool");
    const log = (status: number) => appendFile(logPath, `${JSON.stringify({ url: request.url, status, body })}\n`);

    if (userText.includes("COMPACT-NOW") && !overflowed) {
      overflowed = true;
      await log(400);
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131000 tokens.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } }));
      return;
    }
    await log(200);
    const base = { id: "chatcmpl-e2e", object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "fake-model" };
    const usage = { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 };
    response.writeHead(200, { "content-type": "text/event-stream" });
    // (A compaction's summary request quotes the conversation but offers no tools.)
    if (userText.includes("What is my sister called?") && !hasToolResult && (body?.tools ?? []).length > 0) {
      const call = { index: 0, id: "call_memory_search_1", type: "function", function: { name: "tool_call", arguments: JSON.stringify({ id: "memory_search", args: { query: "sister name" } }) } };
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: null }] })}\n\n`);
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage })}\n\n`);
    } else {
      const reply = hasToolResult ? "Your sister is called Ana." : "Noted, I will remember that.";
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: reply }, finish_reason: null }] })}\n\n`);
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage })}\n\n`);
    }
    response.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

async function modelRequests(): Promise<ModelRequest[]> {
  return (await readFile(modelLog, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as ModelRequest);
}

function openclawEnv(): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, OPENCLAW_STATE_DIR: path.join(home, "state"), OPENCLAW_CONFIG_PATH: path.join(home, "openclaw.json") };
}

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(openclaw, args, { env: openclawEnv(), timeout: 480_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

before(async () => {
  if (!ENABLED) return;
  openclaw = await openclawBin();
  // Debounced ingest waits 10 minutes here: whatever is extracted during the test was sent with
  // debounce:false, i.e. by a flush.
  daemon = await Daemon.start({ MEMORY_CORTEX_INGEST__DEBOUNCE_S: "600" });
  home = await mkdtemp(path.join(tmpdir(), "openclaw-e2e-"));
  modelLog = path.join(home, "model.jsonl");
  model = await startModel(modelLog);
  const modelPort = (model.address() as { port: number }).port;
  await mkdir(path.join(home, "state"), { recursive: true });
  await cli("plugins", "install", "--link", "--force", "--accept-capabilities", PLUGIN_DIR);
  const config = JSON.parse(await readFile(path.join(home, "openclaw.json"), "utf8").catch(() => "{}"));
  // Installing a memory plugin gives it OpenClaw's memory slot (memory-core is off then): the user
  // turns nothing off by hand.
  installedSlot = config.plugins?.slots?.memory;
  config.models = {
    providers: {
      fake: {
        baseUrl: `http://127.0.0.1:${modelPort}/v1`,
        apiKey: "sk-loopback",
        api: "openai-completions",
        models: [{ id: "fake-model", name: "Fake", input: ["text"], contextWindow: 128000, maxTokens: 1024, reasoning: false, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
      },
    },
  };
  // A small kept tail, so the overflow test's short session has something to compact.
  config.agents = { defaults: { model: { primary: "fake/fake-model" }, compaction: { keepRecentTokens: 64 } } };
  config.plugins = {
    ...config.plugins,
    entries: {
      ...config.plugins?.entries,
      "memory-cortex": { enabled: true, hooks: { allowConversationAccess: true }, config: { middlewarePort: daemon.port, recallTimeoutMs: 2000 } },
    },
  };
  await writeFile(path.join(home, "openclaw.json"), JSON.stringify(config, null, 2));
});

after(async () => {
  if (!ENABLED) return;
  model?.closeAllConnections();
  model?.close();
  await daemon?.stop();
  // MEMORY_CORTEX_OPENCLAW_E2E_KEEP=1 keeps OpenClaw's state and the model's request log.
  if (home && process.env.MEMORY_CORTEX_OPENCLAW_E2E_KEEP === "1") console.log(`kept ${home}`);
  else if (home) await rm(home, { recursive: true, force: true });
});

const E2E = { skip: !ENABLED && "set MEMORY_CORTEX_OPENCLAW_E2E=1", timeout: 900_000 };

test("installed, the plugin takes OpenClaw's memory slot and registers its capability, hooks and tools", E2E, async () => {
  assert.equal(installedSlot, "memory-cortex", "plugins install put the plugin in the memory slot");
  const inspect = JSON.parse(await cli("plugins", "inspect", "memory-cortex", "--runtime", "--json"));
  assert.equal(inspect.plugin.status, "loaded");
  assert.equal(inspect.plugin.kind, "memory");
  assert.equal(inspect.plugin.memorySlotSelected, true);
  assert.equal(inspect.plugin.activationReason, "selected memory slot");
  assert.deepEqual(inspect.typedHooks.map((hook: { name: string }) => hook.name).sort(), ["agent_end", "before_compaction", "before_prompt_build", "before_reset", "session_end"]);
  assert.deepEqual([...inspect.plugin.toolNames].sort(), ["cortex_forget", "cortex_search", "cortex_store", "memory_get", "memory_search"]);
  // registerMemoryCapability outside the slot, or by a plugin that is not kind "memory", is a diagnostic.
  assert.deepEqual(inspect.diagnostics, []);
  assert.equal(inspect.policy.allowConversationAccess, true);
});

test("a real openclaw agent --local turn: recall in the prompt, OpenClaw's memory_search answered by the daemon, the session ingested", E2E, async () => {
  const stored = await daemon.call("POST", "/memories", { fact: "The user's sister is called Ana.", topic: "family", importance: 9 });
  // A curated MEMORY.md stays in the system prompt with the plugin in the slot (it answers
  // OpenClaw's provenance question for it).
  const workspace = path.join(home, "state", "workspace");
  await mkdir(workspace, { recursive: true });
  await writeFile(path.join(workspace, "MEMORY.md"), "# Memory\n\n- Curated by hand: the user prefers metric units.\n");
  await cli("agent", "--local", "--agent", "main", "--message", "Remember that my favourite colour is teal. What is my sister called?");

  const requests = (await modelRequests()).filter((request) => JSON.stringify(request.body).includes("favourite colour is teal"));
  assert.ok(requests.length >= 2, `the model was asked ${requests.length} times`);
  const [first, second] = requests as [ModelRequest, ModelRequest];
  const userTexts = first.body.messages
    .filter((message: { role: string }) => message.role === "user")
    .map((message: { content: unknown }) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
  const turn = userTexts.find((text: string) => text.includes("favourite colour is teal")) ?? "";
  // The memory block reaches the model's prompt, inside the user's message.
  assert.match(turn, /<memory-cortex-recall>\n## Long-Term Memories\n(?:[^\n]*\n)?- \[family\] The user's sister is called Ana\.\n<\/memory-cortex-recall>/);
  const system = JSON.stringify(first.body.messages[0].content);
  // The capability's prompt section is in the system prompt (OpenClaw built it from promptBuilder)…
  assert.match(system, /## Memory \(Memory Cortex\)/);
  assert.match(system, /<memory-cortex-recall> block/);
  assert.doesNotMatch(system, /sister is called Ana/, "the recalled facts are not repeated in the system prompt");
  assert.match(system, /Curated by hand: the user prefers metric units\./, "MEMORY.md is still in the system prompt");
  // …and OpenClaw's memory tool names are the slot's, next to the plugin's own (deferred schemas,
  // listed in the system prompt with their plugin, called through tool_call).
  for (const tool of ["memory_search", "memory_get", "cortex_search", "cortex_store", "cortex_forget"]) {
    assert.match(system, new RegExp(`- ${tool} \\(memory-cortex\\): `));
  }

  // The model called memory_search; the result it got back is the daemon's memory.
  const toolResult = second.body.messages.find((message: { role: string }) => message.role === "tool");
  assert.ok(toolResult, "the second request carries the tool result");
  const resultText = typeof toolResult.content === "string" ? toolResult.content : JSON.stringify(toolResult.content);
  assert.match(resultText, new RegExp(`memory-cortex/${stored.id}`));
  assert.match(resultText, /The user's sister is called Ana\./);

  const { jobs } = await daemon.call("GET", "/ingest/jobs?limit=20");
  const job = jobs.find((candidate: { session_id: string }) => candidate.session_id === "agent:main:main");
  assert.ok(job, `no ingest job for agent:main:main: ${JSON.stringify(jobs)}`);
  assert.equal(job.message_count, 2);
  assert.equal(job.status, "pending", "agent_end's ingest is debounced");
});

test("a context overflow makes OpenClaw compact, and the plugin flushes the session first (extracted at once)", E2E, async () => {
  const before = (await modelRequests()).length;
  await cli("agent", "--local", "--agent", "main", "--message", "Remember that my dentist is Dr. Okafor. COMPACT-NOW");
  const requests = (await modelRequests()).slice(before);
  assert.ok(requests.some((request) => request.status === 400), "the model answered 400 context_length_exceeded");
  assert.ok(requests.at(-1)?.status === 200, "OpenClaw retried after compacting");
  // Debounced ingest waits 10 minutes in this daemon: a fact extracted now was sent by the flush.
  const deadline = Date.now() + 30_000;
  let facts: string[] = [];
  while (Date.now() < deadline) {
    const { memories } = await daemon.call("GET", "/memories?limit=200");
    facts = memories.map((memory: { fact: string }) => memory.fact);
    if (facts.some((fact) => fact.includes("Okafor"))) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.ok(facts.some((fact) => /dentist is Dr\. Okafor/.test(fact)), `no dentist fact: ${JSON.stringify(facts)}`);
});
