/**
 * Values a shell word takes that the line itself does not say (words.ts reads these): variables the
 * judges assume when the line leaves them unset; what a shell pattern's wildcards match, as regex.
 */

/** `$HOME` is the user's home (`~`), `$SHELL` a bash, `$IFS` splits at spaces, `$PWD` is the working directory. */
export const PRESET_VARIABLES: ReadonlyMap<string, string> = new Map([
  ["HOME", "~"],
  ["SHELL", "bash"],
  ["IFS", " "],
  ["PWD", "."],
]);

/**
 * A shell pattern's wildcards as regex source (every other special character is escaped); a globbed program
 * word (`r[!x]`) keeps its bracket classes, negated with `[!`.
 */
export const GLOB_REGEX: Readonly<Record<string, string>> = { "*": ".*", "?": ".", "[!": "[^" };
