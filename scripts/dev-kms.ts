/**
 * AWS KMS on this machine, to try the KMS signer without an AWS account: moto_server (pip install
 * 'moto[server]') with the test suite's fix that makes Sign honour MessageType=DIGEST as AWS does, one
 * secp256k1 key under an alias, and the variables to give the service. Runs until Ctrl-C (or SIGTERM).
 *
 *   npm run dev:kms
 */
import { startTestKms } from "../test/helpers/moto-kms.js";

const ALIAS = "alias/dev-hot-wallet";

const kms = await startTestKms().catch((error: Error) => {
  process.stderr.write(`dev:kms: ${error.message}\n`);
  process.exit(1);
});
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void kms.stop().finally(() => process.exit(0));
  });
}
await kms.createKey("ECC_SECG_P256K1", ALIAS);
const variables = { ...kms.env, AWS_KMS_KEY_ID: ALIAS };
process.stdout.write(
  [
    "",
    `AWS KMS emulator (moto_server, Sign as AWS does it) at ${kms.endpoint}, with a secp256k1 key ${ALIAS}.`,
    "In another terminal, set these and start the service (without RPC_URL, on the local dev chain, the key's wallet is funded there):",
    ...Object.entries(variables).map(([name, value]) => `  export ${name}=${value}`),
    "  npm start",
    "The aws CLI (v1) needs the region too: export AWS_DEFAULT_REGION=us-east-1, then for example",
    `  aws --endpoint-url ${kms.endpoint} kms get-public-key --key-id ${ALIAS}`,
    "Ctrl-C stops the emulator (its keys are in memory only).",
    "",
  ].join("\n") + "\n",
);
