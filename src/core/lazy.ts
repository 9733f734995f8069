/**
 * A value built on its first use and kept. Module-level zod schemas that a process may never use are declared
 * this way: zod 4 builds every schema node when the module is evaluated (tens of microseconds each, cold), and
 * each CLI process and worker thread evaluates every module it imports, used or not.
 */
export function lazy<T>(build: () => T): () => T {
  let built = false;
  let value: T;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value;
  };
}
