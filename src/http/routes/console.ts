/**
 * GET /console: the operator's console (docs/operating.md#console). The page, its stylesheet and its
 * scripts are open, as the API docs are: they hold no data, and everything they show comes from API calls
 * made with the key the operator enters. A strict Content-Security-Policy keeps the page to this origin.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync } from "fastify";
import { CONSOLE_CSS, CONSOLE_HTML } from "../console-page.js";

/** Where `npm run build` puts the compiled modules: dist/console, from dist/src/http/routes or from src/http/routes. */
const SCRIPT_FOLDERS = [new URL("../../../console/", import.meta.url), new URL("../../../dist/console/", import.meta.url)];

/** The page's entry module; the views it imports are found beside it. */
const ENTRY = "app.js";

const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

/** Every compiled module of the first folder that holds the entry, by its path under that folder (`views/wallet.js`). */
async function readCompiledModules(): Promise<Map<string, string>> {
  for (const folder of SCRIPT_FOLDERS) {
    const root = fileURLToPath(folder);
    const files = await readdir(root, { recursive: true }).catch(() => [] as string[]);
    if (!files.includes(ENTRY)) continue;
    const modules = files.filter((file) => file.endsWith(".js"));
    // A module that cannot be read leaves the console unserved (503), never the service unstarted.
    const texts = await Promise.all(modules.map((file) => readFile(join(root, file), "utf8"))).catch(() => undefined);
    return texts ? new Map(modules.map((file, index) => [file.split(sep).join("/"), texts[index]])) : new Map<string, string>();
  }
  return new Map();
}

export const consoleRoute: FastifyPluginAsync = async (app) => {
  // Read once: the compiled modules do not change while the service runs, and a path is served only if it is one of them.
  const modules = await readCompiledModules();
  const hidden = { schema: { hide: true } };
  app.get("/console", hidden, async (_request, reply) => reply.headers(SECURITY_HEADERS).type("text/html; charset=utf-8").send(CONSOLE_HTML));
  app.get("/console/console.css", hidden, async (_request, reply) => reply.headers(SECURITY_HEADERS).type("text/css; charset=utf-8").send(CONSOLE_CSS));
  app.get<{ Params: { "*": string } }>("/console/*", hidden, async (request, reply) => {
    if (modules.size === 0) {
      return reply.code(503).type("text/plain; charset=utf-8").send("the console's script is not built, or cannot be read: run npm run build (it compiles src/console to dist/console)");
    }
    const script = modules.get(request.params["*"]);
    // Anything else under /console/ is answered as any unknown path is.
    if (script === undefined) return reply.callNotFound();
    return reply.headers(SECURITY_HEADERS).type("text/javascript; charset=utf-8").send(script);
  });
};
