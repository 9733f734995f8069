/**
 * Network policy of containers: `none` (the default) and user-defined networks are always allowed; the host's
 * network stack, another container's (`container:…`) and the engine's default `bridge` (which reaches the host
 * and beyond) only when the run names them with --allow-network.
 */

/** "none"/"off"/"false" (and no value) mean no network; "on"/"true" the default bridge; anything else a named network. */
export function networkModeFor(value: string | undefined): string {
  if (value === undefined) return "none";
  const v = value.trim().toLowerCase();
  if (v === "" || v === "none" || v === "off" || v === "false" || v === "0") return "none";
  if (v === "on" || v === "true" || v === "1" || v === "default") return "bridge";
  return value.trim();
}

/** Modes that reach past a user-defined network: they need --allow-network. */
export function isPrivilegedNetwork(mode: string): boolean {
  return mode === "host" || mode === "bridge" || mode.startsWith("container:");
}

/**
 * Why `value` may not be used under the run's --allow-network list, or undefined when it may.
 * `allowed` entries are compared with the resolved mode ("on" means bridge); `container:*` allows any container.
 */
export function networkRefusal(value: string | undefined, allowed: readonly string[]): string | undefined {
  const mode = networkModeFor(value);
  if (!isPrivilegedNetwork(mode)) return undefined;
  const ok = allowed.some((a) => {
    const m = networkModeFor(a);
    return m === mode || (m === "container:*" && mode.startsWith("container:"));
  });
  if (ok) return undefined;
  const shown = value !== undefined && value.trim() !== mode ? `${value} (= ${mode})` : mode;
  return `network ${shown} gives the sandbox more than an isolated network; pass --allow-network ${mode} to allow it`;
}

/** User-defined network names the engine must know (none, host, bridge and container:… are built in). */
export function namedNetwork(value: string | undefined): string | undefined {
  const mode = networkModeFor(value);
  return mode === "none" || isPrivilegedNetwork(mode) ? undefined : mode;
}
