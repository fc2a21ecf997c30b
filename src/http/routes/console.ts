/**
 * GET /console: the operator's console (docs/operating.md#console). The page, its stylesheet and its
 * script are open, as the API docs are: they hold no data, and everything they show comes from API calls
 * made with the key the operator enters. A strict Content-Security-Policy keeps the page to this origin.
 */
import { readFile } from "node:fs/promises";
import type { FastifyPluginAsync } from "fastify";
import { CONSOLE_CSS, CONSOLE_HTML } from "../console-page.js";

/** Where `npm run build` puts the compiled script: dist/console/app.js, from dist/src/http/routes or from src/http/routes. */
const SCRIPT_CANDIDATES = [new URL("../../../console/app.js", import.meta.url), new URL("../../../dist/console/app.js", import.meta.url)];

const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

async function readCompiledScript(): Promise<string | undefined> {
  for (const candidate of SCRIPT_CANDIDATES) {
    const script = await readFile(candidate, "utf8").catch(() => undefined);
    if (script !== undefined) return script;
  }
  return undefined;
}

export const consoleRoute: FastifyPluginAsync = async (app) => {
  // Read once: the compiled script does not change while the service runs.
  const script = await readCompiledScript();
  const hidden = { schema: { hide: true } };
  app.get("/console", hidden, async (_request, reply) => reply.headers(SECURITY_HEADERS).type("text/html; charset=utf-8").send(CONSOLE_HTML));
  app.get("/console/console.css", hidden, async (_request, reply) => reply.headers(SECURITY_HEADERS).type("text/css; charset=utf-8").send(CONSOLE_CSS));
  app.get("/console/app.js", hidden, async (_request, reply) => {
    if (script === undefined) {
      return reply.code(503).type("text/plain; charset=utf-8").send("the console's script is not built: run npm run build (it compiles src/console to dist/console)");
    }
    return reply.headers(SECURITY_HEADERS).type("text/javascript; charset=utf-8").send(script);
  });
};
