/**
 * The `_FILE` convention of Docker and Kubernetes secrets: `PRIVATE_KEY_FILE=/run/secrets/key` instead of
 * the key itself in the environment, where `docker inspect` and /proc/<pid>/environ would show it.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "./settings/settings-part.js";

/** The variables that may come from a file, as NAME_FILE. */
export const SECRET_FILE_VARIABLES = ["RPC_URL", "PRIVATE_KEY", "API_KEYS", "DATABASE_URL", "WEBHOOK_SECRET", "AUDIT_KEY"] as const;

/**
 * The environment with each NAME_FILE replaced by NAME, read from that file (without its trailing
 * newline). ConfigError when both are set, or the file cannot be read or is empty; messages name the
 * variable and the path, never the content.
 */
export function withSecretFiles(env: Record<string, string | undefined>, read: (path: string) => string = (path) => readFileSync(path, "utf8")): Record<string, string | undefined> {
  const resolved = { ...env };
  const problems: string[] = [];
  for (const name of SECRET_FILE_VARIABLES) {
    const path = env[`${name}_FILE`]?.trim();
    delete resolved[`${name}_FILE`];
    if (!path) continue;
    if (env[name]?.trim()) {
      problems.push(`${name} and ${name}_FILE: set one of them, not both`);
      continue;
    }
    let value: string;
    try {
      value = read(path).replace(/\r?\n$/, "");
    } catch (error) {
      problems.push(`${name}_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      continue;
    }
    if (value.trim() === "") problems.push(`${name}_FILE: ${path} is empty`);
    else resolved[name] = value;
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  return resolved;
}
