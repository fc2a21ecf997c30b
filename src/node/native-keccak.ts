/**
 * Keccak-256 for ethers from the `keccak` package's native binding. A transfer hashes several times
 * (the unsigned and signed transaction, checksummed addresses), about 80 µs in ethers' JavaScript
 * keccak and a tenth of that natively. ethers offers `keccak256.register` for exactly this swap; it is
 * process-wide, so it is made once, at connection time, and the result is the same bytes.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { keccak256 } from "ethers";

/** The `keccak` package's native sponge (its addon's KeccakState), used here without the package's stream around it. */
interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  squeeze(length: number): Buffer;
}

/** Makes one sponge; undefined where the addon does not load. */
type LoadKeccakState = () => (new () => KeccakState) | undefined;

/** Keccak-256's rate and capacity in bits (the package's "keccak256": no SHA-3 suffix). */
const RATE = 1088;
const CAPACITY = 512;

/** Registers the native keccak-256 with ethers when its binding loads; says which one ethers now uses. */
export function useNativeKeccak(loadNative: LoadKeccakState = loadKeccakState): "native" | "ethers" {
  const KeccakState = loadNative();
  if (!KeccakState) return "ethers";
  // One sponge, initialized afresh for each hash: the package's createKeccak built a stream (and a native
  // object) per hash, which took 3 % of the service's thread at concurrency 50. Hashing is synchronous.
  const sponge = new KeccakState();
  const hash = (data: Uint8Array): Uint8Array => {
    sponge.initialize(RATE, CAPACITY);
    sponge.absorb(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return sponge.squeeze(32);
  };
  // The addon's sponge is the package's inside, not its API: a version that changed it must not hash
  // transactions differently. Checked against ethers' own keccak around the rate before it is used.
  if (!sameAsEthers(hash)) return "ethers";
  keccak256.register(hash);
  return "native";
}

/** Lengths around Keccak-256's 136-byte rate, and none. */
const KNOWN_ANSWER_LENGTHS = [0, 1, 32, 135, 136, 137, 271, 272, 300];

function sameAsEthers(hash: (data: Uint8Array) => Uint8Array): boolean {
  try {
    return KNOWN_ANSWER_LENGTHS.every((length) => {
      const data = Uint8Array.from({ length }, (_, index) => (index * 31 + length) & 0xff);
      return Buffer.from(hash(data)).equals(Buffer.from(keccak256._(data)));
    });
  } catch {
    return false;
  }
}

function loadKeccakState(): (new () => KeccakState) | undefined {
  try {
    // The addon only, as the package's bindings.js loads it: its fallback is another JavaScript keccak, no
    // better than ethers' own.
    const keccakPackage = createRequire(import.meta.url).resolve("keccak/package.json");
    const addon = createRequire(keccakPackage)("node-gyp-build")(dirname(keccakPackage)) as unknown;
    return typeof addon === "function" ? (addon as new () => KeccakState) : undefined;
  } catch {
    return undefined;
  }
}
