/** Polls `condition` every 100 ms until it holds; throws, saying `what` (worked out then), after `timeoutMs`. */
export async function waitUntil(condition: () => Promise<boolean> | boolean, timeoutMs: number, what: string | (() => string)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${typeof what === "string" ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
