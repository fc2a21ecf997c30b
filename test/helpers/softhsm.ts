/**
 * A PKCS#11 HSM for the tests: SoftHSM2 (Debian package softhsm2), with its tokens in a directory of the
 * test's own. Keys are generated inside the token, as on a real HSM, so their private halves never exist
 * outside it. Missing, it fails at once with the reason.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkcs11js from "pkcs11js";

/** Where Debian installs the module. */
const MODULE_PATHS = ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"];
export const SECP256K1_PARAMS = Buffer.from("06052b8104000a", "hex");
export const P256_PARAMS = Buffer.from("06082a8648ce3d030107", "hex");

export interface TestHsm {
  modulePath: string;
  /** SOFTHSM2_CONF for processes that use this HSM (this process's is set already). */
  env: Record<string, string>;
  /** A new token with a user PIN; the path of a file holding the PIN. */
  createToken(label: string, pin: string): { pinFile: string };
  /** An EC key pair generated on the token (secp256k1 unless other curve parameters are given). */
  generateKey(tokenLabel: string, pin: string, keyLabel: string, curveParams?: Buffer): void;
  remove(): void;
}

/** Why SoftHSM2 cannot run here, or undefined. */
export function softHsmMissing(): string | undefined {
  if (!MODULE_PATHS.some((path) => existsSync(path))) return `SoftHSM2 is not installed (apt-get install softhsm2): none of ${MODULE_PATHS.join(", ")} exists`;
  try {
    execFileSync("softhsm2-util", ["--version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "softhsm2-util is not on PATH (apt-get install softhsm2)";
  }
}

/** A SoftHSM2 whose tokens live in a fresh directory; SOFTHSM2_CONF of this process points at it. */
export function createTestHsm(): TestHsm {
  const missing = softHsmMissing();
  if (missing) throw new Error(missing);
  const modulePath = MODULE_PATHS.find((path) => existsSync(path)) as string;
  const dir = mkdtempSync(join(tmpdir(), "softhsm-"));
  mkdirSync(join(dir, "tokens"));
  const conf = join(dir, "softhsm2.conf");
  writeFileSync(conf, `directories.tokendir = ${join(dir, "tokens")}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  // SoftHSM reads its configuration when the module is initialised, in this process and in children.
  process.env.SOFTHSM2_CONF = conf;
  const env = { SOFTHSM2_CONF: conf };
  return {
    modulePath,
    env,
    createToken(label, pin) {
      execFileSync("softhsm2-util", ["--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", `${pin}-so`], { env: { ...process.env, ...env }, stdio: "pipe" });
      const pinFile = join(dir, `${label}.pin`);
      writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
      return { pinFile };
    },
    generateKey(tokenLabel, pin, keyLabel, curveParams = SECP256K1_PARAMS) {
      // Initialised and finalised around the work: a signer in this process initialises the module itself.
      const module = new pkcs11js.PKCS11();
      module.load(modulePath);
      module.C_Initialize();
      try {
        const slot = module.C_GetSlotList(true).find((candidate) => module.C_GetTokenInfo(candidate).label.trim() === tokenLabel);
        if (slot === undefined) throw new Error(`no token ${tokenLabel}`);
        const session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
        module.C_Login(session, pkcs11js.CKU_USER, pin);
        const label = { type: pkcs11js.CKA_LABEL, value: keyLabel };
        module.C_GenerateKeyPair(
          session,
          { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
          [label, { type: pkcs11js.CKA_TOKEN, value: true }, { type: pkcs11js.CKA_VERIFY, value: true }, { type: pkcs11js.CKA_EC_PARAMS, value: curveParams }],
          [label, { type: pkcs11js.CKA_TOKEN, value: true }, { type: pkcs11js.CKA_SIGN, value: true }, { type: pkcs11js.CKA_PRIVATE, value: true }, { type: pkcs11js.CKA_SENSITIVE, value: true }],
        );
        module.C_CloseAllSessions(slot);
      } finally {
        module.C_Finalize();
        module.close();
      }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
