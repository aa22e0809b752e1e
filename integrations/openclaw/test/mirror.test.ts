/**
 * The memory slot's publicArtifacts: the owner's folder of the daemon's Markdown mirror, read from a
 * real daemon that keeps one (`markdown.sync_dir`), and nothing from a daemon that keeps none.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { DaemonClient } from "../src/client.ts";
import { resolveConfig } from "../src/config.ts";
import { listMirrorArtifacts } from "../src/memory.ts";
import { Daemon, waitFor } from "./helpers.ts";

let withMirror: Daemon;
let withoutMirror: Daemon;
let mirrorDir: string;

before(async () => {
  mirrorDir = await mkdtemp(path.join(tmpdir(), "memory-cortex-mirror-"));
  [withMirror, withoutMirror] = await Promise.all([
    Daemon.start({
      MEMORY_CORTEX_MARKDOWN__SYNC_DIR: mirrorDir,
      MEMORY_CORTEX_MARKDOWN__SYNC_DEBOUNCE_S: "0",
      MEMORY_CORTEX_INGEST__DEBOUNCE_S: "0",
    }),
    Daemon.start(),
  ]);
});

after(async () => {
  await Promise.all([withMirror?.stop(), withoutMirror?.stop()]);
  if (mirrorDir) await rm(mirrorDir, { recursive: true, force: true }); // nothing left in /tmp
});

function clientOf(daemon: Daemon): DaemonClient {
  return new DaemonClient(daemon.url);
}

async function sayTo(daemon: Daemon, user: string, text: string): Promise<void> {
  await daemon.call("POST", "/ingest", {
    messages: [{ role: "user", content: text }],
    session_id: `mirror-${user}`,
    user_id: user,
    debounce: false,
  });
}

test("the owner's MEMORY.md from the daemon's mirror, as memory-core lists a workspace", async () => {
  await sayTo(withMirror, "sam", "Remember that my sister is called Ana.");
  await sayTo(withMirror, "kim", "Remember that my brother is called Leo.");
  const config = resolveConfig({ middlewarePort: withMirror.port, userId: "sam" });
  // The mirror may write MEMORY.md (its header) before the extracted fact is in it: wait for the fact.
  const artifacts = await waitFor(
    "sam's fact in MEMORY.md of the mirror",
    async () => {
      const found = await listMirrorArtifacts(config, clientOf(withMirror));
      const root = found.find((a) => a.relativePath === "MEMORY.md");
      if (!root) return undefined;
      return /sister is called Ana/.test(await readFile(root.absolutePath, "utf8")) ? found : undefined;
    },
    30_000,
  );
  const root = artifacts.find((a) => a.relativePath === "MEMORY.md");
  assert.ok(root);
  assert.equal(root.kind, "memory-root");
  assert.equal(root.contentType, "markdown");
  assert.equal(root.workspaceDir, path.join(mirrorDir, "sam"));
  assert.match(await readFile(root.absolutePath, "utf8"), /sister is called Ana/);
  // Only the owner's folder: another sender's memories are theirs.
  for (const artifact of artifacts) assert.equal(artifact.workspaceDir, path.join(mirrorDir, "sam"));
  for (const artifact of artifacts.filter((a) => a.relativePath !== "MEMORY.md")) {
    assert.match(artifact.relativePath, /^memory\/.+\.md$/);
    assert.equal(artifact.kind, "daily-note");
  }
});

test("no artifacts from a daemon without a mirror, or for a user with no memories", async () => {
  const without = resolveConfig({ middlewarePort: withoutMirror.port, userId: "sam" });
  assert.deepEqual(await listMirrorArtifacts(without, clientOf(withoutMirror)), []);
  const nobody = resolveConfig({ middlewarePort: withMirror.port, userId: "nobody" });
  assert.deepEqual(await listMirrorArtifacts(nobody, clientOf(withMirror)), []);
});
