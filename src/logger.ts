/** The process logger: pino JSON, with secrets kept out of every line. */
import { createRequire } from "node:module";
import { type DestinationStream, type Logger, pino, stdSerializers, transport } from "pino";
import sonicBoom from "sonic-boom";

/** What the logger must never print, besides the Authorization header. */
export interface LoggerSecrets {
  privateKey?: string;
  rpcUrl?: string;
  /** API_KEYS as configured: comma-separated keys. */
  apiKeys?: string;
  /** DATABASE_URL: it carries the database password. */
  databaseUrl?: string;
  /** WEBHOOK_SECRET as configured: comma-separated whsec_ secrets that sign every event. */
  webhookSecret?: string;
  /** AUDIT_KEY (AUDIT_KEY_FILE): the key the audit log's hashes are made with. */
  auditKey?: string;
  /** The AWS SDK's credentials, when they come from the environment (a KMS signer). */
  awsSecretAccessKey?: string;
  awsSessionToken?: string;
}

/**
 * Creates the logger. Errors are logged through a serializer that blanks the private key and the RPC URL
 * (whose path or credentials may hold an API key) wherever they occur, since ethers embeds request URLs in
 * its error messages.
 *
 * Outside a terminal, lines go to stdout through a buffer written asynchronously (a line per request
 * written synchronously was a fifth of a cached lookup's cost). Nothing is lost: the buffer is written
 * out synchronously when the process exits, on a signal's graceful close or a fatal error alike.
 */
export function createLogger(level: string, secrets: LoggerSecrets, target?: DestinationStream): Logger {
  const scrub = secretScrubber(secrets);
  return pino(
    {
      level,
      redact: { paths: ["req.headers.authorization", "headers.authorization", "authorization"], censor: "[redacted]" },
      // `detail`: a third party's words logged with a refusal (ServiceError.logDetail), scrubbed as errors are.
      serializers: { err: (error: Error) => scrub(stdSerializers.err(error)), detail: (detail: unknown) => scrub(detail) },
    },
    target ?? prettyInTerminal() ?? bufferedLogDestination(1),
  );
}

/** Lines are handed to the file once this many characters are gathered, and at the latest after LOG_FLUSH_INTERVAL_MS. */
const LOG_BUFFER_CHARS = 16_384;
const LOG_FLUSH_INTERVAL_MS = 200;

/** A destination whose gathered lines can be written out now: in the background, or before the process exits. */
export interface BufferedLogDestination extends DestinationStream {
  /** Writes out what is gathered; `done` is called once every line so far is written (pino's logger.flush). */
  flush(done?: (error?: Error) => void): void;
  /** For an exit: writes what is not yet being written, synchronously (a write already under way may still land after it). */
  flushSync(): void;
}

/**
 * The buffered destination the service logs to outside a terminal: a file descriptor (1 is stdout) or a path.
 * Lines are gathered in an array and handed to sonic-boom (which writes asynchronously and retries a busy
 * pipe) a batch at a time: handed one by one, sonic-boom measured the bytes of its whole pending buffer on
 * every line, which cost more than forming the line (2.0 against 0.6 µs a line, scratch benchmark).
 */
export function bufferedLogDestination(target: number | string): BufferedLogDestination {
  // minLength 1, not 0: with 0, sonic-boom's flush(done) calls done at once instead of after the writes under
  // way. A batch is always longer than one byte, so every batch is written as soon as it is handed over.
  const file = new sonicBoom.SonicBoom({ dest: target, sync: false, minLength: 1, mkdir: typeof target === "string" });
  let lines: string[] = [];
  let gathered = 0;
  // As pino's own destination does: a pipe whose reader went away (EPIPE) ends the logging, not the
  // process. Any other write error is thrown, as pino's destination did.
  let readerGone = false;
  file.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    readerGone = true;
    lines = [];
  });
  const handOver = () => {
    if (lines.length === 0 || readerGone) return;
    file.write(lines.length === 1 ? lines[0] : lines.join(""));
    lines = [];
    gathered = 0;
  };
  const destination: BufferedLogDestination = {
    write(line: string) {
      if (readerGone) return;
      lines.push(line);
      gathered += line.length;
      if (gathered >= LOG_BUFFER_CHARS) handOver();
    },
    flush(done) {
      handOver();
      if (readerGone) done?.();
      else file.flush(done);
    },
    // The last lines before an exit (process.exit, a fatal error) are written synchronously.
    flushSync() {
      handOver();
      if (!readerGone) file.flushSync();
    },
  };
  // A quiet service's lines must not wait.
  setInterval(handOver, LOG_FLUSH_INTERVAL_MS).unref();
  flushedAtExit(destination);
  return destination;
}

const destinationsToFlushAtExit = new Set<BufferedLogDestination>();

// One exit listener for every destination (a process with many, as the benchmarks make, would otherwise
// be warned of a listener leak).
function flushedAtExit(destination: BufferedLogDestination): void {
  if (destinationsToFlushAtExit.size === 0) {
    process.once("exit", () => {
      for (const each of destinationsToFlushAtExit) {
        try {
          each.flushSync();
        } catch {
          // A file not yet open (an exit right at startup) has nothing to take its lines: the others still do.
        }
      }
    });
  }
  destinationsToFlushAtExit.add(destination);
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

function secretScrubber({ privateKey = "", rpcUrl, apiKeys = "", databaseUrl, webhookSecret = "", auditKey, awsSecretAccessKey, awsSessionToken }: LoggerSecrets): <T>(value: T) => T {
  // Each secret (comma- or space-separated, as parseWebhookSecrets reads them), and its key material without the whsec_ prefix.
  const webhookSecrets = webhookSecret.split(/[\s,]+/).flatMap((secret) => [secret, secret.replace(/^whsec_/, "")]);
  // Each entry as configured, and the key alone without its role (`admin:`): the key is what a client sends.
  const keys = apiKeys.split(",").map((key) => key.trim()).flatMap((entry) => [entry, entry.replace(/^[a-z]+:/, "")]);
  // A pool's keys one by one, with and without 0x.
  const privateKeys = privateKey.split(",").map((key) => key.trim()).flatMap((key) => [key, key.replace(/^0x/i, "")]);
  const databasePassword = databaseUrl ? decodeURIComponent(new URL(databaseUrl).password) : undefined;
  // Each endpoint's URL as written and as URL prints it; only its host may be logged.
  const rpcUrls = (rpcUrl ?? "").split(",").map((url) => url.trim()).flatMap((url) => [url, URL.canParse(url) ? new URL(url).href : undefined]);
  const secrets = [privateKey, ...privateKeys, ...rpcUrls, databaseUrl, databasePassword, ...keys, ...webhookSecrets, auditKey, awsSecretAccessKey, awsSessionToken]
    .filter((secret): secret is string => typeof secret === "string" && secret.length >= 8)
    .flatMap((secret) => [secret, secret.toLowerCase()]);
  if (secrets.length === 0) return (value) => value;
  return (value) => {
    let text = JSON.stringify(value);
    for (const secret of secrets) text = text.split(JSON.stringify(secret).slice(1, -1)).join("[redacted]");
    return JSON.parse(text);
  };
}
