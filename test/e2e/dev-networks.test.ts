/**
 * `npm run dev:networks`, used as printed: two local chains, the demo token and the native coin on each, the
 * service on a NETWORKS_FILE; each printed curl pays once on its own chain; SIGTERM to npm leaves nothing
 * behind.
 */
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { Contract, JsonRpcProvider, parseEther, parseUnits } from "ethers";
import { describe, expect, it } from "vitest";
import { documentation } from "../helpers/documentation.js";
import { stopProcessTree } from "../helpers/process-tree.js";
import { waitUntil } from "../helpers/wait-until.js";

const run = promisify(execFile);
const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("npm run dev:networks", () => {
  it("prints a curl per token and network, each paying once on its own chain, and stops everything on SIGTERM", async () => {
    const npm = spawn("npm", ["run", "dev:networks", "--", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    npm.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    npm.stderr.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    const providers: JsonRpcProvider[] = [];
    try {
      await waitUntil(() => printed.includes("Ctrl-C stops everything"), 90_000, () => printed);
      expect(printed).toContain("dev:networks: starting 2 anvils");
      const networks = [...printed.matchAll(/^ {2}(local-[ab]) {2}chain (\d+) {2}node (\S+) {2}DEMO (0x[0-9a-fA-F]{40})$/gm)].map(([, name, chainId, node, token]) => ({ name, chainId: Number(chainId), node, token }));
      expect(networks.map(({ name, chainId }) => [name, chainId])).toEqual([["local-a", 31337], ["local-b", 31338]]);
      const curls = printed.split("\n").filter((line) => line.trim().startsWith("curl -s -X POST"));
      expect(curls).toHaveLength(4);
      for (const network of networks) {
        const provider = new JsonRpcProvider(network.node, undefined, { staticNetwork: true });
        providers.push(provider);
        const demo = new Contract(network.token, ["function balanceOf(address) view returns (uint256)"], provider);
        const before = { demo: (await demo.getFunction("balanceOf")(RECIPIENT)) as bigint, eth: await provider.getBalance(RECIPIENT) };
        for (const token of ["DEMO", "ETH"]) {
          const curl = curls.find((line) => line.includes(`"network":"${network.name}","token":"${token}"`)) as string;
          const reply = JSON.parse((await run("sh", ["-c", curl.trim()])).stdout);
          expect(reply.result?.chainId, JSON.stringify(reply)).toBe(network.chainId);
          const receipt = await provider.waitForTransaction(reply.result.hash, 1, 15_000);
          expect(receipt?.status).toBe(1);
        }
        expect((await demo.getFunction("balanceOf")(RECIPIENT)) - before.demo).toBe(parseUnits("1.5", 18));
        expect((await provider.getBalance(RECIPIENT)) - before.eth).toBe(parseEther("1.5"));
      }
      // docs/networks.md's recipe, as written there (the port and key put in): 1.5 ETH on local-b.
      const recipe = (/\x3c!-- dev-networks-recipe[^>]*--\x3e\s*```sh\n([\s\S]*?)```/.exec(documentation()) as RegExpExecArray)[1];
      const base = (/the service at (http:\/\/127\.0\.0\.1:\d+):/.exec(printed) as RegExpExecArray)[1];
      const key = (/API key: (\S+)/.exec(printed) as RegExpExecArray)[1];
      const other = providers[1];
      const ethBefore = await other.getBalance(RECIPIENT);
      const reply = JSON.parse((await run("sh", ["-c", recipe.replaceAll("http://127.0.0.1:3000", base)], { env: { ...process.env, KEY: key } })).stdout);
      expect((await other.waitForTransaction(reply.result.hash, 1, 15_000))?.status).toBe(1);
      expect((await other.getBalance(RECIPIENT)) - ethBefore).toBe(parseEther("1.5"));
    } finally {
      for (const provider of providers) provider.destroy();
      expect(await stopProcessTree(npm.pid as number)).toEqual([]);
    }
  }, 150_000);
});
