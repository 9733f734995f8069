/**
 * A registry of named factories that load their module lazily: every extension point (environment
 * backends, model providers, approval policies, scorers, export formats) uses it, so an unused
 * implementation costs nothing and an unknown name gets an error that lists the known ones.
 */
import { UserError } from "./errors.js";

export interface LazyRegistry<T> {
  /** What the entries are, for messages: "environment", "model provider". */
  readonly kind: string;
  register(name: string, load: () => Promise<T> | T): void;
  has(name: string): boolean;
  names(): string[];
  /** The entry, loaded once; an unknown name is a UserError: "unknown environment 'x'; known: a, b". */
  load(name: string): Promise<T>;
}

export function createRegistry<T>(kind: string): LazyRegistry<T> {
  const loaders = new Map<string, () => Promise<T> | T>();
  const loaded = new Map<string, Promise<T>>();
  return {
    kind,
    register(name, load) {
      loaders.set(name, load);
      loaded.delete(name);
    },
    has: (name) => loaders.has(name),
    names: () => [...loaders.keys()].sort(),
    load(name) {
      const loader = loaders.get(name);
      if (!loader) {
        const known = [...loaders.keys()].sort().join(", ") || "(none)";
        return Promise.reject(new UserError(`unknown ${kind} '${name}'; known: ${known}`));
      }
      let pending = loaded.get(name);
      if (!pending) {
        pending = Promise.resolve().then(loader);
        loaded.set(name, pending);
        pending.catch(() => loaded.delete(name));
      }
      return pending;
    },
  };
}
