/**
 * Values a shell word takes that the line itself does not say (words.ts reads these): variables the
 * judges assume when the line leaves them unset.
 */

/** `$HOME` is the user's home (`~`), `$SHELL` a bash, `$IFS` splits at spaces, `$PWD` is the working directory. */
export const PRESET_VARIABLES: ReadonlyMap<string, string> = new Map([
  ["HOME", "~"],
  ["SHELL", "bash"],
  ["IFS", " "],
  ["PWD", "."],
]);
