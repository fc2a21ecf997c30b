/**
 * Who holds each API key (API_KEY_HOLDERS): the controls that want two people (two-person approval, a resume
 * that needs a second admin) count the keys of one holder as one person. A key no entry names is a person
 * of its own.
 */
import { ApiKeyRing } from "./api-keys.js";

/** A key's id as requests carry it (apiKeyId): key_ and the first 12 hex digits of its hash. */
const KEY_ID = /^key_[0-9a-f]{12}$/;
const HOLDER = /^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/;

/** Raised for a malformed API_KEY_HOLDERS value, naming the entry. */
export class InvalidKeyHoldersError extends Error {
  override name = "InvalidKeyHoldersError";
}

/** The holders of API_KEYS's keys as configured (none when there are no keys: AUTH_DISABLED). */
export function keyHoldersOf(settings: { apiKeys?: string; apiKeyHolders?: string; authDisabled?: boolean }): KeyHolders {
  if (settings.authDisabled || settings.apiKeys === undefined) return KeyHolders.NONE;
  return KeyHolders.parse(settings.apiKeyHolders, ApiKeyRing.parse(settings.apiKeys).ids);
}

export class KeyHolders {
  readonly #holders: ReadonlyMap<string, string>;

  private constructor(holders: ReadonlyMap<string, string>) {
    this.#holders = holders;
  }

  /** No holders named: every key is a person of its own. */
  static readonly NONE = new KeyHolders(new Map());

  /**
   * Reads API_KEY_HOLDERS: comma-separated `<key id>=<holder>` (`key_0123456789ab=alice`), each key once;
   * `knownIds`: the ids of API_KEYS, which every entry must name.
   */
  static parse(text: string | undefined, knownIds: readonly string[]): KeyHolders {
    if (text === undefined) return KeyHolders.NONE;
    const holders = new Map<string, string>();
    const known = new Set(knownIds);
    for (const [index, entry] of text.split(",").map((part) => part.trim()).filter(Boolean).entries()) {
      const [id, holder, ...rest] = entry.split("=").map((part) => part.trim());
      if (rest.length > 0 || !KEY_ID.test(id ?? "") || !HOLDER.test(holder ?? "")) {
        throw new InvalidKeyHoldersError(`entry ${index + 1} is not <key id>=<holder> (key_ and 12 hex digits, as the logs name keys; a name of letters, digits, spaces and ._@-)`);
      }
      if (!known.has(id)) throw new InvalidKeyHoldersError(`entry ${index + 1} names ${id}, which is none of API_KEYS's keys`);
      if (holders.has(id)) throw new InvalidKeyHoldersError(`entry ${index + 1} names ${id} again`);
      holders.set(id, holder);
    }
    return new KeyHolders(holders);
  }

  /** The person who holds the key `keyId`: its holder (as written), or the key itself when none is named. */
  personOf(keyId: string): string {
    return this.#holders.get(keyId) ?? keyId;
  }

  /** Who the key's holder is, one value per person however the name is written ("Alice" and "alice " are one). */
  identityOf(keyId: string): string {
    const holder = this.#holders.get(keyId);
    return holder === undefined ? `key:${keyId}` : `holder:${holder.trim().toLowerCase()}`;
  }

  /** Whether the two keys are one person's: the same key, or two keys of one holder. */
  samePerson(keyId: string, other: string): boolean {
    return this.identityOf(keyId) === this.identityOf(other);
  }
}
