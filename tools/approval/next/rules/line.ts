/**
 * Data for what spans the commands of a line (../analyse.ts): programs that download, decode or interpret
 * code; set-up text tools print for `eval`; files that run by themselves later; the files task
 * runners run. Data, not code.
 */

/** How deep shell text nested in shell text (`sh -c "eval '…'"`) is read before it counts as unanalysable. */
export const MAX_DEPTH = 6;

/** Programs whose output piped into a shell is downloaded code. */
export const FETCHERS = new Set("curl wget fetch http https aria2c lwp-request GET nc ncat socat".split(" "));

/** Programs whose output piped into a shell is decoded text (`rev` is a filter: its text is only unknown). */
export const DECODERS = /^(base64|base32|xxd|openssl|gpg|tr|gunzip|zcat|uudecode|printf)$/;

/** Interpreters whose `-c`/`-e` code and script files are read (inline.ts). */
export const INTERPRETERS = new Set(
  "python python2 python3 node nodejs deno bun perl ruby php lua Rscript julia groovy tclsh wish osascript".split(" "),
);

/** `eval "$(tool init)"`: environment set-up that tools print for the shell to evaluate. */
export const INIT_IDIOM =
  /^[$<]\(\s*[\w-]+ completions?\b|^[$<]\(\s*(\S*\/)?(ssh-agent|pyenv|rbenv|nodenv|jenv|goenv|direnv|brew|conda|starship|zoxide|fnm|opam|keychain|dircolors|thefuck|mise|rtx|asdf|gpg-agent|luarocks|register-python-argcomplete|kubectl completion|gh completion|docker-machine|minikube|plenv|pipenv|poetry|nvm|npm completion|rustup|chef|atuin|mcfly|fzf|aws-vault|saml2aws|op signin|hub alias)\b/;

/** Names of standard input as a file. */
export const STDIN_FILE = /^\/dev\/(stdin|fd\/0)$|^\/proc\/self\/fd\/0$/;

/** A line of shell text that is one variable (`$CMD`): what the shell runs is only known then. */
export const VARIABLE_LINE = /^[ \t]*"?\$\{?\w+\}?"?[ \t]*$/m;

/** Files that run by themselves later (hooks, cron, shell start-up): what the line writes there is judged now. */
export const AUTORUN =
  /(^|\/)(\.git\/hooks\/[\w-]+|\.husky\/[\w-]+|etc\/cron\.[\w]+\/[^/]+|etc\/rc\.local|etc\/profile\.d\/[^/]+)$/;

/** Database files: emptying one loses its data even inside the working directory. */
export const DATA_FILE = /\.(db|sqlite3?|mdb|duckdb)$/;

/** Fork loops written out (`while true; do $0 & done`). */
export const FORK_LOOPS = /\bfork\s*while\s*fork|while\s*(true|:)\s*;\s*do\s*\$0\s*&/;

const GIT_HOOKS = ["pre-commit", "commit-msg", "pre-push", "post-checkout", "post-merge"];

/**
 * Programs that run files of the working directory: the files, the first verb that runs them (any when
 * absent), an option naming another file (`make -f FILE`), and how the commands are read from the text
 * (`make` recipes, indented `recipes`, `yaml` cmds, `package` scripts; the whole text when absent).
 */
export const TASK_FILES: Record<
  string,
  { files: string[]; verbs?: RegExp; fileOption?: string; extract?: "make" | "recipes" | "yaml" | "package" }
> = Object.assign(Object.create(null), {
  make: { files: ["Makefile", "makefile", "GNUmakefile"], fileOption: "-f", extract: "make" },
  just: { files: ["justfile", "Justfile", ".justfile"], extract: "recipes" },
  task: { files: ["Taskfile.yml", "Taskfile.yaml", "taskfile.yml"], extract: "yaml" },
  npm: { files: ["package.json"], verbs: /^(test|t|start|run|run-script|install|ci|i)$/, extract: "package" },
  yarn: { files: ["package.json"], extract: "package" },
  pnpm: { files: ["package.json"], extract: "package" },
  pytest: { files: ["conftest.py", "tests/conftest.py", "test/conftest.py"] },
  gradle: { files: ["build.gradle", "build.gradle.kts"] },
  gradlew: { files: ["build.gradle", "build.gradle.kts"] },
  git: {
    files: [".husky/pre-commit", ".husky/pre-push", ...GIT_HOOKS.map((h) => `.git/hooks/${h}`)],
    verbs: /^(commit|push|merge|checkout|rebase)$/,
  },
});

/** The escapes of `$'…'` (and `echo -e`) besides `\xHH`, `\uHHHH` and octal. */
export const ANSI_C_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
};

/** Shell parameters that hold a number (a process id, a status, a count): never a path or a command. */
export const NUMERIC_PARAMETERS = /^([$!?#]|RANDOM|BASHPID|PPID|LINENO|SECONDS|EPOCHSECONDS|UID|EUID)$/;
