/** The shell's words for the usual reasons a write fails (the original writes through `cat > PATH`). */
const WRITE_ERRORS: Record<string, string> = {
  ENOTDIR: "Not a directory",
  // Creating the folders met a file on the way.
  EEXIST: "Not a directory",
  EISDIR: "Is a directory",
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  EROFS: "Read-only file system",
  ENOSPC: "No space left on device",
  EDQUOT: "Disk quota exceeded",
};

/** Why a write failed, in the shell's words when the reason is a usual one. */
export function writeFailure(path: string, err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && WRITE_ERRORS[code] ? `${path}: ${WRITE_ERRORS[code]}` : errMessage(err);
}

export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Python's `os.path.dirname` ("" for a bare name). */
export function pyDirname(path: string): string {
  const at = path.lastIndexOf("/");
  if (at < 0) return "";
  const head = path.slice(0, at + 1);
  return /^\/+$/.test(head) ? head : head.replace(/\/+$/, "");
}

/** Python's `os.path.join(dir, name)` for a relative name. */
export function pyJoin(dir: string, name: string): string {
  return dir === "" || dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

/** Python's `os.path.splitext` of a file name: [stem, ext]; leading dots never start an extension. */
export function pySplitext(name: string): [string, string] {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  if (dot <= 0 || /^\.+$/.test(base.slice(0, dot))) return [name, ""];
  const cut = name.length - base.length + dot;
  return [name.slice(0, cut), name.slice(cut)];
}

/** Length in code points, as Python's `len` counts a string. */
export function pyLen(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Python's `str[:n]` (code points). */
export function pySlice(text: string, n: number): string {
  if (text.length <= n) return text;
  return [...text].slice(0, n).join("");
}

export const PATH_DESCRIPTION = "File path (absolute, or relative to the working directory).";

/** The characters Python's `str.isspace()` accepts (JS's `\s` has U+FEFF instead of U+001C-U+001F and U+0085). */
const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "g");

/** Python's `str.strip()` with no argument. */
export function pyStrip(s: string): string {
  return s.replace(PY_STRIP, "");
}
