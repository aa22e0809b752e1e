/**
 * Test helpers: a real Memory Cortex daemon in a child process, a loopback stand-in for its LLM,
 * and an OpenClaw stand-in that registers the plugin and drives its hooks as OpenClaw's hook runner
 * does (handlers awaited under their registered timeout, failures caught and recorded).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { type IncomingMessage, type Server, createServer } from "node:http";
import { type Server as NetServer, type Socket, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { registerMemoryCortex } from "../src/index.ts";
import type { MemoryHooks } from "../src/hooks.ts";
import type { MemoryCapability } from "../src/memory.ts";
import type { AgentTool, HookContext, HookEvent, HookName, OpenClawPluginApi } from "../src/openclaw-types.ts";

export const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..", "..");

// -- the daemon -------------------------------------------------------------------------------
/** The interpreter that runs the daemon: scripts/test.sh passes its venv's; else the repo's .venv. */
export function daemonPython(): string {
  const candidates = [
    process.env.MEMORY_CORTEX_TEST_PYTHON,
    process.env.MEMORY_CORTEX_VENV && path.join(process.env.MEMORY_CORTEX_VENV, "bin", "python"),
    path.join(REPO_ROOT, ".venv", "bin", "python"),
  ];
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  return "python3";
}

/** A TCP port nobody listens on now (bind 0, read, release); the race until the daemon binds it is
 * acceptable on loopback. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export class Daemon {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly logPath: string;
  /** The daemon's server.api_token, when the test set one (MEMORY_CORTEX_SERVER__API_TOKEN). */
  token: string | undefined;
  #process: ChildProcess | undefined;

  private constructor(port: number, dir: string) {
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.dir = dir;
    this.logPath = path.join(dir, "daemon.log");
  }

  /**
   * `python -m memory_cortex` on a fresh database in a temp folder. `settings` are MEMORY_CORTEX_*
   * variables on top of the test defaults (rules-only extraction, no hardware polling).
   */
  static async start(settings: Record<string, string> = {}): Promise<Daemon> {
    const daemon = new Daemon(await freePort(), await mkdtemp(path.join(tmpdir(), "memory-cortex-plugin-")));
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && !name.startsWith("MEMORY_CORTEX_")) env[name] = value;
    }
    Object.assign(env, {
      PYTHONUNBUFFERED: "1",
      HF_HUB_OFFLINE: "1",
      TRANSFORMERS_OFFLINE: "1",
      MEMORY_CORTEX_LLM__BACKEND: "rules",
      MEMORY_CORTEX_HARDWARE__ENABLED: "false",
      MEMORY_CORTEX_LOGGING__FORMAT: "json",
      // A busy CI box must not turn a search FTS-only by chance.
      MEMORY_CORTEX_EMBEDDINGS__QUERY_TIMEOUT_S: "10",
      ...settings,
    });
    daemon.token = env.MEMORY_CORTEX_SERVER__API_TOKEN;
    const log = openSync(daemon.logPath, "a");
    const args = ["-m", "memory_cortex", "--db", path.join(daemon.dir, "memories.db"), "--host", "127.0.0.1", "--port", String(daemon.port)];
    daemon.#process = spawn(daemonPython(), args, { cwd: REPO_ROOT, env, stdio: ["ignore", log, log] });
    closeSync(log);
    const stopOnExit = () => daemon.#process?.kill("SIGKILL");
    process.once("exit", stopOnExit);
    try {
      await daemon.#waitHealthy(180_000);
    } catch (error) {
      await daemon.stop();
      throw error;
    }
    return daemon;
  }

  async #waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.#process?.exitCode !== null) {
        throw new Error(`daemon exited (${this.#process?.exitCode}) before /health answered:\n${await this.logTail()}`);
      }
      try {
        const response = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(1000) });
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`daemon did not answer /health within ${timeoutMs} ms:\n${await this.logTail()}`);
  }

  /** SIGTERM, then SIGKILL after 15 s; removes the temp folder. */
  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  async logTail(lines = 30): Promise<string> {
    try {
      return (await readFile(this.logPath, "utf8")).split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  }

  /** A JSON request straight to the daemon (test setup and checks, not the plugin's client). */
  async call<T = any>(method: string, pathAndQuery: string, body?: unknown): Promise<T> {
    const response = await fetch(this.url + pathAndQuery, {
      method,
      headers: { "content-type": "application/json", ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${pathAndQuery}: HTTP ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }
}

// -- a loopback LLM for the daemon ---------------------------------------------------------------
/**
 * An OpenAI-compatible `/v1/chat/completions` for the daemon (llm.backend: openai): a /recall
 * synthesis is "Synthesis: " + the first fact it was given; an extraction (schema-constrained) gets
 * an empty list, so what is extracted comes from the daemon's rules extractor, deterministically.
 */
export class FakeLlm {
  readonly server: Server;
  url = "";
  synthesisCalls = 0;

  constructor() {
    this.server = createServer(async (request, response) => {
      const body = JSON.parse((await readBody(request)) || "{}") as {
        messages?: { role: string; content: string }[];
        response_format?: unknown;
      };
      let content = "[]";
      if (request.method === "GET") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ object: "list", data: [{ id: "fake", object: "model" }] }));
        return;
      }
      if (!body.response_format) {
        this.synthesisCalls += 1;
        const prompt = body.messages?.at(-1)?.content ?? "";
        const first = /^1\. (.*)$/m.exec(prompt)?.[1] ?? "nothing";
        content = `Synthesis: ${first}`;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Accepts connections and never answers: a daemon that hangs. */
export class Blackhole {
  readonly server: NetServer;
  readonly sockets = new Set<Socket>();
  port = 0;

  constructor() {
    this.server = createNetServer((socket) => {
      this.sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// -- an OpenClaw stand-in ------------------------------------------------------------------------
type Registered = { handler: (event: unknown, ctx: unknown) => unknown; timeoutMs: number | undefined };

export type Emitted = {
  result: unknown;
  /** How long the runner waited for the handler. */
  ms: number;
  /** The handler threw or rejected. */
  error: unknown;
  /** The handler outlived its registered timeoutMs (the runner would have gone on without it). */
  timedOut: boolean;
};

/**
 * Registers the plugin the way OpenClaw's loader does (`register(api)` with `pluginConfig`, the
 * user's `openclaw.json` as `config`, a logger) and emits hooks the way its hook runner does.
 */
export class FakeOpenClaw {
  readonly handlers = new Map<string, Registered[]>();
  readonly toolFactories: ((ctx: Record<string, unknown>) => unknown)[] = [];
  readonly toolNames: string[] = [];
  readonly logs: { level: string; message: string }[] = [];
  readonly api: OpenClawPluginApi;
  readonly hooks: MemoryHooks;
  /** What the plugin passed to `api.registerMemoryCapability` (a host with the memory slot API). */
  readonly capabilities: MemoryCapability[] = [];

  /**
   * `memorySlot: false` is a host without `api.registerMemoryCapability` (before the unified memory
   * API): the plugin then registers its hooks and its own tools only.
   */
  constructor(
    pluginConfig: Record<string, unknown>,
    options: { allowConversationAccess?: boolean; registrationMode?: string; memorySlot?: boolean } = {},
  ) {
    const log = (level: string) => (message: string) => this.logs.push({ level, message });
    const entry = options.allowConversationAccess === false ? {} : { hooks: { allowConversationAccess: true } };
    this.api = {
      id: "memory-cortex",
      name: "Memory Cortex",
      source: "test",
      registrationMode: options.registrationMode ?? "full",
      config: { plugins: { entries: { "memory-cortex": { ...entry, config: pluginConfig } } } },
      pluginConfig,
      logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
      on: (name: string, handler: Registered["handler"], opts?: { timeoutMs?: number }) => {
        const list = this.handlers.get(name) ?? [];
        list.push({ handler, timeoutMs: opts?.timeoutMs });
        this.handlers.set(name, list);
      },
      registerTool: (factory: (ctx: Record<string, unknown>) => unknown, opts?: { names?: string[] }) => {
        this.toolFactories.push(factory);
        this.toolNames.push(...(opts?.names ?? []));
      },
      ...(options.memorySlot === false
        ? {}
        : { registerMemoryCapability: (capability: MemoryCapability) => this.capabilities.push(capability) }),
    } as unknown as OpenClawPluginApi;
    this.hooks = registerMemoryCortex(this.api);
  }

  /** Runs every handler of `name` as the runner does: awaited up to its timeoutMs, errors caught. */
  async emit<K extends HookName>(name: K, event: HookEvent<K>, ctx: HookContext<K>): Promise<Emitted> {
    const registered = this.handlers.get(name) ?? [];
    if (registered.length !== 1) throw new Error(`expected one ${name} handler, found ${registered.length}`);
    const { handler, timeoutMs } = registered[0]!;
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs ?? 30_000);
    });
    try {
      const outcome = await Promise.race([Promise.resolve().then(() => handler(event, ctx)), expired]);
      const ms = performance.now() - started;
      return outcome === "timeout"
        ? { result: undefined, ms, error: undefined, timedOut: true }
        : { result: outcome, ms, error: undefined, timedOut: false };
    } catch (error) {
      return { result: undefined, ms: performance.now() - started, error, timedOut: false };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The tool `name` as the factory builds it for a tool call in `ctx`. */
  tool(name: string, ctx: Record<string, unknown> = { sessionKey: "agent:main:test", messageChannel: "webchat" }): AgentTool {
    for (const factory of this.toolFactories) {
      const built = factory(ctx);
      for (const tool of Array.isArray(built) ? built : [built]) {
        if ((tool as AgentTool | undefined)?.name === name) return tool as AgentTool;
      }
    }
    throw new Error(`no tool ${name}`);
  }

  /** The one capability the plugin registered. */
  capability(): MemoryCapability {
    if (this.capabilities.length !== 1) throw new Error(`expected one memory capability, found ${this.capabilities.length}`);
    return this.capabilities[0]!;
  }

  warnings(): string[] {
    return this.logs.filter((entry) => entry.level === "warn").map((entry) => entry.message);
  }
}

/** An agent hook context as the embedded runner fills it for a user's turn on a channel. */
export function userTurn(sessionKey: string, extra: Record<string, unknown> = {}): HookContext<"agent_end"> {
  return {
    runId: `run-${Math.random().toString(16).slice(2)}`,
    agentId: "main",
    sessionKey,
    sessionId: `${sessionKey}-id`,
    trigger: "user",
    channel: "telegram",
    messageProvider: "telegram",
    ...extra,
  };
}

/** A message as OpenClaw's transcript holds it (content as a list of blocks, like the real ones). */
export function said(role: "user" | "assistant", text: string): Record<string, unknown> {
  return { role, content: [{ type: "text", text }], timestamp: Date.now() };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
