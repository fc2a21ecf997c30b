/** API keys: kept only as SHA-256 hashes, compared in constant time. */
import { hash, randomBytes, timingSafeEqual } from "node:crypto";

const HASHED_KEY = /^sha256:([0-9a-f]{64})$/i;
const PLAIN_KEY = /^[\x21-\x7e]{16,256}$/;

/** Raised for a malformed API_KEYS value; the message never repeats a key. */
export class InvalidApiKeysError extends Error {
  override name = "InvalidApiKeysError";
}

/** The keys a client may present. Holds hashes only, so plaintext keys need not stay in memory or the environment. */
export class ApiKeyRing {
  readonly #keys: { hash: Buffer; id: string }[];

  private constructor(hashes: Buffer[]) {
    this.#keys = hashes.map((keyHash) => ({ hash: keyHash, id: keyId(keyHash) }));
  }

  /**
   * Reads API_KEYS: comma-separated entries, each a plain key (16 to 256 printable characters) or
   * `sha256:` and the 64-hex-digit SHA-256 of one (`printf %s "$KEY" | sha256sum`).
   */
  static parse(text: string): ApiKeyRing {
    const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0);
    if (entries.length === 0) throw new InvalidApiKeysError("no key given");
    return new ApiKeyRing(
      entries.map((entry, index) => {
        const hashed = HASHED_KEY.exec(entry);
        if (hashed) return Buffer.from(hashed[1], "hex");
        if (PLAIN_KEY.test(entry)) return sha256(entry);
        throw new InvalidApiKeysError(`entry ${index + 1} is neither sha256:<64 hex digits> nor a key of 16 to 256 printable characters`);
      }),
    );
  }

  /** A fresh random key (for the local dev chain). */
  static generateKey(): string {
    return `dev_${randomBytes(24).toString("base64url")}`;
  }

  /**
   * The id of the presented key (the first 12 hex digits of its hash: safe to log and to count by), or
   * undefined. Every stored hash is compared, in constant time, whatever matches.
   */
  identify(presented: string): string | undefined {
    const presentedHash = sha256(presented);
    let match: string | undefined;
    for (const candidate of this.#keys) {
      if (timingSafeEqual(candidate.hash, presentedHash)) match = candidate.id;
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
