/**
 * `memory-cortex openclaw connect` against the real OpenClaw 2026.9.6 these tests type-check
 * against (node_modules/.bin/openclaw), in a throw-away OpenClaw home: the plugin is installed, its
 * entry merged into the one the install writes (one key, comments kept, the file made private for
 * the token), OpenClaw loads it with its hooks allowed, a second run changes nothing, and the
 * printed undo puts the file back byte for byte.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";

import { Daemon, REPO_ROOT, daemonPython } from "./helpers.ts";

const run = promisify(execFile);
const OPENCLAW = path.resolve(import.meta.dirname, "..", "node_modules", ".bin", "openclaw");
const TOKEN = "connect-test-token-8d1e";
const ORIGINAL = `// my OpenClaw config: the user's own words
{
  // the gateway
  gateway: { port: 18789 },
  plugins: {
    entries: {
      /* pasted from the old README */
      "memory-cortex": { hooks: { allowConversationAccess: true }, config: { middlewarePort: 8300 } },
      "memory-cortex": { config: { middlewarePort: 8300 } },  // a second paste
    },
  },
}
`;

let daemon: Daemon;
let home: string;

function env(): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("MEMORY_CORTEX_")));
  return {
    ...clean,
    HOME: home,
    OPENCLAW_STATE_DIR: path.join(home, "state"),
    OPENCLAW_CONFIG_PATH: path.join(home, "openclaw.json"),
    XDG_CONFIG_HOME: path.join(home, "xdg-config"),
    XDG_DATA_HOME: path.join(home, "xdg-data"),
    MEMORY_CORTEX_SERVER__PORT: String(daemon.port),
    MEMORY_CORTEX_SERVER__API_TOKEN: TOKEN,
  };
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function connect(...args: string[]): Promise<Outcome> {
  const argv = ["-m", "memory_cortex", "openclaw", "connect", "--openclaw", OPENCLAW, "--node", process.execPath, ...args];
  try {
    const { stdout, stderr } = await run(daemonPython(), argv, { cwd: REPO_ROOT, env: env(), timeout: 300_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

async function openclaw(...args: string[]): Promise<string> {
  const { stdout } = await run(OPENCLAW, args, { env: { ...env(), PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

async function configText(): Promise<string> {
  return readFile(path.join(home, "openclaw.json"), "utf8");
}

before(async () => {
  daemon = await Daemon.start({ MEMORY_CORTEX_SERVER__API_TOKEN: TOKEN });
  home = await mkdtemp(path.join(tmpdir(), "openclaw-connect-"));
  await mkdir(path.join(home, "state"), { recursive: true });
  await writeFile(path.join(home, "openclaw.json"), ORIGINAL, { mode: 0o644 });
});

after(async () => {
  await daemon?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

describe("memory-cortex openclaw connect, with a real OpenClaw", { timeout: 900_000 }, () => {
  let undo = "";

  test("installs the plugin, merges one entry into the file keeping its comments, and OpenClaw loads it with its hooks", async () => {
    const outcome = await connect("--user-id", "sam");
    assert.equal(outcome.code, 0, outcome.stdout + outcome.stderr);
    const out = outcome.stdout;
    assert.match(out, /^OpenClaw 2026\.9\.6: /m);
    assert.match(out, /plugins\.entries\.memory-cortex\.config\.userId: \(unset\) -> "sam"/);
    assert.match(out, new RegExp(`plugins\\.entries\\.memory-cortex\\.config\\.middlewarePort: 8300 -> ${daemon.port}`));
    assert.match(out, /plugins\.entries\.memory-cortex\.config\.token: \(unset\) -> \*{8}/);
    assert.doesNotMatch(out, new RegExp(TOKEN), "the token is never printed");
    assert.match(out, /plugins\.slots\.memory: \(unset\) -> "memory-cortex"/);
    assert.match(out, /plugins\.entries\.memory-cortex\.config\.middlewareHost: \(unset\) -> "127\.0\.0\.1"/);
    assert.match(out, /\(made private \(0600\): it now holds the daemon's token\)/);
    assert.match(out, /removed an earlier duplicate of plugins\.entries\.memory-cortex \(line 8\)/);
    assert.match(out, /\(comments kept\)/);
    assert.match(out, /✓ openclaw config validate: ok/);
    assert.match(out, /✓ openclaw plugins inspect memory-cortex: loaded, in the memory slot, hooks agent_end, before_compaction, before_prompt_build/);
    assert.match(out, new RegExp(`✓ the daemon answers at http://127\\.0\\.0\\.1:${daemon.port} \\(status: ok\\)`));
    undo = /^undo: (.+)$/m.exec(out)?.[1] ?? "";
    assert.match(undo, /^openclaw plugins uninstall memory-cortex --force && cp \S+openclaw\.json\.before-memory-cortex-\d{8}T\d{12}Z \S+openclaw\.json$/);

    const text = await configText();
    for (const comment of ["// my OpenClaw config: the user's own words", "// the gateway", "/* pasted from the old README */", "// a second paste"]) {
      assert.ok(text.includes(comment), `comment kept: ${comment}\n${text}`);
    }
    assert.equal(text.match(/["']memory-cortex["']\s*:/g)?.length, 1, `one memory-cortex key:\n${text}`);
    assert.ok(text.includes(TOKEN), "the plugin's token setting holds the daemon's token");
    assert.equal((await stat(path.join(home, "openclaw.json"))).mode & 0o777, 0o600);

    // OpenClaw's own reading of the file and of the plugin.
    const entry = JSON.parse(await openclaw("config", "get", "plugins.entries.memory-cortex", "--json"));
    assert.equal(entry.enabled, true);
    assert.deepEqual(entry.hooks, { allowConversationAccess: true });
    assert.equal(entry.config.userId, "sam");
    assert.equal(entry.config.middlewarePort, daemon.port);
    assert.equal(JSON.parse(await openclaw("config", "get", "gateway.port", "--json")), 18789, "other settings untouched");
    const inspect = JSON.parse(await openclaw("plugins", "inspect", "memory-cortex", "--runtime", "--json"));
    assert.equal(inspect.plugin.status, "loaded");
    assert.equal(inspect.plugin.memorySlotSelected, true);
    assert.equal(inspect.policy.allowConversationAccess, true);
    assert.deepEqual(inspect.diagnostics, []);
  });

  test("a second run, without --user-id, keeps the entry's user and changes nothing", async () => {
    const before = await configText();
    const outcome = await connect();
    assert.equal(outcome.code, 0, outcome.stdout + outcome.stderr);
    assert.match(outcome.stdout, /^ {2}nothing: it was already connected$/m);
    assert.match(outcome.stdout, /^userId is 'sam', from the entry: /m);
    assert.match(outcome.stdout, /^undo: nothing to undo from this run \(to disconnect: openclaw plugins uninstall memory-cortex --force\)$/m);
    assert.equal(await configText(), before);
  });

  test("the printed undo puts the user's file back byte for byte", async () => {
    assert.ok(undo, "the first run printed an undo");
    await run("bash", ["-c", undo], { env: { ...env(), PATH: `${path.dirname(OPENCLAW)}:${path.dirname(process.execPath)}:${process.env.PATH}` }, timeout: 300_000 });
    assert.equal(await configText(), ORIGINAL);
  });

  test("too old a node, no OpenClaw, a folder not ours, a linked or broken openclaw.json: one line, nothing changed", async () => {
    const oldNode = path.join(home, "node20");
    await writeFile(oldNode, "#!/bin/sh\necho v20.19.2\n");
    await chmod(oldNode, 0o755);
    const tooOld = await connect("--node", oldNode);
    assert.equal(tooOld.code, 1);
    assert.match(tooOld.stderr, /node20 is node v20\.19\.2: OpenClaw needs node >= 24\.16/);

    const missing = await run(daemonPython(), ["-m", "memory_cortex", "openclaw", "connect", "--openclaw", path.join(home, "no-openclaw")], { cwd: REPO_ROOT, env: env() }).catch((error) => error);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /OpenClaw not found at .*no-openclaw: install it/);

    const notOurs = path.join(home, "stuff");
    await mkdir(notOurs);
    await writeFile(path.join(notOurs, "keep.txt"), "mine");
    const refused = await connect("--install-dir", notOurs);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /stuff is not empty and not a plugin copy this command made: nothing was changed/);
    assert.equal(await readFile(path.join(notOurs, "keep.txt"), "utf8"), "mine");
    assert.equal(await configText(), ORIGINAL);

    const real = path.join(home, "real.json");
    await writeFile(real, ORIGINAL);
    await rm(path.join(home, "openclaw.json"));
    await symlink(real, path.join(home, "openclaw.json"));
    const linked = await connect();
    assert.equal(linked.code, 1);
    assert.match(linked.stderr, /openclaw\.json is a symbolic link; OpenClaw wants the file itself there/);
    assert.equal(await readFile(real, "utf8"), ORIGINAL);
    await rm(path.join(home, "openclaw.json"));

    await writeFile(path.join(home, "openclaw.json"), "{ plugins: ");
    const broken = await connect();
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /openclaw\.json is not valid JSON5: .*fix it first \(nothing was changed\)/);
    assert.equal(await configText(), "{ plugins: ");
  });
});
