// The ceiling of the HTTP layer for bench/lookup-bench.ts: Fastify 5 in its own process, answering
// POST /getTransaction with the same JSON from memory. Usage: node bench/bare-route-server.mjs <port> <body file>
import { readFileSync } from "node:fs";
import Fastify from "fastify";

const [port, bodyFile] = process.argv.slice(2);
const body = JSON.parse(readFileSync(bodyFile, "utf8"));
const app = Fastify({ logger: false });
app.post("/getTransaction", async () => body);
await app.listen({ host: "127.0.0.1", port: Number(port) });
process.stdout.write("listening\n");
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
