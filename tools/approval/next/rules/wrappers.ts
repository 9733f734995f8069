/**
 * Wrappers as data: programs that run another command (unwrap.ts reads these tables). A wrapper's
 * options are skipped; `valued` options take the next word; `positional` words follow before the
 * wrapped command (`timeout 5 CMD`); `elevates` marks raised rights.
 */
export interface WrapperSpec {
  valued: string[];
  elevates?: boolean;
  positional?: number;
  /** Leading words that must follow for the wrapper to run a command (`uv run CMD`, `git bisect run CMD`). */
  verb?: string[];
  /** The command is what follows `--` (`kubectl exec POD -n NS -- CMD`). */
  afterDashes?: boolean;
  /** The wrapper's own rows are judged too (`systemd-run --on-active` schedules its command). */
  judged?: boolean;
  /** Options whose value is shell text the wrapper runs (`env -S 'CMD ARGS'`). */
  textOptions?: string[];
  /** Runs the command once per input word (`xargs`, `parallel`): where the words go is worked out. */
  fansOut?: boolean;
  /** Runs a package by a name that may carry a version (`npx cdk@2 destroy`): judged by the name. */
  packages?: boolean;
}

/** Shells: `-c CODE` is shell text (unwrap.ts). */
export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "rbash", "tcsh", "csh"]);

const SSH_VALUED = "-p -i -l -o -F -J -L -R -D -b -c -e -m -S -W -w".split(" ");
const CONTAINER_EXEC_VALUED = ["-u", "--user", "-w", "--workdir", "-e", "--env", "--env-file"];

export const WRAPPERS = new Map(
  Object.entries<WrapperSpec>({
    sudo: { valued: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"], elevates: true },
    doas: { valued: ["-u", "-C"], elevates: true },
    pkexec: { valued: ["--user"], elevates: true },
    run0: { valued: ["-u", "--user"], elevates: true },
    env: { valued: ["-u", "--unset", "-C", "--chdir"], textOptions: ["-S", "--split-string"] },
    nohup: { valued: [] },
    time: { valued: ["-f", "-o"] },
    nice: { valued: ["-n", "--adjustment"] },
    ionice: { valued: ["-c", "-n", "-p"] },
    timeout: { valued: ["-s", "--signal", "-k", "--kill-after"], positional: 1 },
    stdbuf: { valued: ["-i", "-o", "-e"] },
    command: { valued: [] },
    builtin: { valued: [] },
    exec: { valued: ["-a"] },
    setsid: { valued: [] },
    unbuffer: { valued: [] },
    chrt: { valued: [], positional: 1 },
    taskset: { valued: [], positional: 1 },
    flock: { valued: ["-w", "-E"], positional: 1 },
    chroot: { valued: [], positional: 1 },
    gosu: { valued: [], positional: 1, elevates: true },
    "su-exec": { valued: [], positional: 1, elevates: true },
    runuser: { valued: ["-u", "-g"], elevates: true },
    xargs: {
      valued: ["-I", "-i", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "-J", "--max-args", "--max-procs", "--delimiter"],
      fansOut: true,
    },
    parallel: { valued: ["-j", "--jobs", "-S"], fansOut: true },
    nsenter: { valued: ["-t", "--target"] },
    "systemd-run": {
      valued: ["-p", "--property", "--unit", "-u", "-M", "--machine", "-E", "--setenv", "--uid", "--gid", "--slice"],
      judged: true,
    },
    fakeroot: { valued: ["-l", "-s", "-i", "--lib", "--faked"] },
    unshare: { valued: ["--map-user", "--map-group", "-S", "-G", "--setuid", "--setgid"] },
    firejail: { valued: [] },
    bwrap: { valued: ["--bind", "--ro-bind", "--dev-bind", "--chdir", "--tmpfs", "--proc", "--dev"] },
    proxychains: { valued: ["-f"] },
    proxychains4: { valued: ["-f"] },
    torsocks: { valued: [] },
    tsocks: { valued: [] },
    caffeinate: { valued: [] },
    strace: { valued: ["-e", "-o", "-p", "-s"] },
    ltrace: { valued: ["-e", "-o"] },
    valgrind: { valued: [] },
    "dbus-launch": { valued: [] },
    eatmydata: { valued: [] },
    faketime: { valued: [], positional: 1 },
    catchsegv: { valued: [] },
    chpst: { valued: ["-u", "-U", "-e", "-n", "-l", "-L"] },
    cgexec: { valued: ["-g"] },
    numactl: { valued: ["-C", "-N", "-m", "--cpunodebind", "--membind", "--physcpubind"] },
    prlimit: { valued: ["-p", "--pid"] },
    busybox: { valued: [] },
    toybox: { valued: [] },
    watchexec: { valued: ["-w", "-e", "--exts", "--watch"] },
    entr: { valued: [] },
    npx: { valued: ["-p", "--package", "-c", "--call"], packages: true },
    bunx: { valued: [], packages: true },
    pnpx: { valued: [], packages: true },
    uv: { valued: ["--python", "--with", "-p", "--directory", "--project"], verb: ["run"] },
    uvx: { valued: ["--python", "--with", "--from"], packages: true },
    poetry: { valued: [], verb: ["run"] },
    pipenv: { valued: [], verb: ["run"] },
    pdm: { valued: [], verb: ["run"] },
    hatch: { valued: [], verb: ["run"] },
    conda: { valued: ["-n", "--name", "-p", "--prefix"], verb: ["run"] },
    mamba: { valued: ["-n", "--name", "-p", "--prefix"], verb: ["run"] },
    bundle: { valued: [], verb: ["exec"] },
    pnpm: { valued: [], verb: ["exec", "dlx"], packages: true },
    yarn: { valued: [], verb: ["dlx", "exec"], packages: true },
    // `dotenv -e .env.prod prisma migrate reset`: the tool runs with the file's variables
    dotenv: { valued: ["-e", "-v", "-p"] },
    git: { valued: [], verb: ["bisect run"] },
    // `docker exec [opts] CONTAINER CMD…`, `kubectl exec POD -- CMD…`: the command run inside
    docker: { valued: CONTAINER_EXEC_VALUED, verb: ["exec"], positional: 1 },
    podman: { valued: CONTAINER_EXEC_VALUED, verb: ["exec"], positional: 1 },
    nerdctl: { valued: CONTAINER_EXEC_VALUED, verb: ["exec"], positional: 1 },
    kubectl: { valued: [], verb: ["exec"], afterDashes: true },
    oc: { valued: [], verb: ["exec"], afterDashes: true },
  }),
);

/** A program that takes a shell command as text. */
export interface ShellTextTaker {
  flag?: string[];
  last?: boolean;
  /** The words after `--`, all words (`eval`), or after the host, skipping these valued options. */
  rest?: "--" | "all" | string[];
  elevates?: boolean;
}

/** Programs that take a shell command as text: `-c CODE` (`sg GROUP -c CODE`), or another spelling. */
export const SHELL_TEXT_TAKERS = new Map(
  Object.entries<ShellTextTaker>({
    eval: { rest: "all" },
    // What ssh runs acts on a server (a shared machine): judged as if with raised rights.
    ssh: { rest: [...SSH_VALUED, "-E", "-B", "-I", "-O", "-Q"], elevates: true },
    su: { flag: ["-c", "--command"], elevates: true },
    sg: { flag: ["-c"] },
    script: { flag: ["-c", "--command"] },
    watch: { last: true },
    trap: {},
    "nix-shell": { flag: ["--run", "--command"] },
    flock: { flag: ["-c", "--command"] },
    "flatpak-spawn": { last: true },
    pssh: { last: true },
    "parallel-ssh": { last: true },
    pdsh: { last: true },
    clush: { last: true },
    "salt-ssh": { last: true },
    mssh: { last: true },
    // remote execution: what follows `--` runs on the hosts (shared machines, judged as with raised rights)
    fab: { rest: "--", elevates: true },
    invoke: { rest: "--", elevates: true },
    pyinfra: { rest: "--", elevates: true },
  }),
);

/**
 * Arguments that carry a shell command to run (shell escapes of editors, debuggers, database shells,
 * ProxyCommand, git aliases, rsync's remote shell): the program → a regex whose group 1 is the command.
 */
export const SHELL_ESCAPES = new Map(
  Object.entries<RegExp>({
    vim: /^(?:\+|-c\s*)?:?(?:\d*,?\d*|%)?!(.+)$/s,
    nvim: /^(?:\+|-c\s*)?:?(?:\d*,?\d*|%)?!(.+)$/s,
    vi: /^(?:\+|-c\s*)?:?(?:\d*,?\d*|%)?!(.+)$/s,
    ex: /^(?:\+|-c\s*)?:?(?:\d*,?\d*|%)?!(.+)$/s,
    view: /^(?:\+|-c\s*)?:?(?:\d*,?\d*|%)?!(.+)$/s,
    gdb: /^(?:!|shell\s+)(.+)$/s,
    lldb: /^(?:platform shell\s+|script\s+os\.system\()(.+)$/s,
    psql: /^\\!\s*(.+)$/s,
    sqlite3: /^(?:-c(?:md)?\s+)?\.(?:system|shell)\s+(.+)$/s,
    duckdb: /^(?:-c(?:md)?\s+)?\.(?:system|shell)\s+(.+)$/s,
    man: /^(?:-P|--pager=?)\s*(.+)$/s,
    mysql: /^(?:system|\\!)\s+(.+)$/s,
    mariadb: /^(?:system|\\!)\s+(.+)$/s,
    ssh: /^-oProxyCommand=(.+)$|^ProxyCommand[= ](.+)$|^-oLocalCommand=(.+)$|^LocalCommand[= ](.+)$/is,
    scp: /^-oProxyCommand=(.+)$|^ProxyCommand[= ](.+)$/is,
    rsync: /^(?:-e|--rsh=?)\s*(.+)$|^--rsync-path=(.+)$/s,
    git: /^(?:(?:core\.(?:pager|editor|sshCommand|fsmonitor)|diff\.external|sequence\.editor|alias\.[\w-]+)=!?|!)(.+)$/s,
    gtar: /^--(?:checkpoint-action=exec|to-command|use-compress-program|rsh-command|info-script|new-volume-script)=(.+)$/s,
    bsdtar: /^--(?:checkpoint-action=exec|to-command|use-compress-program)=(.+)$/s,
    tar: /^--(?:checkpoint-action=exec|to-command|use-compress-program|rsh-command|info-script|new-volume-script)=(.+)$/s,
    less: /^\+?!(.+)$/s,
    zip: /^(?:-TT|--unzip-command)(?:=|\s+)?(.+)$/s,
    // configuration DSLs: `execute "x" do command "…" end`, `exec { "x": command => "…" }`
    "chef-apply": /\bcommand\s*(?:=>\s*)?(?:"([^"]+)"|'([^']+)')/s,
    puppet: /\bcommand\s*(?:=>\s*)?(?:"([^"]+)"|'([^']+)')/s,
    sed: /^(?:\$|\d+|\/[^/]*\/)?e\s+(.+)$|^s(.)(?:(?!\2).)*\2((?:(?!\2).)*)\2[gpiI0-9]*e[gpiI0-9]*$/s,
  }),
);

/** Parts of an escape's command filled from the input at run time (sed's `&`, `\1` in `s/…/…/e`). */
export const INPUT_PARTS = new Map(Object.entries<RegExp>({ sed: /&|\\[1-9]/ }));

/** Options whose value is the program's own command language: computed (`-c "$(curl …)"`), it is unknown code. */
export const SCRIPT_OPTIONS = new Map(
  Object.entries<RegExp>({
    vim: /^(-c|--cmd|-S|\+.*)$/,
    nvim: /^(-c|--cmd|-S|\+.*)$/,
    vi: /^(-c|--cmd|-S|\+.*)$/,
    ex: /^(-c|--cmd|-S|\+.*)$/,
    gdb: /^(-ex|--eval-command|-x|--command)$/,
    sqlite3: /^(-cmd)$/,
    duckdb: /^(-c|-cmd)$/,
  }),
);

/** awk code that hands what it prints (its input) to a shell: `print | "sh"`, `system("rm " $0)`. */
const AWK_SINK = /\|\s*"\s*(\S*\/)?(ba|da|z|k)?sh\b|system\s*\([^)]*\$/;
// A null prototype (here and in COMPILERS, which other files index): `constructor` or `toString` is no row.
export const SHELL_SINKS: Record<string, RegExp> = Object.assign(Object.create(null), {
  awk: AWK_SINK,
  gawk: AWK_SINK,
  mawk: AWK_SINK,
  nawk: AWK_SINK,
} satisfies Record<string, RegExp>);

/** Programs that list paths anywhere on the machine (what xargs then gets). */
export const LISTS_EVERYWHERE = /^(locate|plocate|mlocate|slocate)$/;

/** Options of fd that take a value. */
const FD_VALUED =
  "-e --extension -t --type -E --exclude -d --max-depth --min-depth --exact-depth -S --size --changed-within --changed-before -o --owner -j --threads --max-results -c --color --base-directory --search-path --ignore-file --and".split(
    " ",
  );

/**
 * find and fd: the option that starts the command they run on what they find, the word that ends it, and
 * (fd) the options that take a value: fd's search paths are its operands after the pattern.
 */
export const SEARCH_EXEC = new Map(
  Object.entries<{ exec: RegExp; end: RegExp; valued?: string[] }>({
    find: { exec: /^-(exec|execdir|ok|okdir)$/, end: /^[;+]$/ },
    fd: { exec: /^(-x|--exec|-X|--exec-batch)$/, end: /^;$/, valued: FD_VALUED },
    fdfind: { exec: /^(-x|--exec|-X|--exec-batch)$/, end: /^;$/, valued: FD_VALUED },
  }),
);

/** Programs of one target (`ssh HOST CMD`): xargs runs them once per input, judged with the first. */
export const ONE_TARGET = /^(ssh|mosh|telnet|rsh)$/;

/**
 * A program and its arguments given as two options (`mvn exec:exec -Dexec.executable=bash
 * -Dexec.args="-c …"`): run as the shell text `PROGRAM ARGS`.
 */
export const OPTION_COMMANDS = new Map(
  Object.entries<{ program: RegExp; args: RegExp }>({
    mvn: { program: /^-Dexec\.executable=(.+)$/s, args: /^-Dexec\.args=(.*)$/s },
    mvnw: { program: /^-Dexec\.executable=(.+)$/s, args: /^-Dexec\.args=(.*)$/s },
  }),
);

/** Environment variables whose value a program runs as a command. */
export const COMMAND_ENV =
  /^(BASH_ENV|ENV|GIT_PAGER|GIT_EDITOR|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_SEQUENCE_EDITOR|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|PROMPT_COMMAND|BROWSER|SYSTEMD_PAGER)$/;

/** `tmux`/`screen` subcommands that run shell text in a new window or type it into one. */
export const MULTIPLEXERS = new Map(
  Object.entries<{ verbs: string[]; valued: string[]; keys?: RegExp }>({
    tmux: {
      verbs: [
        "send-keys",
        "send",
        "new-session",
        "new",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
      ],
      valued: ["-t", "-s", "-n", "-c", "-e", "-x", "-y", "-F", "-l", "-p"],
      keys: /^(Enter|C-m|C-j|KPEnter|Escape|C-c|Space|Tab)$/,
    },
    screen: { verbs: ["-X", "-dm", "-dmS", "-d", "-m", "-S"], valued: ["-S", "-dmS", "-p", "-t"] },
  }),
);

/**
 * Remote-execution tools whose module arguments say what they do: the module's parameters read as the
 * local command of the same effect (`ansible all -m file -a 'path=/x state=absent'` → `rm -rf /x`).
 * `$path`, `$name`… are the module's parameters; a row applies when its `when` parameters match.
 */
export const ANSIBLE_MODULES: { modules: string[]; when?: Record<string, RegExp>; command: string }[] = [
  { modules: ["shell", "command", "raw", "ansible.builtin.shell", "ansible.builtin.command"], command: "$free" },
  { modules: ["file", "ansible.builtin.file"], when: { state: /^absent$/ }, command: "rm -rf $path" },
  { modules: ["file", "ansible.builtin.file"], when: { mode: /./ }, command: "chmod $mode $path" },
  { modules: ["file", "ansible.builtin.file"], when: { owner: /./ }, command: "chown $owner $path" },
  { modules: ["copy", "template", "get_url", "unarchive", "synchronize", "fetch"], command: "cp $src $path" },
  {
    modules: ["lineinfile", "blockinfile", "replace", "ini_file", "ansible.builtin.lineinfile"],
    command: "tee $path",
  },
  {
    modules: ["systemd", "service", "ansible.builtin.systemd", "sysvinit"],
    when: { state: /./ },
    command: "systemctl $state $name",
  },
  { modules: ["systemd", "service"], when: { enabled: /^(no|false)$/ }, command: "systemctl disable $name" },
  { modules: ["user", "group"], when: { state: /^absent$/ }, command: "userdel $name" },
  { modules: ["user"], when: { password: /./ }, command: "usermod -p x $name" },
  { modules: ["user"], when: { groups: /\b(sudo|wheel|admin|root|docker)\b/ }, command: "usermod -aG $groups $name" },
  { modules: ["user"], when: { uid: /^0$/ }, command: "usermod -u 0 $name" },
  { modules: ["cron"], when: { job: /./ }, command: "crontab jobs.txt" },
  { modules: ["apt", "yum", "dnf", "package", "pip"], when: { state: /^absent$/ }, command: "apt-get remove $name" },
  { modules: ["reboot"], command: "reboot" },
  { modules: ["sysctl"], command: "sysctl -w $name=$value" },
  { modules: ["mount"], command: "mount $path" },
  { modules: ["cron"], when: { state: /^absent$/ }, command: "crontab -r" },
  { modules: ["iptables", "ufw", "firewalld"], command: "ufw disable" },
  { modules: ["authorized_key"], command: "tee ~/.ssh/authorized_keys" },
];

/** A `key=value` parameter of a module's `-a` string (the value quoted or a bare word). */
export const MODULE_PARAM = /(\w+)=("[^"]*"|'[^']*'|\S+)/g;

/** Parameter names a module's path goes by. */
export const PATH_PARAMS = ["path", "dest", "name", "destfile"];

/** `salt TARGET FUNCTION ARGS…`: functions that run shell text or remove files. */
export const SALT_FUNCTIONS = new Map(
  Object.entries<string>({
    "cmd.run": "$args",
    "cmd.shell": "$args",
    "cmd.run_all": "$args",
    "cmd.script": "bash $args",
    "file.remove": "rm -rf $args",
    "file.directory": "mkdir $args",
    "service.stop": "systemctl stop $args",
    "service.disable": "systemctl disable $args",
    "pkg.remove": "apt-get remove $args",
    "pkg.purge": "apt-get purge $args",
    "system.reboot": "reboot",
    "system.shutdown": "shutdown",
    "user.delete": "userdel $args",
  }),
);

/**
 * Compilers whose output is run on the same line (`cc w.c -o w && ./w`): the verb they need, the option
 * naming the output, the source files they read, and the output's name when none is given (`stem`: the
 * first source without its suffix).
 */
interface Compiler {
  verb?: string;
  output: string;
  sources: RegExp;
  fallback: string;
}
export const COMPILERS: Record<string, Compiler> = Object.assign(Object.create(null), {
  cc: { output: "-o", sources: /\.[ch]$/, fallback: "a.out" },
  gcc: { output: "-o", sources: /\.[ch]$/, fallback: "a.out" },
  clang: { output: "-o", sources: /\.[ch]$/, fallback: "a.out" },
  tcc: { output: "-o", sources: /\.[ch]$/, fallback: "a.out" },
  "g++": { output: "-o", sources: /\.(c|cc|cpp|cxx|h|hpp)$/, fallback: "a.out" },
  "c++": { output: "-o", sources: /\.(c|cc|cpp|cxx|h|hpp)$/, fallback: "a.out" },
  "clang++": { output: "-o", sources: /\.(c|cc|cpp|cxx|h|hpp)$/, fallback: "a.out" },
  rustc: { output: "-o", sources: /\.rs$/, fallback: "stem" },
  go: { verb: "build", output: "-o", sources: /\.go$/, fallback: "stem" },
  nim: { verb: "c", output: "-o", sources: /\.nim$/, fallback: "stem" },
  zig: { verb: "build-exe", output: "-femit-bin", sources: /\.zig$/, fallback: "stem" },
} satisfies Record<string, Compiler>);

/** Modules an interpreter runs as the program of the same name (`python3 -m pip uninstall …` is pip). */
export const MODULE_PROGRAMS = new Map(
  Object.entries({ "python pip": "pip", "python pip3": "pip", "python3 pip": "pip", "python3 pip3": "pip" }),
);
