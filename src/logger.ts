/** The process logger: pino JSON, with secrets kept out of every line. */
import { createRequire } from "node:module";
import { type DestinationStream, type Logger, pino, stdSerializers, transport } from "pino";

/** What the logger must never print, besides the Authorization header. */
export interface LoggerSecrets {
  privateKey?: string;
  rpcUrl?: string;
  /** API_KEYS as configured: comma-separated keys. */
  apiKeys?: string;
}

/**
 * Creates the logger. Errors are logged through a serializer that blanks the private key and the RPC URL
 * (whose path or credentials may hold an API key) wherever they occur, since ethers embeds request URLs in
 * its error messages.
 */
export function createLogger(level: string, secrets: LoggerSecrets, destination?: DestinationStream): Logger {
  const scrub = secretScrubber(secrets);
  return pino(
    {
      level,
      redact: { paths: ["req.headers.authorization", "headers.authorization", "authorization"], censor: "[redacted]" },
      serializers: { err: (error: Error) => scrub(stdSerializers.err(error)) },
    },
    destination ?? prettyInTerminal(),
  );
}

// A developer at a terminal reads pretty lines (pino-pretty, a dev dependency); everyone else gets JSON.
function prettyInTerminal(): DestinationStream | undefined {
  if (!process.stdout.isTTY) return undefined;
  try {
    createRequire(import.meta.url).resolve("pino-pretty");
  } catch {
    return undefined;
  }
  return transport({ target: "pino-pretty", options: { colorize: true, translateTime: "SYS:HH:MM:ss.l" } });
}

function secretScrubber({ privateKey, rpcUrl, apiKeys = "" }: LoggerSecrets): <T>(value: T) => T {
  const keys = apiKeys.split(",").map((key) => key.trim());
  const secrets = [privateKey, privateKey?.slice(2), rpcUrl, rpcUrl && new URL(rpcUrl).href, ...keys]
    .filter((secret): secret is string => typeof secret === "string" && secret.length >= 8)
    .flatMap((secret) => [secret, secret.toLowerCase()]);
  if (secrets.length === 0) return (value) => value;
  return (value) => {
    let text = JSON.stringify(value);
    for (const secret of secrets) text = text.split(JSON.stringify(secret).slice(1, -1)).join("[redacted]");
    return JSON.parse(text);
  };
}
