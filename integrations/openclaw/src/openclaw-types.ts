/**
 * Hook types taken from the published SDK.
 *
 * `openclaw/plugin-sdk/plugin-entry` exports `OpenClawPluginApi` but not the per-hook event and
 * context types; they are read off `api.on<K>` here, so `tsc` checks every handler against the very
 * types OpenClaw 2026.9.6 ships, and a renamed field breaks the typecheck instead of a user's turn.
 */
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";

declare const api: OpenClawPluginApi;

export type { OpenClawPluginApi };
export type HookName = Parameters<OpenClawPluginApi["on"]>[0];
export type HookHandler<K extends HookName> = Parameters<typeof api.on<K>>[1];
export type HookEvent<K extends HookName> = Parameters<HookHandler<K>>[0];
export type HookContext<K extends HookName> = Parameters<HookHandler<K>>[1];
export type HookResult<K extends HookName> = Awaited<ReturnType<HookHandler<K>>>;
export type HookOptions<K extends HookName> = Parameters<typeof api.on<K>>[2];
export type PluginLogger = OpenClawPluginApi["logger"];
export type AgentTool = Extract<Parameters<OpenClawPluginApi["registerTool"]>[0], { execute: unknown }>;
