/**
 * A TCP proxy in front of a server (PostgreSQL, the service), to lose traffic on purpose on the connections open at that
 * moment: their requests (the server never sees them) or their replies (the server acted, the client never
 * learns), then the connection breaks. Connections made later pass untouched.
 */
import { type Server, type Socket, connect, createServer } from "node:net";
import type { AddressInfo } from "node:net";

export interface TcpProxy {
  port: number;
  /** From now on, on every open connection: drop what the client sends next and break the connection. */
  loseNextRequests(): void;
  /** From now on, on every open connection: pass the requests, drop the replies and break the connection. */
  loseNextReplies(): void;
  /** The next `count` connections made: their requests pass, their replies are dropped and the connection breaks. */
  loseRepliesOfNextConnections(count: number): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const open = new Set<{ client: Socket; server: Socket; lose?: "requests" | "replies" }>();
  let lossyConnections = 0;
  const proxy: Server = createServer((client) => {
    const server = connect(targetPort, "127.0.0.1");
    const pair: { client: Socket; server: Socket; lose?: "requests" | "replies" } = { client, server };
    if (lossyConnections > 0) {
      lossyConnections--;
      pair.lose = "replies";
    }
    open.add(pair);
    const breakBoth = () => {
      client.destroy();
      // The server side closes a moment later, as a vanished peer's would.
      setTimeout(() => server.destroy(), 200);
    };
    client.on("data", (chunk) => {
      if (pair.lose === "requests") return breakBoth();
      server.write(chunk);
    });
    server.on("data", (chunk) => {
      if (pair.lose === "replies") return breakBoth();
      client.write(chunk);
    });
    for (const socket of [client, server]) {
      socket.on("error", () => undefined);
      socket.on("close", () => {
        open.delete(pair);
        client.destroy();
        server.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    port: (proxy.address() as AddressInfo).port,
    loseNextRequests: () => open.forEach((pair) => (pair.lose = "requests")),
    loseNextReplies: () => open.forEach((pair) => (pair.lose = "replies")),
    loseRepliesOfNextConnections: (count) => {
      lossyConnections = count;
    },
    close: () =>
      new Promise((resolve) => {
        for (const { client, server } of open) {
          client.destroy();
          server.destroy();
        }
        proxy.close(() => resolve());
      }),
  };
}
