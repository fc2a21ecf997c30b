/**
 * Keccak-256 for ethers from the `keccak` package's native binding. A transfer hashes several times
 * (the unsigned and signed transaction, checksummed addresses), about 80 µs in ethers' JavaScript
 * keccak and a tenth of that natively. ethers offers `keccak256.register` for exactly this swap; it is
 * process-wide, so it is made once, at connection time, and the result is the same bytes.
 */
import { createRequire } from "node:module";
import { keccak256 } from "ethers";

/** The part of the `keccak` package's native binding used here. */
type CreateKeccak = (algorithm: "keccak256") => { update(data: Buffer): { digest(): Buffer } };

/** Registers the native keccak-256 with ethers when its binding loads; says which one ethers now uses. */
export function useNativeKeccak(loadNative = loadNativeKeccak): "native" | "ethers" {
  const createKeccak = loadNative();
  if (!createKeccak) return "ethers";
  keccak256.register((data) => createKeccak("keccak256").update(Buffer.from(data.buffer, data.byteOffset, data.byteLength)).digest());
  return "native";
}

function loadNativeKeccak(): CreateKeccak | undefined {
  try {
    // The binding only: the package's fallback is another JavaScript keccak, no better than ethers' own.
    return createRequire(import.meta.url)("keccak/bindings") as CreateKeccak;
  } catch {
    return undefined;
  }
}
