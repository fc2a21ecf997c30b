/** A TCP port on 127.0.0.1 that nothing listens on right now, for a server a test starts. */
import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A port `n` such that `n` and `n + 1` are both free right now (dev:replicas listens on consecutive ports).
 * Drawn below the kernel's ephemeral range (32768-60999 here): `n + 1` is bound seconds after this check, and
 * in that time any other test's server on port 0, or any outgoing connection, may be given a port from that
 * range (a replica once failed to start on 39676 that way).
 */
export async function freeConsecutivePorts(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if ((await isFree(port)) && (await isFree(port + 1))) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
