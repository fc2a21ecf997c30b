/** API keys and their roles: kept only as SHA-256 hashes, compared in constant time. */
import { hash, randomBytes, timingSafeEqual } from "node:crypto";

const HASHED_KEY = /^sha256:([0-9a-f]{64})$/i;
const PLAIN_KEY = /^[\x21-\x7e]{16,256}$/;

/**
 * What a key may do. transfer: send, look up, and see and cancel its own transfers. read: look up and see
 * what the chain shows. admin: everything, every transfer included.
 */
export const ROLES = ["transfer", "read", "admin"] as const;
export type Role = (typeof ROLES)[number];
const ROLE_PREFIX = /^(transfer|read|admin):(.+)$/;

/** A key that was presented and found: its id (safe to log) and its role. */
export interface IdentifiedKey {
  id: string;
  role: Role;
}

/** Raised for a malformed API_KEYS value; the message never repeats a key. */
export class InvalidApiKeysError extends Error {
  override name = "InvalidApiKeysError";
}

/** The keys a client may present. Holds hashes only, so plaintext keys need not stay in memory or the environment. */
export class ApiKeyRing {
  readonly #keys: { hash: Buffer; key: IdentifiedKey }[];

  private constructor(entries: { hash: Buffer; role: Role }[]) {
    this.#keys = entries.map((entry) => ({ hash: entry.hash, key: { id: keyId(entry.hash), role: entry.role } }));
  }

  /**
   * Reads API_KEYS: comma-separated entries, each a plain key (16 to 256 printable characters) or
   * `sha256:` and the 64-hex-digit SHA-256 of one (`printf %s "$KEY" | sha256sum`), optionally after a
   * role and a colon (`read:`, `admin:`; without one, `transfer`, so older settings keep their meaning).
   */
  static parse(text: string): ApiKeyRing {
    const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0);
    if (entries.length === 0) throw new InvalidApiKeysError("no key given");
    const parsed = entries.map((entry, index) => {
      const withRole = ROLE_PREFIX.exec(entry);
      const role: Role = withRole ? (withRole[1] as Role) : "transfer";
      const key = withRole ? withRole[2] : entry;
      const hashed = HASHED_KEY.exec(key);
      if (hashed) return { hash: Buffer.from(hashed[1], "hex"), role };
      if (PLAIN_KEY.test(key)) return { hash: sha256(key), role };
      throw new InvalidApiKeysError(`entry ${index + 1} is neither [role:]sha256:<64 hex digits> nor [role:]<key of 16 to 256 printable characters>`);
    });
    const hashes = new Set<string>();
    for (const [index, entry] of parsed.entries()) {
      // One key with two roles would make its rights depend on the order of the list.
      if (hashes.has(entry.hash.toString("hex"))) throw new InvalidApiKeysError(`entry ${index + 1} repeats a key given before`);
      hashes.add(entry.hash.toString("hex"));
    }
    return new ApiKeyRing(parsed);
  }

  /** The id of every key (as requests carry it in apiKeyId). */
  get ids(): string[] {
    return this.#keys.map((entry) => entry.key.id);
  }

  /** Every key's id and role, in the order configured. */
  get keys(): IdentifiedKey[] {
    return this.#keys.map((entry) => entry.key);
  }

  /** Each key as "<role> <id>", in the order configured: what the audit log records of them. */
  get described(): string[] {
    return this.#keys.map((entry) => `${entry.key.role} ${entry.key.id}`);
  }

  /** A fresh random key (for the local dev chain). */
  static generateKey(): string {
    return `dev_${randomBytes(24).toString("base64url")}`;
  }

  /**
   * The presented key's id (the first 12 hex digits of its hash: safe to log and to count by) and role, or
   * undefined. Every stored hash is compared, in constant time, whatever matches.
   */
  identify(presented: string): IdentifiedKey | undefined {
    const presentedHash = sha256(presented);
    let match: IdentifiedKey | undefined;
    for (const candidate of this.#keys) {
      if (timingSafeEqual(candidate.hash, presentedHash)) match = candidate.key;
    }
    return match;
  }
}

// The one-shot hash: this runs on every request, and it costs half of createHash().update().digest().
function sha256(text: string): Buffer {
  return hash("sha256", text, "buffer");
}

function keyId(hash: Buffer): string {
  return `key_${hash.toString("hex").slice(0, 12)}`;
}
