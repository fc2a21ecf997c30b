/** The process logger: pino JSON, with secrets kept out of every line. */
import { type DestinationStream, type Logger, pino, stdSerializers } from "pino";

/** What the logger must never print, besides the Authorization header. */
export interface LoggerSecrets {
  privateKey?: string;
  rpcUrl?: string;
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
      redact: { paths: ["req.headers.authorization", "headers.authorization"], censor: "[redacted]" },
      serializers: { err: (error: Error) => scrub(stdSerializers.err(error)) },
    },
    destination,
  );
}

function secretScrubber({ privateKey, rpcUrl }: LoggerSecrets): <T>(value: T) => T {
  const secrets = [privateKey, privateKey?.slice(2), rpcUrl, rpcUrl && new URL(rpcUrl).href]
    .filter((secret): secret is string => typeof secret === "string" && secret.length >= 8)
    .flatMap((secret) => [secret, secret.toLowerCase()]);
  if (secrets.length === 0) return (value) => value;
  return (value) => {
    let text = JSON.stringify(value);
    for (const secret of secrets) text = text.split(JSON.stringify(secret).slice(1, -1)).join("[redacted]");
    return JSON.parse(text);
  };
}
