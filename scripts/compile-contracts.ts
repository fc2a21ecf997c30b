/**
 * Compiles contracts/*.sol with solc-js and writes contracts/artifacts/<Name>.json ({abi, bytecode}).
 * The artifacts are committed so that neither the service nor the tests need a compiler at run time.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import solc from "solc";

const require = createRequire(import.meta.url);
const contractsDir = join(import.meta.dirname, "..", "contracts");
const sources = Object.fromEntries(
  readdirSync(contractsDir)
    .filter((file) => file.endsWith(".sol"))
    .map((file) => [file, { content: readFileSync(join(contractsDir, file), "utf8") }]),
);

function resolveImport(path: string): { contents: string } | { error: string } {
  try {
    return { contents: readFileSync(require.resolve(path), "utf8") };
  } catch {
    return { error: `cannot resolve import ${path}` };
  }
}

const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    // Berlin: no opcode newer than every EVM chain has (PUSH0, MCOPY...), so the test tokens run on chains
    // without EIP-1559 too (anvil --hardfork berlin).
    evmVersion: "berlin",
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: resolveImport }));
const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
if (errors.length > 0) {
  for (const error of errors) console.error(error.formattedMessage);
  process.exit(1);
}
for (const file of Object.keys(sources)) {
  for (const [name, contract] of Object.entries<any>(output.contracts[file])) {
    const artifact = { contractName: name, compiler: solc.version(), abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    writeFileSync(join(contractsDir, "artifacts", `${name}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
    console.log(`compiled ${name}`);
  }
}
