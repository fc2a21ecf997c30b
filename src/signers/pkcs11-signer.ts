/**
 * The wallet's key in a PKCS#11 HSM (YubiHSM 2, CloudHSM, Luna, SoftHSM): found by token and key label,
 * used through a few logged-in sessions, one signature at a time each (PKCS#11 allows one operation per
 * session), so signatures are made side by side without holding the event loop (C_SignAsync).
 */
import { readFile } from "node:fs/promises";
import { hexlify, toBigInt } from "ethers";
import type * as Pkcs11 from "pkcs11js";
import { addressOfPublicKey, ethereumSignature } from "./ecdsa-signature.js";
import { SignerStartupError, SignerUnavailableError, type WalletSigner } from "./wallet-signer.js";

export interface Pkcs11Settings {
  /** Path of the vendor's PKCS#11 library (.so). */
  modulePath: string;
  tokenLabel: string;
  keyLabel: string;
  pinFile: string;
}

/** Sessions opened for signing: enough for a burst, few enough for any HSM's session limit. */
const SIGNING_SESSIONS = 4;
/** DER of the secp256k1 curve's object identifier (1.3.132.0.10), as CKA_EC_PARAMS holds it. */
const SECP256K1_PARAMS = "0x06052b8104000a";

/** Opens the module, logs in to the token and finds the key pair; SignerStartupError names the variable. */
export async function openPkcs11Signer(settings: Pkcs11Settings): Promise<WalletSigner> {
  const { modulePath, tokenLabel, keyLabel, pinFile } = settings;
  const pin = await readPin(pinFile);
  const pkcs11js = await loadBinding();
  const module = new pkcs11js.PKCS11();
  try {
    module.load(modulePath);
  } catch (error) {
    throw new SignerStartupError(`PKCS11_MODULE: cannot load ${modulePath} (${(error as Error).message})`);
  }
  try {
    // Signatures run side by side on libuv's threads (C_SignAsync): the module must lock for itself. Called
    // without arguments, C_Initialize promises a single thread, and SoftHSM then takes no locks at all.
    module.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    const slot = module.C_GetSlotList(true).find((candidate) => module.C_GetTokenInfo(candidate).label.trim() === tokenLabel);
    if (slot === undefined) throw new SignerStartupError(`PKCS11_TOKEN_LABEL: no token labelled "${tokenLabel}" in ${modulePath}`);
    const sessions = Array.from({ length: SIGNING_SESSIONS }, () => module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION));
    try {
      // One login serves every session of the application.
      module.C_Login(sessions[0], pkcs11js.CKU_USER, pin);
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === pkcs11js.CKR_PIN_INCORRECT || code === pkcs11js.CKR_PIN_INVALID || code === pkcs11js.CKR_PIN_LEN_RANGE) {
        throw new SignerStartupError(`PKCS11_PIN_FILE: the PIN does not open token "${tokenLabel}"`);
      }
      if (code === pkcs11js.CKR_PIN_LOCKED) throw new SignerStartupError(`PKCS11_PIN_FILE: token "${tokenLabel}" has locked its PIN`);
      throw error;
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
    const idle = [...sessions];
    const waiting: ((session: Pkcs11.Handle) => void)[] = [];
    const release = (session: Pkcs11.Handle) => {
      const next = waiting.shift();
      if (next) next(session);
      else idle.push(session);
    };
    return {
      kind: "pkcs11",
      address,
      description: `pkcs11 key "${keyLabel}" on token "${tokenLabel}" (${modulePath})`,
      async sign(digest) {
        const session = idle.pop() ?? (await new Promise<Pkcs11.Handle>((resolve) => waiting.push(resolve)));
        let raw: Buffer;
        try {
          module.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, privateKey);
          raw = await module.C_SignAsync(session, Buffer.from(digest.slice(2), "hex"), Buffer.alloc(72));
        } catch (error) {
          throw new SignerUnavailableError(`the HSM did not sign: ${(error as Error).message}`);
        } finally {
          release(session);
        }
        // CKM_ECDSA answers r and s side by side, each as long as the curve's order.
        const half = raw.length / 2;
        return ethereumSignature(toBigInt(raw.subarray(0, half)), toBigInt(raw.subarray(half)), digest, address);
      },
      async close() {
        module.C_CloseAllSessions(slot);
        module.C_Finalize();
        module.close();
      },
    };
  } catch (error) {
    try {
      module.C_Finalize();
      module.close();
    } catch {
      // Already torn down, or never initialised: the startup error below is what matters.
    }
    if (error instanceof SignerStartupError) throw error;
    throw new SignerStartupError(`PKCS11_MODULE: ${modulePath} failed: ${(error as Error).message}`);
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
