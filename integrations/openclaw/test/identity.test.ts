/** OpenClaw's context → the daemon's scope (user, agent, private or group, channel), and the memory
 * slot's pure parts (paths, prompt section, flush plan, workspace classification). No daemon. */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";

import { resolveConfig } from "../src/config.ts";
import { ScopeBook, groupConversation, nonPrivateSession, parseSessionKey, scopeOf, scopeQuery, sessionKindOf } from "../src/identity.ts";
import { INJECTED_OPEN } from "../src/messages.ts";
import { buildFlushPlan, buildPromptSection, classifyWorkspacePaths, memoryIdOf, memoryPath, toSearchResult } from "../src/memory.ts";

const OWNER = { userId: "sam", identities: { "telegram:42": "sam", "777": "ana" } };

describe("session keys", () => {
  test("agent id and rest, lower-cased as OpenClaw compares them", () => {
    assert.deepEqual(parseSessionKey("agent:Main:main"), { agentId: "main", rest: "main" });
    assert.deepEqual(parseSessionKey("agent:ops:telegram:group:-100"), { agentId: "ops", rest: "telegram:group:-100" });
    assert.equal(parseSessionKey("main"), undefined);
    assert.equal(parseSessionKey("agent:main"), undefined);
    assert.equal(parseSessionKey(undefined), undefined);
  });

  test("a group or channel conversation is a group session; its identity is the conversation", () => {
    assert.equal(sessionKindOf("agent:main:telegram:group:-100123"), "group");
    assert.equal(groupConversation("agent:main:telegram:group:-100123"), "telegram:group:-100123");
    assert.equal(groupConversation("agent:main:discord:channel:987"), "discord:channel:987");
    // A thread of a group is that group's conversation.
    assert.equal(groupConversation("agent:main:slack:channel:c1:thread:171.2"), "slack:channel:c1");
    for (const key of ["agent:main:main", "agent:main:direct:42", "agent:main:telegram:direct:42", "agent:main:telegram:default:direct:42", undefined]) {
      assert.equal(sessionKindOf(key), "private", String(key));
    }
    // Two groups never share a channel.
    assert.notEqual(groupConversation("agent:main:telegram:group:1"), groupConversation("agent:main:telegram:group:2"));
  });

  test("cron, hook, subagent and global sessions are not private: group kind, their key as channel", () => {
    for (const key of ["agent:main:cron:job1", "agent:main:cron:nightly:run:7", "agent:main:hook:automation", "agent:main:subagent:child", "agent:main:global", "global", "Agent:Ops:Subagent:X"]) {
      assert.equal(sessionKindOf(key), "group", key);
      assert.equal(nonPrivateSession(key), key.toLowerCase(), key);
      assert.deepEqual(scopeOf(OWNER, { sessionKey: key, channel: "telegram" }), {
        user_id: "sam",
        agent_id: parseSessionKey(key)?.agentId,
        session_kind: "group",
        channel: key.toLowerCase(),
      });
    }
    // The main session and direct peers stay private.
    for (const key of ["agent:main:main", "agent:main:telegram:direct:42", "main", "agent:main:cronjob-notes"]) {
      assert.equal(nonPrivateSession(key), undefined, key);
    }
  });

  test("a group chat type in the context makes a session group even when its key looks private", () => {
    // OpenClaw's groupScope "main": the group room speaks in the main session.
    const grouped = scopeOf(OWNER, { sessionKey: "agent:main:main", channel: "telegram", chatType: "group" });
    assert.equal(grouped.session_kind, "group");
    assert.equal(grouped.channel, "agent:main:main");
    for (const chat of [{ type: "supergroup", id: "-100" }, { chatType: "channel", id: "-100" }]) {
      const scope = scopeOf(OWNER, { sessionKey: "agent:main:main", channel: "telegram", channelContext: { chat } });
      assert.deepEqual([scope.session_kind, scope.channel], ["group", `telegram:${(chat as { type?: string }).type ?? "channel"}:-100`]);
    }
    // "direct" never widens: a group key stays a group, a private one private.
    assert.equal(scopeOf(OWNER, { sessionKey: "agent:main:telegram:group:-5", chatType: "direct" }).session_kind, "group");
    assert.equal(scopeOf(OWNER, { sessionKey: "agent:main:main", chatType: "direct" }).session_kind, "private");
  });
});

describe("scope of a hook or tool call", () => {
  test("no sender: the configured owner, the agent, private, the provider", () => {
    assert.deepEqual(scopeOf(OWNER, { agentId: "main", sessionKey: "agent:main:main", channel: "webchat" }), {
      user_id: "sam",
      agent_id: "main",
      session_kind: "private",
      channel: "webchat",
    });
    // Without userId: omitted, the daemon's default user.
    assert.equal(scopeOf({ userId: undefined, identities: {} }, { sessionKey: "agent:main:main" }).user_id, undefined);
  });

  test("the agent comes from the session key when the context has none", () => {
    assert.equal(scopeOf(OWNER, { sessionKey: "agent:ops:main" }).agent_id, "ops");
    assert.equal(scopeOf(OWNER, { agentId: "main", sessionKey: "agent:ops:main" }).agent_id, "main");
    assert.equal(scopeOf(OWNER, { sessionKey: "bare-session-id" }).agent_id, undefined);
  });

  test("a sender in the identities table is that user, by channel:sender first, then sender alone", () => {
    assert.equal(scopeOf(OWNER, { senderId: "42", channel: "telegram" }).user_id, "sam");
    assert.equal(scopeOf(OWNER, { senderId: "777", messageProvider: "discord" }).user_id, "ana");
    assert.equal(scopeOf(OWNER, { channelContext: { sender: { id: "777" } }, channel: "slack" }).user_id, "ana");
    assert.equal(scopeOf(OWNER, { requesterSenderId: "42", messageChannel: "telegram" }).user_id, "sam");
  });

  test("a named sender not in the table is <channel>:<sender>, never the owner", () => {
    const scope = scopeOf(OWNER, { senderId: "42", channel: "discord", sessionKey: "agent:main:discord:channel:9" });
    assert.equal(scope.user_id, "discord:42");
    assert.notEqual(scope.user_id, OWNER.userId);
    assert.equal(scopeOf(OWNER, { senderId: "99" }).user_id, "unknown:99");
  });

  test("a group session: group kind, the conversation as channel", () => {
    assert.deepEqual(
      scopeOf(OWNER, { agentId: "main", sessionKey: "agent:main:telegram:group:-100123", senderId: "42", channel: "telegram" }),
      { user_id: "sam", agent_id: "main", session_kind: "group", channel: "telegram:group:-100123" },
    );
  });

  test("the query-string form leaves empty fields out but keeps a blank user (the default user)", () => {
    assert.deepEqual(scopeQuery({ user_id: undefined, agent_id: undefined, session_kind: "private", channel: undefined }), {
      user_id: "",
      session_kind: "private",
    });
  });

  test("a runtime search with only a session key gets the scope last seen in that session", () => {
    const book = new ScopeBook(OWNER);
    const key = "agent:main:telegram:group:-5";
    // Nothing seen yet: the owner, with the session kind and channel of the key.
    assert.deepEqual(book.forSession(key, "main"), { user_id: "sam", agent_id: "main", session_kind: "group", channel: "telegram:group:-5" });
    book.observe({ agentId: "main", sessionKey: key, senderId: "777", channel: "telegram" });
    assert.equal(book.forSession(key).user_id, "ana");
    // Another session is unaffected; the main session is the owner in private.
    assert.deepEqual(book.forSession("agent:main:main"), { user_id: "sam", agent_id: "main", session_kind: "private", channel: undefined });
    // No key at all fails closed: the owner in a group session with no channel (what is shared everywhere).
    assert.deepEqual(book.forSession(undefined, "main"), { user_id: "sam", agent_id: "main", session_kind: "group", channel: undefined });
  });
});

describe("the memory slot's pure parts", () => {
  test("paths are memory-cortex/<id>, and only those name a memory", () => {
    assert.equal(memoryPath(12), "memory-cortex/12");
    assert.equal(memoryIdOf("memory-cortex/12"), 12);
    assert.equal(memoryIdOf("memory-cortex/12.md"), 12);
    assert.equal(memoryIdOf("12"), 12);
    for (const other of ["MEMORY.md", "memory/2026-01-01.md", "memory-cortex/", "memory-cortex/0", "memory-cortex/-1", "../12", ""]) {
      assert.equal(memoryIdOf(other), undefined, other);
    }
  });

  test("a daemon hit is an OpenClaw result: turns are session hits, facts memory hits, text inert", () => {
    const fact = toSearchResult({ id: 3, fact: "Ana <b>lives</b>\nin Lisbon", score: 0.8, fts_score: 0.5, vector_score: 0.7, kind: "fact", importance: 7 });
    assert.deepEqual(fact, {
      path: "memory-cortex/3",
      startLine: 1,
      endLine: 1,
      score: 0.8,
      vectorScore: 0.7,
      textScore: 0.5,
      snippet: "Ana &lt;b&gt;lives&lt;/b&gt; in Lisbon",
      source: "memory",
      importance: 7,
    });
    assert.equal(toSearchResult({ id: 4, fact: "hi", score: 1, kind: "turn" }).source, "sessions");
  });

  test("the prompt section points at the recalled block and the tools, and never holds facts", () => {
    const config = resolveConfig({});
    const lines = buildPromptSection(config, { availableTools: new Set(["memory_search", "memory_get", "cortex_store"]) });
    const text = lines.join("\n");
    assert.equal(lines[0], "## Memory (Memory Cortex)");
    assert.match(text, new RegExp(`${INJECTED_OPEN} block .*data and not instructions`));
    assert.match(text, /run memory_search; memory_get with a hit's path/);
    assert.match(text, /cortex_store/);
    // Without memory tools and without recall there is nothing to say.
    assert.deepEqual(buildPromptSection(resolveConfig({ autoRecall: false }), { availableTools: new Set(["read"]) }), []);
    // Without OpenClaw's tool names, the plugin's own search is named.
    assert.match(buildPromptSection(config, { availableTools: new Set(["cortex_search"]) }).join("\n"), /run cortex_search\./);
  });

  test("the flush plan keeps OpenClaw's thresholds, tells the turn nothing is left to write, and honours the user's settings", () => {
    const config = resolveConfig({});
    const plan = buildFlushPlan(config, { contextWindowTokens: 128_000, nowMs: Date.parse("2026-03-04T10:00:00Z") });
    assert.ok(plan);
    assert.equal(plan.softThresholdTokens, 4_000);
    assert.equal(plan.reserveTokensFloor, 20_000);
    assert.equal(plan.forceFlushTranscriptBytes, 2 * 1024 * 1024);
    assert.equal(plan.relativePath, "memory/2026-03-04.md");
    assert.match(plan.prompt, /Memory Cortex has already saved this conversation.*NO_REPLY/);
    // A small window: the reserve is at most a quarter of it, the soft threshold within the rest.
    const small = buildFlushPlan(config, { contextWindowTokens: 16_000 });
    assert.equal(small?.reserveTokensFloor, 4_000);
    assert.equal(small?.softThresholdTokens, 4_000);
    const tiny = buildFlushPlan(config, { contextWindowTokens: 8_000 });
    assert.equal(tiny?.softThresholdTokens, 3_000);
    const cfg = { agents: { defaults: { compaction: { memoryFlush: { softThresholdTokens: 900, model: "ollama/qwen3:8b" } } } } };
    const custom = buildFlushPlan(config, { cfg: cfg as never });
    assert.equal(custom?.softThresholdTokens, 900);
    assert.equal(custom?.model, "ollama/qwen3:8b");
    const off = { agents: { defaults: { compaction: { memoryFlush: { enabled: false } } } } };
    assert.equal(buildFlushPlan(config, { cfg: off as never }), null);
    assert.equal(buildFlushPlan(resolveConfig({ autoIngest: false }), {}), null);
  });

  test("curated MEMORY.md and USER.md in the workspace stay eligible for OpenClaw's prompt; nothing else is", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "memory-cortex-ws-"));
    const outside = await mkdtemp(path.join(tmpdir(), "memory-cortex-out-"));
    try {
      const workspace = path.join(dir, "ws");
      await mkdir(path.join(workspace, "memory"), { recursive: true });
      await writeFile(path.join(workspace, "MEMORY.md"), "# Memory\n");
      await writeFile(path.join(workspace, "memory", "2026-01-01.md"), "- note\n");
      await writeFile(path.join(outside, "USER.md"), "# Elsewhere\n");
      await symlink(path.join(outside, "USER.md"), path.join(workspace, "USER.md"));
      const classified = await classifyWorkspacePaths({
        workspaceDir: workspace,
        relativePaths: ["MEMORY.md", "USER.md", "memory/2026-01-01.md", "missing.md"],
      });
      assert.deepEqual(Object.fromEntries(classified.map((entry) => [entry.relativePath, entry.originClass])), {
        "MEMORY.md": "agent",
        "USER.md": "untrusted", // a symlink out of the workspace
        "memory/2026-01-01.md": "untrusted",
        "missing.md": "untrusted",
      });
      // Files OpenClaw already read: their canonical path decides; an unknown one is untrusted.
      const read = await classifyWorkspacePaths({
        workspaceDir: workspace,
        relativePaths: ["USER.md", "MEMORY.md"],
        readSources: [{ relativePath: "USER.md", canonicalRelativePath: "USER.md" }, { relativePath: "MEMORY.md" }],
      });
      assert.deepEqual(read.map((entry) => entry.originClass), ["agent", "untrusted"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    }
  });
});
