import { describe, expect, it } from "vitest";
import { sameInConstantTime } from "../../src/http/auth.js";

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
