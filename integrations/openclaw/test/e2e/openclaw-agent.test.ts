/**
 * One real `openclaw agent --local` turn with the plugin linked, a real daemon and a loopback
 * OpenAI-compatible model that records what OpenClaw sends it.
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

/** A streaming `/v1/chat/completions` that answers one fixed sentence and logs each request. */
async function startModel(logPath: string): Promise<Server> {
  const server = createServer(async (request, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    await appendFile(logPath, `${JSON.stringify({ url: request.url, body: body ? JSON.parse(body) : null })}\n`);
    const base = { id: "chatcmpl-e2e", object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "fake-model" };
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "Noted, I will remember that." }, finish_reason: null }] })}\n\n`);
    response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 } })}\n\n`);
    response.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
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
  daemon = await Daemon.start();
  home = await mkdtemp(path.join(tmpdir(), "openclaw-e2e-"));
  modelLog = path.join(home, "model.jsonl");
  model = await startModel(modelLog);
  const modelPort = (model.address() as { port: number }).port;
  await mkdir(path.join(home, "state"), { recursive: true });
  await cli("plugins", "install", "--link", "--force", "--accept-capabilities", PLUGIN_DIR);
  const config = JSON.parse(await readFile(path.join(home, "openclaw.json"), "utf8").catch(() => "{}"));
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
  config.agents = { defaults: { model: { primary: "fake/fake-model" } } };
  config.plugins = {
    ...config.plugins,
    slots: { memory: "none" },
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
  if (home) await rm(home, { recursive: true, force: true });
});

test("a real openclaw agent --local turn: recall in the prompt, the session ingested", { skip: !ENABLED && "set MEMORY_CORTEX_OPENCLAW_E2E=1", timeout: 900_000 }, async () => {
  const inspect = JSON.parse(await cli("plugins", "inspect", "memory-cortex", "--runtime", "--json"));
  assert.equal(inspect.plugin.status, "loaded");
  assert.deepEqual(inspect.typedHooks.map((hook: { name: string }) => hook.name).sort(), ["agent_end", "before_compaction", "before_prompt_build", "before_reset", "session_end"]);
  assert.deepEqual(inspect.diagnostics, []);
  assert.equal(inspect.policy.allowConversationAccess, true);

  await daemon.call("POST", "/memories", { fact: "The user's sister is called Ana.", topic: "family", importance: 9 });
  await cli("agent", "--local", "--agent", "main", "--message", "Remember that my favourite colour is teal. What is my sister called?");

  const requests = (await readFile(modelLog, "utf8")).trim().split("\n").map((line) => JSON.parse(line));
  const userTexts = requests[0].body.messages
    .filter((message: { role: string }) => message.role === "user")
    .map((message: { content: unknown }) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
  const turn = userTexts.find((text: string) => text.includes("favourite colour is teal")) ?? "";
  assert.match(turn, /<memory-cortex-recall>\n## Long-Term Memories\n- \[family\] The user's sister is called Ana\.\n<\/memory-cortex-recall>/);
  const system = JSON.stringify(requests[0].body.messages[0].content);
  for (const tool of ["memory_search", "memory_store", "memory_forget"]) assert.match(system, new RegExp(`${tool} \\(memory-cortex\\)`));

  const { jobs } = await daemon.call("GET", "/ingest/jobs?limit=10");
  const job = jobs.find((candidate: { session_id: string }) => candidate.session_id === "agent:main:main");
  assert.ok(job, `no ingest job for agent:main:main: ${JSON.stringify(jobs)}`);
  assert.equal(job.message_count, 2);
});
