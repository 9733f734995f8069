/** Polling for tests: the one way a test waits for something to happen (never a fixed sleep). */

/**
 * Calls `cond` every `intervalMs` until it returns true (then true) or `timeoutMs` passed (then the last answer,
 * false). Use as `expect(await waitUntil(() => …, 5000), "what it waited for").toBe(true)`.
 */
export async function waitUntil(
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  intervalMs = 50,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return cond();
}
