import { ServiceError } from "../../src/errors.js";

/** The code of the ServiceError `action` throws; undefined when it throws nothing. */
export function codeOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error instanceof ServiceError ? error.code : "not a ServiceError";
  }
}
