/**
 * A daemon without an LLM for answers (the default: the rules extractor) answers /recall with the
 * facts as a list (answer_kind "list", not degraded). The context block already holds those facts,
 * so the plugin never injects that list as a synthesis.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Daemon, FakeOpenClaw, userTurn } from "./helpers.ts";

let daemon: Daemon;

before(async () => {
  daemon = await Daemon.start(); // llm.backend: rules
  await daemon.call("POST", "/memories", {
    memories: [{ user_id: "sam", topic: "family", fact: "Sam's sister Ana lives in Lisbon.", importance: 8 }],
  });
});

after(async () => {
  await daemon?.stop();
});

describe("a daemon without an LLM", () => {
  test("answers /recall with a list, and the plugin keeps it out of the prompt", async () => {
    const answer = await daemon.call("POST", "/recall", { query: "Where does Ana live?", user_id: "sam" });
    assert.equal(answer.answer_kind, "list");
    assert.equal(answer.degraded, false);
    assert.match(answer.response, /^- Sam's sister Ana lives in Lisbon\.$/);

    const openclaw = new FakeOpenClaw({ middlewarePort: daemon.port, userId: "sam", recallTimeoutMs: 5_000 });
    const ctx = userTurn("agent:main:list");
    const first = await openclaw.emit("before_prompt_build", { prompt: "Where does my sister Ana live?", messages: [] }, ctx);
    assert.match((first.result as { prependContext: string }).prependContext, /Lisbon/); // the block has it
    await openclaw.hooks.idle();
    assert.equal(openclaw.hooks.synthesisFor("agent:main:list"), undefined);
    const second = await openclaw.emit("before_prompt_build", { prompt: "And what does Ana do?", messages: [] }, ctx);
    assert.doesNotMatch((second.result as { prependContext: string }).prependContext, /Recalled for the previous message/);
  });
});
