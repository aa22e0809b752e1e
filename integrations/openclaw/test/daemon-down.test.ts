/**
 * With the daemon stopped (nothing listens) or hung (it accepts and never answers), every hook
 * returns within its own timeout, never throws, and injects nothing; the tools fail with a readable
 * error instead of hanging.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { INGEST_TIMEOUT_MS } from "../src/hooks.ts";
import { Blackhole, type Emitted, FakeOpenClaw, freePort, said, userTurn } from "./helpers.ts";

const SESSION = "agent:main:telegram:direct:7";
const TRANSCRIPT = [said("user", "Remember that my sister is called Ana."), said("assistant", "Noted!")];

/** Every hook of a turn and of a session's end, as OpenClaw emits them. */
async function everyHook(openclaw: FakeOpenClaw): Promise<Record<string, Emitted>> {
  const ctx = userTurn(SESSION);
  const sessionCtx = { sessionId: `${SESSION}-id`, sessionKey: SESSION, agentId: "main" };
  // The recall hook first (it keeps the transcript for the flushes), then the rest at once, as
  // OpenClaw's observe hooks may overlap.
  const recall = await openclaw.emit(
    "before_prompt_build",
    { prompt: "Who is Ana?", currentUserMessage: "Who is Ana?", messages: TRANSCRIPT },
    ctx,
  );
  const [agentEnd, compaction, reset, sessionEnd] = await Promise.all([
    openclaw.emit("agent_end", { success: true, messages: TRANSCRIPT }, ctx),
    openclaw.emit("before_compaction", { messageCount: 2, tokenCount: 50_000 }, ctx),
    openclaw.emit("before_reset", { reason: "reset", messages: TRANSCRIPT }, userTurn("agent:main:other")),
    openclaw.emit("session_end", { sessionId: `${SESSION}-id`, sessionKey: SESSION, messageCount: 2 }, sessionCtx),
  ]);
  return { before_prompt_build: recall, agent_end: agentEnd!, before_compaction: compaction!, before_reset: reset!, session_end: sessionEnd! };
}

function assertQuietFailure(results: Record<string, Emitted>, recallTimeoutMs: number): void {
  for (const [hook, emitted] of Object.entries(results)) {
    assert.equal(emitted.error, undefined, `${hook} threw: ${String(emitted.error)}`);
    assert.equal(emitted.timedOut, false, `${hook} outlived its registered timeout (${emitted.ms} ms)`);
    assert.equal(emitted.result, undefined, `${hook} returned something`);
    const ownBudget = hook === "before_prompt_build" ? recallTimeoutMs : INGEST_TIMEOUT_MS;
    assert.ok(emitted.ms < ownBudget + 250, `${hook} took ${Math.round(emitted.ms)} ms (budget ${ownBudget} ms)`);
  }
}

describe("daemon stopped: nothing listens on the port", () => {
  let port: number;
  before(async () => {
    port = await freePort();
  });

  test("every hook returns at once, never throws, injects nothing; the loss is logged", async () => {
    const openclaw = new FakeOpenClaw({ middlewarePort: port });
    const results = await everyHook(openclaw);
    assertQuietFailure(results, 200);
    for (const emitted of Object.values(results)) assert.ok(emitted.ms < 1_000, `${emitted.ms} ms against a closed port`);
    assert.ok(openclaw.logs.some((entry) => entry.level === "debug" && /no memories injected: .*ECONNREFUSED/.test(entry.message)));
    assert.ok(openclaw.warnings().some((message) => /agent_end: the session was not handed to the daemon/.test(message)));
    await openclaw.hooks.idle(); // no background /recall was started against a dead daemon
  });

  test("the tools fail fast with an error the model can read", async () => {
    const openclaw = new FakeOpenClaw({ middlewarePort: port });
    for (const [name, params] of [
      ["cortex_search", { query: "Ana" }],
      ["cortex_store", { fact: "Sam's sister is called Ana." }],
      ["cortex_forget", { id: 1 }],
    ] as const) {
      const started = performance.now();
      await assert.rejects(openclaw.tool(name).execute("call", params), /Memory Cortex daemon is unavailable .*ECONNREFUSED/);
      assert.ok(performance.now() - started < 2_000);
    }
  });
});

describe("daemon hung: it accepts connections and never answers", () => {
  let blackhole: Blackhole;
  before(async () => {
    blackhole = await new Blackhole().start();
  });
  after(async () => {
    await blackhole.stop();
  });

  test("every hook gives up at its own deadline and the turn goes on", async () => {
    const openclaw = new FakeOpenClaw({ middlewarePort: blackhole.port });
    const results = await everyHook(openclaw);
    assertQuietFailure(results, 200);
    assert.ok(results.before_prompt_build!.ms >= 150, "the recall hook waited for its budget");
    assert.ok(openclaw.logs.some((entry) => /no memories injected: .*no answer within 200 ms/.test(entry.message)));
  });

  test("a recall budget set by the user is the one kept", async () => {
    const openclaw = new FakeOpenClaw({ middlewarePort: blackhole.port, recallTimeoutMs: 50 });
    const emitted = await openclaw.emit(
      "before_prompt_build",
      { prompt: "Who is Ana?", currentUserMessage: "Who is Ana?", messages: [] },
      userTurn(SESSION),
    );
    assert.equal(emitted.result, undefined);
    assert.ok(emitted.ms < 50 + 250, `${emitted.ms} ms`);
  });

  test("a tool call is cancelled by OpenClaw's signal", async () => {
    const openclaw = new FakeOpenClaw({ middlewarePort: blackhole.port });
    const started = performance.now();
    await assert.rejects(
      openclaw.tool("cortex_search").execute("call", { query: "Ana" }, AbortSignal.timeout(100)),
      /unavailable .*cancelled/,
    );
    assert.ok(performance.now() - started < 1_000);
  });
});
