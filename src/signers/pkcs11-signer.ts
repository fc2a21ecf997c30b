/**
 * The wallet's key in a PKCS#11 HSM (YubiHSM 2, CloudHSM, Luna, SoftHSM): found by token and key label,
 * used through a few logged-in sessions, one signature at a time each (PKCS#11 allows one operation per
 * session), so signatures are made side by side without holding the event loop (C_SignAsync).
 */
import { readFile } from "node:fs/promises";
import { hexlify, toBigInt } from "ethers";
import type * as Pkcs11 from "pkcs11js";
import { addressOfPublicKey, ethereumSignature } from "./ecdsa-signature.js";
import { SigningSessions } from "./signing-sessions.js";
import { SignerStartupError, SignerUnavailableError, type WalletSigner } from "./wallet-signer.js";

export interface Pkcs11Settings {
  /** Path of the vendor's PKCS#11 library (.so). */
  modulePath: string;
  tokenLabel: string;
  keyLabel: string;
  pinFile: string;
}

/**
 * Sessions opened for signing, per key: enough for a burst, few enough for an HSM whose library counts
 * PKCS#11 sessions against a limit (a pool of keys holds four each).
 */
const SIGNING_SESSIONS = 4;
/** How long a closing signer waits for its signatures under way: an HSM that never answers must not hold shutdown. */
const CLOSE_WAIT_MS = 10_000;
/** DER of the secp256k1 curve's object identifier (1.3.132.0.10), as CKA_EC_PARAMS holds it. */
const SECP256K1_PARAMS = "0x06052b8104000a";

/**
 * A library loaded and initialised once in the process (PKCS#11 is initialised once per process), shared
 * by the signers that use it (a pool's lanes on one HSM) and finalised when the last of them closes.
 */
interface SharedLibrary {
  module: Pkcs11.PKCS11;
  users: number;
}
const librariesByPath = new Map<string, SharedLibrary>();

/** Opens the module, logs in to the token and finds the key pair; SignerStartupError names the variable. */
export async function openPkcs11Signer(settings: Pkcs11Settings): Promise<WalletSigner> {
  const { modulePath, tokenLabel, keyLabel, pinFile } = settings;
  const pin = await readPin(pinFile);
  const pkcs11js = await loadBinding();
  const module = acquireLibrary(pkcs11js, modulePath);
  const sessions: Pkcs11.Handle[] = [];
  try {
    const slot = module.C_GetSlotList(true).find((candidate) => module.C_GetTokenInfo(candidate).label.trim() === tokenLabel);
    if (slot === undefined) throw new SignerStartupError(`PKCS11_TOKEN_LABEL: no token labelled "${tokenLabel}" in ${modulePath}`);
    for (let opened = 0; opened < SIGNING_SESSIONS; opened++) sessions.push(module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION));
    try {
      // One login serves every session of the application on the token, another signer's too.
      module.C_Login(sessions[0], pkcs11js.CKU_USER, pin);
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === pkcs11js.CKR_PIN_INCORRECT || code === pkcs11js.CKR_PIN_INVALID || code === pkcs11js.CKR_PIN_LEN_RANGE) {
        throw new SignerStartupError(`PKCS11_PIN_FILE: the PIN does not open token "${tokenLabel}"`);
      }
      if (code === pkcs11js.CKR_PIN_LOCKED) throw new SignerStartupError(`PKCS11_PIN_FILE: token "${tokenLabel}" has locked its PIN`);
      if (code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw error;
    }
    const privateKey = findObject(module, pkcs11js, sessions[0], pkcs11js.CKO_PRIVATE_KEY, keyLabel);
    const publicKey = findObject(module, pkcs11js, sessions[0], pkcs11js.CKO_PUBLIC_KEY, keyLabel);
    if (privateKey === null || publicKey === null) {
      throw new SignerStartupError(`PKCS11_KEY_LABEL: token "${tokenLabel}" holds no ${privateKey === null ? "private" : "public"} key labelled "${keyLabel}"`);
    }
    const [params, point] = module.C_GetAttributeValue(sessions[0], publicKey, [{ type: pkcs11js.CKA_EC_PARAMS }, { type: pkcs11js.CKA_EC_POINT }]);
    if (!params.value || hexlify(params.value) !== SECP256K1_PARAMS) {
      throw new SignerStartupError(`PKCS11_KEY_LABEL: key "${keyLabel}" is not a secp256k1 key; an Ethereum wallet key must be`);
    }
    const address = addressOfPublicKey(uncompressedPoint(point.value as Buffer));
    const signingSessions = new SigningSessions(sessions);
    let closed: Promise<void> | undefined;
    return {
      kind: "pkcs11",
      address,
      description: `pkcs11 key "${keyLabel}" on token "${tokenLabel}" (${modulePath})`,
      async sign(digest) {
        const session = await signingSessions.take();
        let raw: Buffer;
        try {
          module.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, privateKey);
          raw = await module.C_SignAsync(session, Buffer.from(digest.slice(2), "hex"), Buffer.alloc(72));
        } catch (error) {
          throw new SignerUnavailableError("the HSM did not sign (the service's log says why)", (error as Error).message);
        } finally {
          signingSessions.give(session);
        }
        // CKM_ECDSA answers r and s side by side, each as long as the curve's order.
        const half = raw.length / 2;
        return ethereumSignature(toBigInt(raw.subarray(0, half)), toBigInt(raw.subarray(half)), digest, address);
      },
      close() {
        closed ??= (async () => {
          // A signature the HSM never finishes keeps its session and the library: closing either under it
          // could crash the process, which is shutting down anyway.
          if (!(await settlesWithin(signingSessions.close(), CLOSE_WAIT_MS))) return;
          // Its own sessions only: other signers may hold sessions on the same token.
          closeSessions(module, sessions);
          releaseLibrary(modulePath);
        })();
        return closed;
      },
    };
  } catch (error) {
    closeSessions(module, sessions);
    try {
      releaseLibrary(modulePath);
    } catch {
      // The startup error below says what went wrong; a library that will not finalise adds nothing to it.
    }
    if (error instanceof SignerStartupError) throw error;
    throw new SignerStartupError(`PKCS11_MODULE: ${modulePath} failed: ${(error as Error).message}`);
  }
}

// Signatures run side by side on libuv's threads (C_SignAsync), of one signer and of several: the library
// must lock for itself. Initialised without arguments, it may assume a single thread (SoftHSM then takes
// no locks at all, and crashed or hung the process under concurrent signatures).
function acquireLibrary(pkcs11js: typeof Pkcs11, modulePath: string): Pkcs11.PKCS11 {
  const shared = librariesByPath.get(modulePath);
  if (shared) {
    shared.users++;
    return shared.module;
  }
  const module = new pkcs11js.PKCS11();
  try {
    module.load(modulePath);
  } catch (error) {
    throw new SignerStartupError(`PKCS11_MODULE: cannot load ${modulePath} (${(error as Error).message})`);
  }
  try {
    module.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (error) {
    module.close();
    if ((error as { code?: number }).code === pkcs11js.CKR_CANT_LOCK) {
      throw new SignerStartupError(`PKCS11_MODULE: ${modulePath} cannot lock for callers on several threads (CKR_CANT_LOCK), which concurrent signatures need`);
    }
    throw new SignerStartupError(`PKCS11_MODULE: ${modulePath} failed: ${(error as Error).message}`);
  }
  librariesByPath.set(modulePath, { module, users: 1 });
  return module;
}

function releaseLibrary(modulePath: string): void {
  const shared = librariesByPath.get(modulePath);
  if (!shared || --shared.users > 0) return;
  librariesByPath.delete(modulePath);
  try {
    shared.module.C_Finalize();
  } finally {
    shared.module.close();
  }
}

// Whether `promise` settled within `ms`; the timer does not keep the process alive.
async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

// Best effort: a session the token already dropped needs no closing.
function closeSessions(module: Pkcs11.PKCS11, sessions: readonly Pkcs11.Handle[]): void {
  for (const session of sessions) {
    try {
      module.C_CloseSession(session);
    } catch {
      // Closed already (the token was removed or logged out): nothing left to free.
    }
  }
}

async function readPin(pinFile: string): Promise<string> {
  try {
    return (await readFile(pinFile, "utf8")).replace(/\r?\n$/, "");
  } catch (error) {
    throw new SignerStartupError(`PKCS11_PIN_FILE: cannot read ${pinFile} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

// The native binding loads only where a PKCS#11 signer is configured.
async function loadBinding(): Promise<typeof Pkcs11> {
  try {
    return ((await import("pkcs11js")) as { default: typeof Pkcs11 }).default;
  } catch (error) {
    throw new SignerStartupError(`PKCS11_MODULE: the pkcs11js binding does not load on this platform (${(error as Error).message})`);
  }
}

function findObject(module: Pkcs11.PKCS11, pkcs11js: typeof Pkcs11, session: Pkcs11.Handle, objectClass: number, label: string): Pkcs11.Handle | null {
  module.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: objectClass },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  try {
    return module.C_FindObjects(session);
  } finally {
    module.C_FindObjectsFinal(session);
  }
}

// CKA_EC_POINT is the point as a DER OCTET STRING (04 41 04 x y) on most tokens, bare (04 x y) on some.
function uncompressedPoint(value: Buffer): Uint8Array {
  if (value.length === 67 && value[0] === 0x04 && value[1] === 0x41) return value.subarray(2);
  if (value.length === 65 && value[0] === 0x04) return value;
  throw new SignerStartupError(`PKCS11_KEY_LABEL: the key's public point has an unexpected form (${value.length} bytes)`);
}
