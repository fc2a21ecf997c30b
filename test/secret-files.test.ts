import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { ConfigError } from "../src/settings/settings-part.js";
import { SECRET_FILE_VARIABLES, withSecretFiles } from "../src/secret-files.js";

const files: Record<string, string> = {
  "/run/secrets/key": "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d\n",
  "/run/secrets/api-keys": "first-key-0123456789abcdef,second-key-0123456789abcdef",
  "/run/secrets/empty": "\n",
};
const read = (path: string) => {
  if (!(path in files)) throw Object.assign(new Error("no such file"), { code: "ENOENT" });
  return files[path];
};

describe("withSecretFiles", () => {
  it("reads NAME_FILE into NAME, without the trailing newline, and the configuration loads from it", () => {
    const env = withSecretFiles({ RPC_URL: "http://127.0.0.1:8545", TOKEN_ADDRESS: `0x${"1".repeat(40)}`, PRIVATE_KEY_FILE: "/run/secrets/key", API_KEYS_FILE: "/run/secrets/api-keys" }, read);
    expect(env.PRIVATE_KEY).toBe(files["/run/secrets/key"].trim());
    expect(env.PRIVATE_KEY_FILE).toBeUndefined();
    const config = loadConfig(env);
    expect(config.privateKey).toBe(files["/run/secrets/key"].trim());
    expect(config.apiKeys).toBe(files["/run/secrets/api-keys"]);
  });

  it("refuses both NAME and NAME_FILE, a file it cannot read and an empty one, naming each and echoing no content", () => {
    const attempt = () =>
      withSecretFiles({ PRIVATE_KEY: "0xabc", PRIVATE_KEY_FILE: "/run/secrets/key", API_KEYS_FILE: "/run/secrets/missing", WEBHOOK_SECRET_FILE: "/run/secrets/empty" }, read);
    expect(attempt).toThrow(ConfigError);
    const message = (() => {
      try {
        attempt();
      } catch (error) {
        return (error as Error).message;
      }
    })() as string;
    expect(message).toContain("PRIVATE_KEY and PRIVATE_KEY_FILE: set one of them, not both");
    expect(message).toContain("API_KEYS_FILE: cannot read /run/secrets/missing (ENOENT)");
    expect(message).toContain("WEBHOOK_SECRET_FILE: /run/secrets/empty is empty");
    expect(message).not.toContain("59c6995e");
  });

  it("is documented for every variable, in .env.example and in the README", () => {
    const example = readFileSync(".env.example", "utf8");
    const readme = readFileSync("README.md", "utf8");
    const names = SECRET_FILE_VARIABLES.map((name) => `${name}_FILE`);
    expect(names.filter((name) => !new RegExp(`^#? ?${name}=`, "m").test(example))).toEqual([]);
    expect(names.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});
