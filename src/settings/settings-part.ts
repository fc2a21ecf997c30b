/**
 * What each part of the service declares about the environment it reads: its variables, their schema, and
 * the rules across variables a schema cannot say. Each part keeps its own in its folder's `settings.ts`;
 * config.ts gathers them into one schema and one loader. A settings file imports only this and the
 * domain's helpers (test/architecture.test.ts places them all in this layer), so config can gather them.
 */
import type { TProperties } from "@sinclair/typebox";

/** The variables as read, by field: trimmed text, before the schema converts or checks it. */
export type RawSettings = Record<string, unknown>;

/** One part's settings. */
export interface SettingsPart<P extends TProperties> {
  /** Each field's schema, with its description and default. */
  schema: P;
  /** Each field's environment variable. */
  variables: { [K in keyof P]: string };
  /** What a malformed value should look like, where the schema's own words would not help the operator. */
  expectations?: { [K in keyof P]?: string };
  /** Fields that hold a secret: a summary says only that they are set. */
  secrets?: readonly (keyof P & string)[];
  /** Fields that are URLs, whose path, query or user part can carry a key; "several" when comma-separated. */
  urls?: { [K in keyof P]?: "one" | "several" };
  /**
   * Rules across variables (this part's, or another's a rule of this part depends on): one line per
   * problem, naming the variable and never echoing a value.
   */
  check?(raw: RawSettings, problems: string[]): void;
}

/** Declares a part's settings, checking that every field has a variable. */
export function settingsPart<P extends TProperties>(part: SettingsPart<P>): SettingsPart<P> {
  return part;
}

/** Raised when the environment does not describe a usable configuration; the message names every bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export const HEX_ADDRESS = "^0x[0-9a-fA-F]{40}$";
export const GWEI = "^[0-9]+(\\.[0-9]{1,9})?$";
export const ETHER = "^[0-9]+(\\.[0-9]{1,18})?$";
export const TOKEN_UNITS = "^[0-9]+(\\.[0-9]+)?$";
/** What an amount of TOKEN_UNITS should look like. */
export const TOKEN_UNITS_EXPECTED = "must be a plain decimal number of tokens, such as 1000 or 2.5";

/** A real chain is to be used: RPC_URL (not an anvil to set up) or the networks of NETWORKS_FILE. */
export function namesARealChain(raw: RawSettings): boolean {
  return Boolean((raw.rpcUrl && raw.demoSetup !== "true") || raw.networksFile);
}

/** A comma-separated variable's entries, trimmed. */
export function listOf(value: string): string[] {
  return value.split(",").map((entry) => entry.trim());
}
