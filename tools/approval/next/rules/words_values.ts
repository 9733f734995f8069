/**
 * Values a shell word takes that the line itself does not say (words.ts reads these): variables the
 * judges assume when the line leaves them unset; substitutions whose output is known; what a shell pattern's
 * wildcards match, as regex.
 */

/** `$HOME` is the user's home (`~`), `$SHELL` a bash, `$IFS` splits at spaces, `$PWD` is the working directory. */
export const PRESET_VARIABLES: ReadonlyMap<string, string> = new Map([
  ["HOME", "~"],
  ["SHELL", "bash"],
  ["IFS", " "],
  ["PWD", "."],
]);

/** What `$(mktemp …)` stands for: a fresh path the command made, as much its own as the working directory. */
export const MKTEMP = "/tmp/\u0000mktemp";

/**
 * Command substitutions whose output is known (the text they stand for, `$1` the name they print): a fresh
 * temporary path, the working directory, the program `which`/`type -P`/`command -v` finds (`$(which python3) -V`), a literal path's basename and dirname.
 */
export const KNOWN_SUBSTITUTIONS: [RegExp, string][] = [
  [/^\$\(\s*mktemp\b[^)]*\)$|^`mktemp\b[^`]*`$/, MKTEMP],
  [/^\$\(\s*pwd\s*\)$|^`pwd`$/, "."],
  [/^(?:\$\(|`)\s*(?:which|type\s+-P|command\s+-v)\s+([\w.+-]+)\s*(?:\)|`)$/, "$1"],
  // `basename`/`dirname` of a literal path (`$(basename /etc)` is `etc`, `$(dirname /etc/x)` is `/etc`)
  [/^\$\(\s*basename\s+(['"]?)(?:[^\s'"$`()]*\/)?([^\s/'"$`()]+)\/*\1\s*\)$/, "$2"],
  [/^\$\(\s*dirname\s+(['"]?)\/+[^\s/'"$`()]+\/*\1\s*\)$/, "/"],
  [/^\$\(\s*dirname\s+(['"]?)([^\s'"$`()]*[^\s/'"$`()])\/+[^\s/'"$`()]+\/*\1\s*\)$/, "$2"],
];

/**
 * A shell pattern's wildcards as regex source (every other special character is escaped); a globbed program
 * word (`r[!x]`) keeps its bracket classes, negated with `[!`.
 */
export const GLOB_REGEX: Readonly<Record<string, string>> = { "*": ".*", "?": ".", "[!": "[^" };
