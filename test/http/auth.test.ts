import { describe, expect, it } from "vitest";
import { isOpenPath, sameInConstantTime } from "../../src/http/auth.js";

describe("sameInConstantTime", () => {
  it("is true only for identical strings", () => {
    expect(sameInConstantTime("Bearer abc", "Bearer abc")).toBe(true);
    expect(sameInConstantTime("", "")).toBe(true);
    expect(sameInConstantTime("Bearer abd", "Bearer abc")).toBe(false);
    expect(sameInConstantTime("Xearer abc", "Bearer abc")).toBe(false);
  });

  it("is false when one is a prefix of the other, either way", () => {
    expect(sameInConstantTime("Bearer ab", "Bearer abc")).toBe(false);
    expect(sameInConstantTime("Bearer abcd", "Bearer abc")).toBe(false);
    expect(sameInConstantTime("", "Bearer abc")).toBe(false);
    expect(sameInConstantTime("Bearer abc", "")).toBe(false);
  });

  it("is false for a string that differs only past the other's end by a NUL", () => {
    expect(sameInConstantTime("Bearer abc\u0000", "Bearer abc")).toBe(false);
  });
});

describe("isOpenPath", () => {
  it("opens the console's page, stylesheet and modules by plain names, and the routes that hold no data", () => {
    for (const path of ["/health", "/ready", "/openapi.json", "/docs", "/docs/static/index.html", "/console", "/console/console.css", "/console/app.js", "/console/views/wallet.js"]) {
      expect(isOpenPath(path), path).toBe(true);
    }
  });

  it("keeps closed what only looks like a console file: a dot segment, an escape, another kind of file", () => {
    for (const path of ["/console/../transfer", "/console/%2e%2e/wallet", "/console/..%2Ftransfer", "/console/views/../app.js", "/console/app.ts", "/console/.tsbuildinfo", "/console/", "/consolex/app.js", "/transfer", "/wallet"]) {
      expect(isOpenPath(path), path).toBe(false);
    }
  });
});
