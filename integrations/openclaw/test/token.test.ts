/**
 * A daemon guarded by `server.api_token` (a daemon on another machine must have one): with the
 * plugin's `token` setting every hook and tool works; without it nothing is injected, nothing
 * crashes, and a tool says why.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Daemon, FakeOpenClaw, said, userTurn } from "./helpers.ts";

const TOKEN = "plugin-test-token-5f2c";
let daemon: Daemon;

before(async () => {
  daemon = await Daemon.start({ MEMORY_CORTEX_SERVER__API_TOKEN: TOKEN });
  await daemon.call("POST", "/memories", { user_id: "tok", fact: "Tok's cat is called Pixel.", topic: "pets" });
});

after(async () => {
  await daemon?.stop();
});

function plugin(config: Record<string, unknown> = {}): FakeOpenClaw {
  return new FakeOpenClaw({ middlewarePort: daemon.port, userId: "tok", recallTimeoutMs: 5_000, ...config });
}

describe("a daemon with an API token", () => {
  test("with the token, recall, ingest and every tool work (a body-less DELETE included)", async () => {
    const openclaw = plugin({ token: TOKEN });
    const ctx = userTurn("agent:main:token");
    const recalled = await openclaw.emit("before_prompt_build", { prompt: "What is my cat called?", messages: [] }, ctx);
    assert.match((recalled.result as { prependContext: string }).prependContext, /Pixel/);

    const ended = await openclaw.emit("agent_end", { success: true, messages: [said("user", "Remember that I love plums.")] }, ctx);
    assert.equal(ended.error, undefined);
    const { jobs } = await daemon.call("GET", "/ingest/jobs?limit=50");
    assert.ok(jobs.some((job: any) => job.session_id === "agent:main:token"));

    const stored = await openclaw.tool("cortex_store").execute("t1", { fact: "Tok plays the oboe." });
    const id = (stored.details as { id: number }).id;
    await openclaw.tool("cortex_forget").execute("t2", { id, hard: true });
    await assert.rejects(daemon.call("GET", `/memories/${id}`), /404/);
  });

  test("without the token nothing is injected, nothing throws, and a tool says it was refused", async () => {
    const openclaw = plugin();
    const recalled = await openclaw.emit("before_prompt_build", { prompt: "What is my cat called?", messages: [] }, userTurn("agent:main:no-token"));
    assert.equal(recalled.result, undefined);
    assert.equal(recalled.error, undefined);
    await assert.rejects(openclaw.tool("cortex_search").execute("t3", { query: "cat" }), /401/);
    await assert.rejects(plugin({ token: "wrong" }).tool("cortex_search").execute("t4", { query: "cat" }), /401/);
  });
});
