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

/** A port `n` such that `n` and `n + 1` are both free right now (dev:replicas listens on consecutive ports). */
export async function freeConsecutivePorts(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65535 && (await isFree(port + 1))) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
