/** The Idempotency-Key header as routes that send read it. */
import { ServiceError } from "../errors.js";

/**
 * The key a client sent, or undefined without the header. The IETF draft sends it as a structured-field
 * string ("..."); a bare token is accepted too.
 */
export function readIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = /^"(.*)"$/.exec(header)?.[1] ?? header;
  if (!/^[\x20-\x7e]{1,255}$/.test(key) || key.trim() === "") {
    throw new ServiceError("INVALID_IDEMPOTENCY_KEY", "Idempotency-Key must be 1 to 255 printable ASCII characters");
  }
  return key;
}
