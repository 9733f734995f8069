/**
 * Dangerous-command detection: DANGEROUS_PATTERNS, matched against the rendering of analyse.ts
 * (normalize.ts first, then the shell reader of shell.ts, wrappers removed, scripts read recursively).
 */
import { posix } from "node:path";
import { analyseCommand, type CommandAnalysis, type DetectOptions } from "./analyse.js";
import { EFFECT_CLASSES, SHARED_DESCRIPTIONS } from "./judge.js";

export { normalizeCommand } from "./normalize.js";
export { analyseCommand, type CommandAnalysis, type DetectOptions } from "./analyse.js";

export interface DangerousPattern {
  /** Stable identifier: what session approvals and `command_allowlist` store. */
  key: string;
  /** Absent for classes judged only by effect (judge.ts). */
  pattern?: RegExp;
  description: string;
  /**
   * "command" (default): matched against each rendered pipeline; "raw": against the normalised text;
   * "code": against the code of every shell script that runs (quoted text and here-document bodies removed).
   * Every class also matches when the effect judge (judge.ts) reports its key.
   */
  scope?: "command" | "raw" | "code";
}

export interface Detection {
  dangerous: boolean;
  /** The first (most severe) matching pattern. */
  patternKey?: string;
  description?: string;
  /** Every matching pattern, in pattern order. Approval by allowlist or session needs all of them approved. */
  matches?: { key: string; description: string }[];
}

const AT = String.raw`(?:^|\| )(?:xargs )?`; // start of a command in a rendered pipeline (xargs runs the command it names)
const ANY = String.raw`(?:[^|]*\s)?`; // any words before the next one, within the same command
const EOT = String.raw`(?=\s|$)`; // end of a word
const END_ARGS = String.raw`(?=\s*$|\s\|\s|\s[0-9&]*[<>])`; // after the last argument
const REC = String.raw`(?:-[a-z]*r[a-z]*|--recursive)`;
const CORE = String.raw`(?:etc|boot|usr|bin|sbin|lib(?:32|64|x32)?)`;
const TOP = String.raw`(?:dev|home|opt|proc|root|srv|sys|var|mnt|media|snap|run)`;
const HOME = String.raw`(?:~|\$home|\$\{home\})`;
const SYS_TARGET = String.raw`(?:/+\*?|/+${CORE}(?:/\S*)?|/+${TOP}/*\*?|${HOME}/*\*?)`;
const SYS_TREE = String.raw`(?:/+\*?|/+(?:${CORE}|${TOP})(?:/\S*)?|${HOME}/*\*?)`;
const CONFIG_PATH = String.raw`(?:/+${CORE}(?:/\S*)?|/+proc/sys(?:rq-trigger|/\S*)|/+sys/\S*)`;
const CONFIG_TARGET = `${CONFIG_PATH}${EOT}`;
// Any absolute or home-relative `.ssh` directory: the home of the environment is not known here.
// (a quoted path may hold blanks: `> '/tmp/my dir/.ssh/k'`).
const SSH_TARGET = String.raw`(?:${HOME}|/[^|<>]*?)/\.ssh/\S*`;
const RC_FILE = String.raw`\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin|zlogout|kshrc|mkshrc|cshrc|tcshrc|login|logout|inputrc|xprofile|xinitrc|xsessionrc|pam_environment|bash_aliases|zsh_aliases|aliases|bash_functions|config/fish/config\.fish)`;
const RC_PATH = String.raw`(?:${HOME}|/[^|<>]*?)/${RC_FILE}`;
const RC_TARGET = `${RC_PATH}${EOT}`;
const DISK = String.raw`/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|mapper/|disk/|loop\d|sr\d)\S*`;
const WRITE_REDIR = String.raw`\s(?:\d+|&)?>>?`;
const COPY = String.raw`(?:cp|mv|install|ln|rsync)`;
const INTERP = String.raw`(?:(?:ba|z|da|k|a|mk|fi|tc|c)?sh|python[\d.]*|perl|ruby|node|php|source|\.|eval)`;
// An interpreter that reads its program from stdin: no script, -c or -m argument.
// (`bash -n` only reads the program for its syntax.)
const STDIN_INTERP = String.raw`(?:${INTERP}(?:\s-(?![cme]${EOT}|n${EOT})\S*)*(?:\s--(?:\s\S+)*)?|(?:source|\.)\s/dev/stdin)${END_ARGS}`;
// A command that decodes or decrypts its input (within one pipeline stage).
const DECODER = String.raw`(?:(?:base(?:64|32)|basenc)\s${ANY}(?:-[a-z]*d[a-z]*|--decode)|xxd\s${ANY}-[a-z]*r[a-z]*|openssl\s${ANY}-d|gpg2?\s${ANY}(?:-d|--decrypt)|uudecode|(?:python[\d.]*|perl|ruby)\s${ANY}\S*(?:b64decode|decode_base64|unpack)\S*)`;
const GITOPTS = String.raw`(?:\s-\S+(?:\s[^-\s]\S*)?)*?`;

const re = (...alternatives: string[]): RegExp => new RegExp(alternatives.join("|"), "i");

const ENDLESS_LOOP = String.raw`(?:\bwhile\s+(?:true|:|\[\s*1\s*\]|\[\[\s*1\s*\]\]|\(\(\s*1\s*\)\))|\buntil\s+(?:false|!\s*true)|\bfor\s*\(\(\s*;\s*;\s*\)\))\s*(?:;|\n)\s*do\s`;
const LOOP_BODY = String.raw`(?:(?!\bdone\b|\bbreak\b|\bexit\b|\breturn\b|\bsleep\b|\bwait\b)[\s\S]){0,300}?`;
const CPU_BURNER = String.raw`(?:yes|(?:cat|sha\d*sum|md5sum|b2sum|gzip|xz|bzip2)\s+(?:-\S+\s+)*/dev/(?:zero|u?random)|openssl\s+speed|dd\s+if=/dev/(?:zero|u?random)(?![^&;\n]*\bcount=)|(?:ba)?sh\s+-c\s+['"]?(?:while\s+(?:true|:)|for\s*\(\(\s*;\s*;))`;
const ENDLESS_LOAD = re(
  String.raw`\b(?:for|while|until)\b[^\n]{0,120}?\bdo\s${LOOP_BODY}(?<![\w/-])${CPU_BURNER}\b[^&;\n|]*(?:\|[^&;\n]*)?&(?!&)${LOOP_BODY}\bdone\b`,
  String.raw`${ENDLESS_LOOP}${LOOP_BODY}\bmkdir\b${LOOP_BODY}\bcd\b${LOOP_BODY}\bdone\b`,
  // Thousands of turns (`for i in $(seq 1 100000)`, `{1..50000}`, `((i=0; i<20000; i++))`) each starting a command in the
  // background with no wait inside the loop: that many processes at once.
  String.raw`\bfor\s+(?:\w+\s+in\s+(?:\$\(\s*seq\s+(?:-?\d+\s+){0,2}\d{4,}\s*\)|\{\d+\.\.\d{4,}\})|\(\(\s*\w+\s*=\s*\d+\s*;\s*\w+\s*<=?\s*\d{4,}\s*;[^)]*\)\))\s*(?:;|\n)\s*do\s(?:(?!\bdone\b|\bwait\b|\bbreak\b)[\s\S]){0,300}?[^&>|\s]\s*&(?![&>])(?:(?!\bwait\b)[\s\S]){0,300}?\bdone\b`,
  String.raw`${ENDLESS_LOOP}${LOOP_BODY}\bcd\b${LOOP_BODY}\bmkdir\b${LOOP_BODY}\bdone\b`,
  // Endless loops or thousands of turns that each start a detached container, VM, pod or session (`while true; do docker run -d …;
  // done`, `for i in {1..50000}; do docker run -d …`): containers pile up until memory and the process table are full.
  String.raw`(?:${ENDLESS_LOOP}|\bfor\s+(?:\w+\s+in\s+(?:\$\(\s*seq\s+(?:-?\d+\s+){0,2}\d{4,}\s*\)|\{\d+\.\.\d{4,}\})|\(\(\s*\w+\s*=\s*\d+\s*;\s*\w+\s*<=?\s*\d{4,}\s*;[^)]*\)\))\s*(?:;|\n)\s*do\s)${LOOP_BODY}\b(?:(?:docker|podman|nerdctl)\s+(?:container\s+)?run\s[^;\n&|]*(?:-d\b|--detach\b|-[a-z]*d[a-z]*\s)|kubectl\s+(?:run|create)\s|(?:screen\s+-d?m|tmux\s+new(?:-session)?\s[^;\n]*-d|nohup|setsid|systemd-run|virt-install|multipass\s+launch|vagrant\s+up)\b)[^;\n&|]*${LOOP_BODY}\bdone\b`,
  // An endless loop whose body creates files or directories named by a counter or any changing variable (`mkdir "d$i"; i=$((i+1))`).
  // (Quoted words are emptied in the code: a counter stepped in the loop, `i=$((i+1))`/`((i++))`/`let i++`, stands for the name.)
  String.raw`${ENDLESS_LOOP}${LOOP_BODY}\b(?:mkdir|touch|fallocate|cp|dd|truncate|ln)\b[^;\n&|]*\$\{?\w${LOOP_BODY}\bdone\b`,
  String.raw`${ENDLESS_LOOP}${LOOP_BODY}\b(?:mkdir|touch|fallocate|cp|dd|truncate|ln)\b${LOOP_BODY}(?:\b(\w+)=\$\(\(\s*\1\s*\+|\(\(\s*\w+\s*(?:\+\+|\+=)|\blet\s+\w+\+\+|\(\(\s*\+\+\w+)${LOOP_BODY}\bdone\b`,
  // A hundred thousand turns or more, each making a file or directory (`for i in $(seq 1 1000000); do mktemp; done`): inodes run out.
  String.raw`\bfor\s+(?:\w+\s+in\s+(?:\$\(\s*seq\s+(?:-?\d+\s+){0,2}\d{6,}\s*\)|\{\d+\.\.\d{6,}\})|\(\(\s*\w+\s*=\s*\d+\s*;\s*\w+\s*<=?\s*\d{6,}\s*;[^)]*\)\))\s*(?:;|\n)\s*do\s${LOOP_BODY}(?<![\w/-])(?:mktemp|tempfile|touch|mkdir|fallocate|truncate\s+-s)\b${LOOP_BODY}\bdone\b`,
  // A new unique file or directory on every turn (`while true; do mktemp -p . ; done`): inodes and disk run out.
  String.raw`${ENDLESS_LOOP}${LOOP_BODY}(?<![\w/-])(?:mktemp|tempfile)\b${LOOP_BODY}\bdone\b`,
  String.raw`${ENDLESS_LOOP}${LOOP_BODY}\b(?:mkdir|touch|fallocate|cp|dd)\b[^;\n&|]*(?:\$RANDOM|\$\(\s*(?:date|uuidgen|mktemp)|\$\(\(\s*\w+\s*\+\+|\$SRANDOM|\$\{?EPOCHREALTIME)${LOOP_BODY}\bdone\b`,
);

export const DANGEROUS_PATTERNS: DangerousPattern[] = [
  {
    key: "fork_bomb",
    description: "fork bomb",
    // A shell function that starts itself twice, in the background; interpreter forks in endless loops are judged (inline_code.ts).
    scope: "code",
    // An endless shell loop that starts a command in the background on every turn and never waits
    // (`while true; do bash -c '…' & done`, `for ((;;)); do x & done`) forks without bound as well.
    pattern: re(
      String.raw`(?<![\w:.])(?:function\s+)?([\w:.]+)\s*(?:\(\)\s*)?\{[^}]{0,200}?\1\s*(?:\|\s*\1\s*&|&\s*\1(?![\w:.]))`,
      String.raw`(?:\bwhile\s+(?:true|:|\[\s*1\s*\]|\[\[\s*1\s*\]\]|\(\(\s*1\s*\)\))|\buntil\s+(?:false|!\s*true)|\bfor\s*\(\(\s*;\s*;\s*\)\))\s*(?:;|\n)\s*do\s(?:(?!\bdone\b|\bwait\b)[\s\S]){0,300}?[^&>|\s]\s*&(?![&>])(?:(?!\bwait\b|\bsleep\b)[\s\S]){0,300}?\bdone\b`,
    ),
  },
  {
    key: "unanalysable",
    description: "command nested too deeply to analyse",
    pattern: /^\u0000unanalysable$/,
  },
  {
    key: "delete_system_path",
    description: "delete the root, a system directory or the home directory",
    pattern: re(`${AT}rm\\s${ANY}(?:${SYS_TARGET}|--no-preserve-root)${EOT}`),
  },
  {
    key: "format_filesystem",
    description: "create a file system (mkfs) on a device or a path outside the working directory",
  },
  {
    key: "disk_write",
    description: "write raw data onto a disk device",
    pattern: re(
      String.raw`${AT}dd\s${ANY}of=/dev/(?!null${EOT}|zero${EOT}|stdout${EOT}|stderr${EOT}|tty|fd/|shm/|pts/)\S`,
      `${WRITE_REDIR}${DISK}`,
      String.raw`${AT}tee\s${ANY}${DISK}`,
      String.raw`${AT}(?:cp|mv|install)\s[^|]*\s${DISK}${END_ARGS}`,
    ),
  },
  {
    key: "erase_device",
    description: "erase a disk or its partition table (wipefs, blkdiscard, sgdisk --zap, parted mklabel)",
  },
  { key: "shred", description: "irreversibly overwrite files or devices (shred)" },
  {
    key: "kill_all_processes",
    description: "kill init or every process (kill 1, kill -1, killall5)",
    // Signal 0 (`kill -0 1`, `kill -s 0 …`) delivers nothing: it only tests whether the process exists.
    pattern: re(
      String.raw`${AT}kill(?![^|;&]*\s(?:-0|-s\s?0|-n\s?0|--signal[=\s]0|-SIG0)(?=\s|$))\s${ANY}-1${END_ARGS}`,
      String.raw`${AT}kill(?![^|;&]*\s(?:-0|-s\s?0|-n\s?0|--signal[=\s]0)(?=\s|$))(?:\s-\S+)*(?:\s\d+)*\s1${EOT}`,
      `${AT}killall5${EOT}`,
    ),
  },
  {
    key: "reboot_shutdown",
    description: "reboot, shut down or halt the machine",
    pattern: re(
      String.raw`${AT}(?:reboot|shutdown|halt|poweroff|kexec|(?:tel)?init\s+[06]|systemctl\s${ANY}(?:reboot|poweroff|halt|kexec|soft-reboot|rescue|emergency))${EOT}`,
    ),
  },
  {
    key: "remote_code_exec",
    description: "run code downloaded from the network (curl/wget piped into a shell)",
    pattern: re(
      // The interpreter reads its program from the pipe only when no script, -c or -m argument is given.
      String.raw`${AT}(?:curl|wget|fetch|aria2c|https?)\s.*\| ${STDIN_INTERP}`,
      String.raw`${AT}${INTERP}\s${ANY}(?:<|\$)\(\s*(?:sudo\s+)?(?:curl|wget|fetch)${EOT}`,
    ),
  },
  {
    key: "decoded_code_exec",
    description: "run decoded or decrypted content (base64 -d, xxd -r, openssl -d piped into a shell or interpreter)",
    pattern: re(
      String.raw`${AT}${DECODER}${EOT}.*\| ${STDIN_INTERP}`,
      // `bash -c "$(… | base64 -d)"`, `eval $(…)`, `sh <(…)`: the inner pipes are rendered as ¦.
      String.raw`${AT}${INTERP}(?:\s-\S+)*\s[^\s|]*(?:<|\$)\((?:[^)]*¦)?\s*${DECODER}(?=[\s)]|$)`,
    ),
  },
  {
    key: "system_config_write",
    description: "overwrite system files or configuration (/etc, /boot, /usr, /proc/sys)",
    pattern: re(
      `(?:${WRITE_REDIR}|${AT}tee\\s${ANY}|${AT}dd\\s${ANY}of=|${AT}truncate\\s${ANY}|${AT}(?:sed|perl)(?=\\s${ANY}(?:-[a-z]*i\\S*|--in-place\\S*)${EOT})\\s${ANY}|${AT}${COPY}\\s${ANY}(?:-t\\s?|--target-directory=))${CONFIG_TARGET}`,
      `${AT}${COPY}\\s[^|]*\\s${CONFIG_PATH}${END_ARGS}`,
    ),
  },
  {
    key: "ssh_config_write",
    description: "write SSH keys or configuration (~/.ssh)",
    pattern: re(`(?:${WRITE_REDIR}|${AT}tee\\s${ANY})${SSH_TARGET}`, `${AT}${COPY}\\s[^|]*\\s${SSH_TARGET}${END_ARGS}`),
  },
  {
    key: "shell_rc_write",
    description: "write a shell startup file (~/.bashrc, ~/.profile, …)",
    pattern: re(
      `(?:${WRITE_REDIR}|${AT}tee\\s${ANY}|${AT}(?:sed|perl)(?=\\s${ANY}(?:-[a-z]*i\\S*|--in-place\\S*)${EOT})\\s${ANY})${RC_TARGET}`,
      `${AT}${COPY}\\s[^|]*\\s${RC_PATH}${END_ARGS}`,
    ),
  },
  { key: "sql_drop", description: "SQL DROP of a database, schema or table" },
  { key: "sql_truncate", description: "SQL TRUNCATE" },
  { key: "sql_delete_without_where", description: "SQL DELETE without WHERE" },
  { key: "find_delete", description: "find -delete outside the working directory" },
  { key: "find_exec_rm", description: "find -exec rm outside the working directory" },
  { key: "xargs_rm", description: "xargs with rm of paths not known to be in the working directory" },
  {
    key: "recursive_delete",
    description: "recursive delete of a path outside the working directory or not known in advance",
    pattern: re(
      String.raw`${AT}rm(?=\s${ANY}${REC}${EOT})\s${ANY}(?:[/~$]|\.{1,2}/*(?:\*|\.\*)?${EOT}|\.?\*${EOT}|(?:\S*/)?\.\.(?:/|${EOT}))`,
    ),
  },
  {
    key: "chmod_chown_system",
    description: "recursive chmod/chown of the root, a system directory or the home directory",
    pattern: re(`${AT}(?:chmod|chown|chgrp)(?=\\s${ANY}${REC}${EOT})\\s${ANY}${SYS_TREE}${EOT}`),
  },
  {
    key: "world_writable",
    description: "world-writable permissions (777) applied recursively or on a system path",
    pattern: re(
      `${AT}chmod(?=\\s${ANY}(?:[0-7]?[0-7]{2}[2367]|[ugoa]*[ao][ugoa]*[+=][rwxXst]*w[rwxXst]*)${EOT})(?=\\s${ANY}(?:${REC}|${SYS_TREE})${EOT})`,
    ),
  },
  {
    key: "stop_service",
    description: "stop, disable or mask a system service",
    pattern: re(
      String.raw`${AT}(?:systemctl\s${ANY}(?:stop|disable|mask|kill|isolate)|service\s+\S+\s+(?:stop|disable)|(?:init\.d/\S+|invoke-rc\.d\s+\S+|rc-service\s+\S+|sv|s6-svc\s+-d|supervisorctl)\s+(?:stop|force-stop|down|-d)|launchctl\s+(?:unload|stop|remove|bootout|disable)|update-rc\.d\s${ANY}(?:disable|remove)|rc-update\s+(?:del|delete)|chkconfig\s${ANY}off|(?:sysv-rc-conf|systemd-sysv-install)\s${ANY}(?:off|disable))${EOT}`,
    ),
  },
  {
    key: "killall",
    description: "kill processes by name (killall)",
    // `killall -0 name` only tests whether a process exists.
    pattern: re(String.raw`${AT}killall(?![^|]*\s(?:-0|-s\s?0|--signal[=\s]0|-l|--list|-V|--version)(?=\s|$))${EOT}`),
  },
  {
    key: "pkill_force",
    description: "force-kill processes by name (pkill -9)",
    pattern: re(
      String.raw`${AT}pkill\s${ANY}(?:-9|-kill|-sigkill|--signal[=\s](?:9|kill|sigkill)|-s\s?(?:9|kill|sigkill))${EOT}`,
    ),
  },
  { key: "git_force_push", description: "git force-push or remote branch deletion (rewrites shared history)" },
  { key: "git_reset_hard", description: "git reset --hard (discards uncommitted work)" },
  { key: "git_clean_force", description: "git clean -f (deletes untracked files)" },
  {
    key: "git_history_rewrite",
    description: "git history rewrite (filter-branch, filter-repo, reflog expire)",
    // `git filter-repo --analyze` only writes a report about the history.
    pattern: re(
      String.raw`${AT}(?:git${GITOPTS}\s(?:filter-branch|filter-repo(?![^|]*\s--analyze(?=\s|$))|reflog\s+expire)|git-filter-repo(?![^|]*\s--analyze(?=\s|$))|bfg)${EOT}`,
    ),
  },
  {
    key: "crontab_remove",
    description: "remove the crontab (crontab -r)",
    pattern: re(String.raw`${AT}crontab\s${ANY}-[a-z]*r[a-z]*${EOT}`),
  },
  {
    key: "firewall_flush",
    description: "flush or disable the firewall",
    pattern: re(
      String.raw`${AT}(?:(?:ip6?tables|iptables-(?:legacy|nft)|ebtables|arptables)\s${ANY}(?:-f|--flush|-x|--delete-chain)|nft\s${ANY}(?:flush|delete)\s+(?:ruleset|table)|ufw\s+(?:--force\s+)?(?:disable|reset))${EOT}`,
    ),
  },
  {
    key: "container_mass_delete",
    description: "delete all containers, images or volumes",
    pattern: re(
      String.raw`${AT}(?:docker|podman)\s(?:container\s|image\s)?(?:rm|rmi|kill|stop)\s[^|]*\$\(\s*(?:docker|podman)\s`,
      String.raw`${AT}(?:docker|podman)\s(?:system|image|builder)\sprune(?=\s${ANY}(?:-a|--all|--volumes)${EOT})`,
      String.raw`${AT}(?:docker|podman)\svolume\s(?:prune|rm\s[^|]*\$\()`,
      String.raw`${AT}(?:docker|podman)(?:\scompose|-compose)\s${ANY}down\s${ANY}(?:-v|--volumes|--rmi\s\S+)${EOT}`,
    ),
  },
  {
    key: "kubectl_mass_delete",
    description: "delete all Kubernetes resources or a namespace",
    pattern: re(
      String.raw`${AT}kubectl\s${ANY}delete\s${ANY}(?:--all|-a|--all-namespaces|namespaces?|ns)(?:=\S*)?${EOT}`,
    ),
  },
  {
    key: "computed_command",
    description: "command name computed at run time by a command substitution",
    pattern: re(String.raw`${AT}(?:xargs )?[^\s|]*\$\(`),
  },
  {
    key: "move_to_dev_null",
    description: "move files onto /dev/null",
    pattern: re(String.raw`${AT}mv\s[^|]*\s/dev/null${END_ARGS}`),
  },
  // Endless load written as shell loops: CPU burners started in the background on every turn of a loop (`for i in $(seq
  // $(nproc)); do yes >/dev/null & done`), endless loops that nest directories (`while :; do mkdir d && cd d; done`) or
  // make uniquely named files and directories without pause.
  ...EFFECT_CLASSES.map((c) =>
    c.key === "resource_exhaustion" ? { ...c, scope: "code" as const, pattern: ENDLESS_LOAD } : c,
  ),
];

for (const p of DANGEROUS_PATTERNS) if (!SHARED_DESCRIPTIONS.has(p.key)) SHARED_DESCRIPTIONS.set(p.key, p.description);

const TOO_DEEP_UNIT = "\u0000unanalysable";

/** Which patterns match, in pattern order, for an analysed command. */
/**
 * `chmod -R 777 ./tmp-cache`, `chmod -R a+w ./usr/local/cache`: every target a cache or temporary directory of the working
 * directory (named cache, tmp, temp, or with such a suffix or prefix), like /tmp open to every user by design. Served or
 * uploaded content (`./public`, `uploads`) stays world_writable.
 */
function scratchOnlyChmod(unit: string): boolean {
  const words = unit.trim().split(/\s+/);
  if (words[0] !== "chmod") return false;
  const ops = words.slice(1).filter((w) => !w.startsWith("-"));
  const targets = ops.slice(1);
  const scratch = (t: string) =>
    !t.startsWith("/") &&
    !t.startsWith("~") &&
    !t.startsWith("$") &&
    !/(?:^|\/)\.\.(?:\/|$)/.test(t) &&
    /(?:^|\/)(?:\.?(?:cache|tmp|temp)|[\w.-]*[-_.](?:cache|tmp|temp)|(?:cache|tmp|temp)[-_.][\w.-]*|__pycache__)\/?$/i.test(
      t,
    );
  return targets.length > 0 && targets.every(scratch);
}

export function matchPatterns(analysis: CommandAnalysis): { key: string; description: string }[] {
  const units = analysis.tooDeep ? [...analysis.units, TOO_DEEP_UNIT] : analysis.units;
  const out: { key: string; description: string }[] = [];
  for (const p of DANGEROUS_PATTERNS) {
    const judged = analysis.findings.some((f) => f.key === p.key);
    const hit =
      judged ||
      (p.pattern !== undefined &&
        (p.scope === "raw"
          ? p.pattern.test(analysis.normalized)
          : p.scope === "code"
            ? analysis.code.some((c) => p.pattern!.test(c))
            : units.some((u) => p.pattern!.test(u) && !(p.key === "world_writable" && scratchOnlyChmod(u)))));
    if (hit) out.push({ key: p.key, description: p.description });
  }
  return out;
}

/** Is this command dangerous, and by which pattern? */
export function detectDangerousCommand(cmd: string, opts?: DetectOptions): Detection {
  if (typeof cmd !== "string" || !cmd.trim()) return { dangerous: false };
  const matches = matchPatterns(analyseCommand(cmd, opts));
  if (!matches.length) return { dangerous: false };
  return { dangerous: true, patternKey: matches[0]!.key, description: matches[0]!.description, matches };
}

/**
 * Hermes' pattern keys (its description strings, which its session approvals and `command_allowlist`
 * store) for each class here, so a Hermes allowlist entry approves the same class.
 */
export const HERMES_KEYS: Readonly<Record<string, readonly string[]>> = {
  delete_system_path: ["delete in root path"],
  recursive_delete: ["recursive delete", "recursive delete (long flag)"],
  world_writable: ["world-writable permissions", "recursive world-writable (long flag)"],
  chmod_chown_system: ["recursive chown to root", "recursive chown to root (long flag)"],
  format_filesystem: ["format filesystem"],
  disk_write: ["disk copy", "write to block device"],
  sql_drop: ["SQL DROP"],
  sql_delete_without_where: ["SQL DELETE without WHERE"],
  sql_truncate: ["SQL TRUNCATE"],
  system_config_write: ["overwrite system config"],
  stop_service: ["stop/disable system service"],
  kill_all_processes: ["kill all processes"],
  pkill_force: ["force kill processes"],
  fork_bomb: ["fork bomb"],
  shell_input: ["shell command via -c flag"],
  inline_code_unanalysable: ["script execution via -e/-c flag"],
  remote_code_exec: ["pipe remote content to shell"],
  xargs_rm: ["xargs with rm"],
  find_exec_rm: ["find -exec rm"],
  find_delete: ["find -delete"],
};

/** Every name an allowlist entry may use for a class: its key, its description, its Hermes keys. */
export function classNames(m: { key: string; description: string }): string[] {
  return [m.key, m.description, ...(HERMES_KEYS[m.key] ?? [])];
}

/** The real path of a path in the task's environment (symlinks resolved); null when it cannot be resolved. */
export type PathResolver = (path: string) => Promise<string | null>;

export interface ResolveOptions extends DetectOptions {
  /** The task's working directory (absolute, in the task's environment). */
  workdir: string;
  realpath: PathResolver;
}

const SYMLINK_CLASS = EFFECT_CLASSES.find((c) => c.key === "symlink_outside_workdir")!;

function insideDir(path: string, dir: string): boolean {
  const rel = posix.relative(dir, path);
  return rel === "" || (!rel.startsWith("../") && rel !== ".." && !posix.isAbsolute(rel));
}

/**
 * detectDangerousCommand, plus the targets that look inside the working directory resolved in the
 * task's environment: a delete, move, write or chmod of `build/*` where `build` links to a host
 * folder is flagged as symlink_outside_workdir. The resolver is the environment's `realpath`.
 */
export async function detectDangerousCommandResolved(cmd: string, opts: ResolveOptions): Promise<Detection> {
  if (typeof cmd !== "string" || !cmd.trim()) return { dangerous: false };
  const matches = await resolvedMatches(
    analyseCommand(cmd, { ...opts, defaultCwd: opts.defaultCwd ?? opts.workdir }),
    opts,
  );
  if (!matches.length) return { dangerous: false };
  return { dangerous: true, patternKey: matches[0]!.key, description: matches[0]!.description, matches };
}

/**
 * The matches of an analysed command, plus the symlink class when a target inside the working directory resolves
 * outside it. `analysis` must come from analyseCommand with `defaultCwd` set to `opts.defaultCwd ?? opts.workdir`.
 */
export async function resolvedMatches(
  analysis: CommandAnalysis,
  opts: ResolveOptions,
): Promise<{ key: string; description: string }[]> {
  const matches = matchPatterns(analysis);
  if (analysis.insideTargets.length && !matches.some((m) => m.key === SYMLINK_CLASS.key)) {
    const root = (await opts.realpath(opts.workdir)) ?? posix.normalize(opts.workdir);
    for (const target of analysis.insideTargets) {
      // A glob is resolved at its directory; a file that does not exist yet, at its parent.
      const plain = target
        .split("/")
        .filter((seg, k, all) => !/[*?[]/.test(seg) && !all.slice(0, k).some((s) => /[*?[]/.test(s)));
      let path = posix.join(opts.workdir, ...plain);
      let real = await opts.realpath(path);
      while (real === null && path !== opts.workdir && insideDir(path, opts.workdir)) {
        path = posix.dirname(path);
        real = await opts.realpath(path);
      }
      if (real !== null && !insideDir(real, root)) {
        matches.push({ key: SYMLINK_CLASS.key, description: SYMLINK_CLASS.description });
        break;
      }
    }
  }
  return matches;
}
