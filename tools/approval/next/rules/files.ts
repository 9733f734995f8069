/**
 * Data: Rows for files: writes named by options, credentials kept on this machine, permissions. Rows follow the shape of `Rule` (types.ts); every row carries its examples.
 */
import type { ClassKey } from "../classes.js";
import type { Rule } from "./types.js";

/** Where paths point (paths.ts): system directories, devices that hold nothing, secrets, shell start-up files. */
export const PATH_PATTERNS = {
  /**
   * System paths: the root; the operating system's trees at any depth (/etc, /usr, /boot, …, Windows'
   * own folders); the top-level folders (/var, /opt, /srv, /home, …) themselves; and the folders one
   * level down in /var and /home (`/var/log`, `/var/www`, a user's home). Below that (`/opt/app`,
   * `/srv/data`, `/var/lib/mysql`) a path is outside the working directory but not the system's.
   */
  system:
    /^\/(etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|proc|sys|selinux|[a-z]\/(windows|programdata|program files( \(x86\))?))(\/|$)|^\/((var|opt|root|srv|home|mnt|media|snap|run)\/?)?$|^\/(var|home)\/[^/]+\/?$/,
  harmlessDevices: /^\/dev\/(null|zero|u?random|stdout|stderr|stdin|tty|fd\/\d+|shm(\/|$))/,
  /** SSH keys and configuration, wherever the folder sits (a home can be anywhere under --env host). */
  ssh: /(^~|\/)\.ssh(\/|$)/,
  /** Credential folders and files, wherever they sit. */
  secrets:
    /(^~|\/)(\.aws|\.gnupg|\.kube|\.docker|\.config\/gcloud|\.azure|\.netrc|\.git-credentials|\.pgpass|\.npmrc|\.pypirc|\.vault-token|\.password-store|\.hermes-batch)(\/|$)/,
  /** A user's shell start-up files, wherever the home is (those under /etc are system configuration). */
  shellRc:
    /(^~|\/)\.(bashrc|bash_profile|bash_aliases|profile|zshrc|zshenv|zprofile|zlogin|zsh_aliases|bash_login|bash_logout|inputrc)$/,
};

/**
 * Where a path outside the working directory lands (paths.ts' classes), first match wins; a path none of
 * them matches is the system's or just outside.
 */
export const PLACES = [
  [PATH_PATTERNS.ssh, "ssh"],
  [PATH_PATTERNS.secrets, "home-secret"],
  [PATH_PATTERNS.shellRc, "shell-rc"],
  [/^~/, "home"],
  [/^\/(tmp|var\/tmp)(\/|$)/, "temp"],
  [PATH_PATTERNS.harmlessDevices, "temp"],
  [/^\/dev\//, "device"],
] as const;

/** The class of a write by where it lands (paths.ts' classes); the task's own places are absent. */
export const WRITE_CLASSES: Record<string, ClassKey> = {
  system: "system_config_write",
  "shell-rc": "shell_rc_write",
  ssh: "ssh_config_write",
  "home-secret": "credential_write",
  device: "disk_write",
  home: "overwrite_outside_workdir",
  outside: "overwrite_outside_workdir",
};

/** Places outside the task whose writes have a class of their own, before the class of where they land. */
export const WRITE_PLACES: [RegExp, ClassKey][] = [
  [/^\/(var\/spool\/cron\/|etc\/crontab$|etc\/cron\.d\/)/, "crontab_replace"],
  [/^\/var\/lib\/(mysql|mariadb|postgresql|pgsql|mongodb)\//, "overwrite_data_file"],
];

/** /tmp itself: emptying it is not the line's own, even when the rest of /tmp is. */
export const TEMP_ROOT = /^\/(var\/)?tmp\/?\*?$/;

/** Options that make a run a trial or a help text: nothing changes (system and remote rows do not fire). */
export const TRIAL_RUN =
  /(^|\s)(--dry-?run(=(?!none|false)\S+)?|--dry_run|--help|-help|--simulate|--just-print|--assumeno|--what-if|--check|--noop|--validate|--preview-only|-n\s+-v)(\s|$)|(^|\s)-h$/;

/** Directories open to everyone by design: caches and scratch space of the working directory. */
const SCRATCH =
  /(^|\/)(\.?(cache|tmp|temp)|[\w.-]*[-_.](cache|tmp|temp)|(cache|tmp|temp)[-_.][\w.-]*|__pycache__)\/?$/i;

/** What judges.ts reads about listings whose paths a delete acts on. */
export const LISTINGS = {
  /** Programs that list a tree. */
  listers: /^(find|fd|fdfind|ls)$/,
  /**
   * find expressions that do not narrow what find lists (with the value after `-type`, f or d): a delete of
   * what such a find lists at the working directory's root empties the whole of the task's work.
   */
  wholeTree:
    /^(-type|f|d|-xdev|-mount|-depth|-d|-mindepth|-maxdepth|\d+|-print0?|-delete|-L|-H|-P|-follow|-noleaf|-ignore_readdir_race|-daystart|-nowarn|-true|-o|-a|-and|-or|\(|\))$/,
  /** Listings of the whole machine (a file index): what they feed to xargs can be any path, anywhere. */
  machine: /^(locate|mlocate|plocate|slocate)$/,
  /** What a delete of a whole listing reads as, by the wrapper that fed it. */
  keys: [
    ["find -exec", "find_exec_rm"],
    ["xargs", "xargs_rm"],
  ] as [via: string, key: ClassKey][],
};

export const FILE_RULES: Rule[] = [
  // files: writes named by options or key=value operands
  {
    program: ["dd"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { prefix: "of=" },
    flag: ["dd if=./passwd.new of=/etc/passwd", "dd of=/etc/hostname <<< x", "dd if=/dev/zero of=/dev/sda bs=1M"],
    pass: ["dd if=/dev/zero of=./disk.img bs=1M count=10", "dd if=/dev/sda of=./mbr.bin bs=512 count=1"],
  },
  {
    program: ["dd"],
    args: /(^|\s)if=\/dev\/(zero|null|u?random)(\s.*)?\sof=\S+\.(db|sqlite3?|mdb|frm|ibd)(\s|$)|(^|\s)of=\S+\.(db|sqlite3?)\s.*if=\/dev\/(zero|null|u?random)/,
    effect: "system",
    key: "overwrite_data_file",
    flag: ["dd if=/dev/zero of=./users.db bs=1k count=1"],
    pass: ["dd if=/dev/zero of=./disk.img bs=1k count=1"],
  },
  {
    program: ["truncate"],
    args: /(^|\s)(-s\s*0|--size[= ]0)(\s.*)?\s\S+\.(db|sqlite3?|mdb)(\s|$)/,
    effect: "system",
    key: "overwrite_data_file",
    flag: ["truncate -s 0 data.db", "truncate -s0 app.sqlite3"],
    pass: ["truncate -s 0 app.log"],
  },
  {
    program: ["cp", "mv", "install", "cat"],
    args: /^(-\S+\s+)*\/dev\/(null|zero)\s+\S+\.(db|sqlite3?|mdb)$/,
    effect: "system",
    key: "overwrite_data_file",
    flag: ["cp /dev/null production.sqlite3", "cp /dev/null users.db"],
    pass: ["cp seed.db test.db"],
  },
  {
    program: ["tar", "bsdtar", "gtar"],
    args: /(^|\s)(-?[a-zA-Z]*x[a-zA-Z]*|--extract|--get)(\s|$)/,
    unless: /(^|\s)-[a-zA-Z]*t[a-zA-Z]*(\s|$)|--list|--to-stdout|(^|\s)-O(\s|$)/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-C", "--directory"], fallback: "." },
    flag: ["cd / && tar -xzf /workspace/overlay.tgz", "tar -xf x.tar -C /usr/local/bin"],
    pass: ["tar -xzf pkg.tgz", "cd /tmp/x && tar xf ./a.tar", "tar -xzf a.tgz -C ./vendor"],
  },
  {
    program: ["unzip"],
    unless: /(^|\s)-[a-zA-Z]*[lvtpZ][a-zA-Z]*(\s|$)/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-d"], fallback: "." },
    flag: ["cd / && unzip -o /workspace/root.zip", "unzip -o x.zip -d /opt/app"],
    pass: ["unzip -o x.zip", "unzip -l /tmp/x.zip", "unzip -q a.zip -d ./out"],
  },
  {
    program: ["7z", "7za", "7zz"],
    verbs: [["x", "e"]],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-o"], fallback: "." },
    flag: ["7z x payload.7z -o/usr/lib"],
    pass: ["7z x payload.7z -o./out", "7z l a.7z"],
  },
  {
    program: ["cpio"],
    args: /(^|\s)-[a-zA-Z]*[ip]|--extract|--pass-through/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-D", "--directory"], fallback: "." },
    flag: ["cd / && cpio -idum < /workspace/rootfs.cpio", "cpio -i -d -D / < rootfs.cpio"],
    pass: ["cpio -idm < a.cpio", "cpio -t < a.cpio"],
  },
  {
    program: ["cpio"],
    args: /(^|\s)-[a-zA-Z]*p|--pass-through/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "operands",
    flag: ["find . -depth | cpio -pdm /srv/mirror"],
    pass: ["find . -depth | cpio -pdm ./mirror"],
  },
  {
    program: ["tar", "gtar", "bsdtar"],
    args: /--to-command[= ]\S*\b(sh|bash|zsh|dash|python\d*|perl|node|ruby|php)\b/,
    effect: "execute",
    key: "shell_input",
    flag: ["tar xzf scripts.tgz --to-command=bash", "gtar -xf payload.tar --to-command 'python3'"],
    pass: ["tar xzf a.tgz --to-command='wc -c'"],
  },
  {
    program: ["fusermount", "fusermount3"],
    args: /(^|\s)-[a-zA-Z]*u/,
    when: (ops) => ops.some((o) => /^[/~]/.test(o) && !/^\/tmp\//.test(o)),
    effect: "system",
    key: "mount_change",
    flag: ["fusermount -u /mnt/data", "fusermount3 -uz ~/mnt/s3"],
    pass: ["fusermount -u ./mnt"],
  },
  {
    program: ["find"],
    args: /\s-exec(dir)?\s+cp\s/,
    unless: /-maxdepth/,
    effect: "exhaust",
    key: "resource_exhaustion",
    when: (ops) => ops[0] === "/",
    flag: ["find / -xdev -type f -exec cp --parents {} ./mirror/ \\;"],
    pass: ["find . -name '*.txt' -exec cp {} ./out/ \\;"],
  },
  {
    program: ["kubectl", "oc"],
    verbs: [["scale"]],
    args: /--replicas[= ](\d{3,})/,
    effect: "exhaust",
    key: "resource_exhaustion",
    flag: ["oc scale dc/worker --replicas 3000", "kubectl scale deploy/api --replicas=500"],
    pass: ["kubectl scale deploy/api --replicas=3"],
  },
  {
    program: ["docker", "docker-compose", "podman", "podman-compose"],
    args: /--scale[= ]\S+=(\d{3,})/,
    effect: "exhaust",
    key: "resource_exhaustion",
    flag: ["docker compose up -d --scale worker=2000"],
    pass: ["docker compose up -d --scale worker=3"],
  },
  {
    program: ["aws"],
    args: /--(desired-capacity|max-size|desired-count)[= ](\d{3,})/,
    effect: "exhaust",
    key: "resource_exhaustion",
    flag: ["aws autoscaling set-desired-capacity --auto-scaling-group-name web --desired-capacity 5000"],
    pass: ["aws autoscaling set-desired-capacity --auto-scaling-group-name web --desired-capacity 4"],
  },
  {
    program: ["cp", "rsync"],
    args: /(^|\s)\/\/?(\s|$)/,
    anyOption: ["-a", "-r", "-R", "--recursive", "--archive", "-aH", "-av", "-rv", "-ra"],
    // the whole tree copied: `/` as the source (as the destination, the overwrite rows judge it), not a trial run
    unless: /(^|\s)\/\/?$|(^|\s)--dry-run(\s|$)/,
    effect: "exhaust",
    key: "resource_exhaustion",
    flag: ["cp -a / ./rootfs-copy", "rsync -aH --info=progress2 / ./snapshot/"],
    pass: ["cp -a ./src ./dst", "rsync -n -av --delete ./dist/ /", "rsync -a --dry-run / ./snapshot/"],
  },
  {
    program: ["sort", "crudini"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-o", "--output", "--set", "--del"] },
    optionLike: /^-o\S+$/,
    flag: ["sort -u -o /etc/group /etc/group"],
    pass: ["sort -o sorted.txt in.txt"],
  },
  {
    program: ["sponge"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    flag: ["sort -u /etc/hosts | sponge /etc/hosts"],
    pass: ["sort a.txt | sponge a.txt"],
  },
  {
    program: ["uniq"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "allButLast",
    flag: ["uniq users.txt /etc/passwd"],
    pass: ["uniq a.txt b.txt", "uniq -c a.txt"],
  },
  {
    program: ["patch"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "operands",
    flag: ["patch -p0 /etc/ssh/sshd_config < fix.diff"],
    pass: ["patch -p1 < fix.diff"],
  },
  {
    program: ["ed", "ex", "vim", "vi", "nvim", "crudini", "augtool"],
    args: /(^|\s)(-[a-zA-Z]*[sec][a-zA-Z]*|--set|--del)(\s|$)/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "operands",
    when: (ops) => ops.some((o) => /^\/(etc|usr|boot|var|opt|root|srv)\//.test(o)),
    flag: [
      "ed -s /etc/fstab <<< x",
      "crudini --set /etc/php/8.2/fpm/php.ini PHP display_errors On",
      "ex -sc 'g/^#/d|x' /etc/hosts",
    ],
    pass: ["ed -s notes.txt <<< x"],
  },
  {
    program: ["gawk", "awk"],
    args: /(^|\s)-i\s*inplace(\s|$)/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "operands",
    when: (ops) => ops.some((o) => /^(\/|~)/.test(o)),
    flag: ["awk -i inplace '!/x/' /etc/passwd", "gawk -i inplace '{sub(/a/,\"b\")}1' ~/.bashrc"],
    pass: ["gawk -i inplace '{sub(/a/,\"b\")}1' notes.txt", "gawk -e '{print}' /etc/passwd"],
  },
  {
    // keys, certificates and outputs named by -out/-keyout
    program: ["openssl"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-out", "-keyout"] },
    flag: [
      "openssl req -x509 -nodes -newkey rsa:2048 -keyout /etc/ssl/private/x.key -out /etc/ssl/certs/x.crt -subj /CN=x",
    ],
    pass: ["openssl req -x509 -nodes -newkey rsa:2048 -keyout ./certs/k.pem -out ./certs/c.pem -subj /CN=x"],
  },
  {
    // in-place edits of structured files (XML, YAML, JSON, TOML)
    program: ["xmlstarlet", "xml", "yq", "dasel", "tomlq"],
    anyOption: ["-L", "--inplace", "-i", "--in-place", "-w", "--write"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "last",
    flag: ["xmlstarlet ed -L -d '//proxy' ~/.m2/settings.xml", "yq -i '.x = 1' /etc/app/config.yaml"],
    pass: ["xmlstarlet ed -L -u '//version' -v 2 pom.xml", "xmlstarlet sel -t -v '//id' ~/.m2/settings.xml"],
  },
  {
    program: ["curl"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-o", "--output", "--output-dir"] },
    optionLike: /^-[a-zA-Z]*o$/,
    flag: [
      "curl -fsSL -o /usr/local/bin/kubectl https://dl.example/kubectl",
      "curl -sSLo /usr/local/bin/k https://x/k",
    ],
    pass: ["curl -fsSL -o ./kubectl https://dl.example/kubectl", "curl -o /tmp/x.tgz https://x/x.tgz"],
  },
  {
    program: ["wget"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-O", "--output-document", "-P", "--directory-prefix"] },
    optionLike: /^-[a-zA-Z]*O$/,
    unless: /(^|\s)-[a-zA-Z]*O\s*-(\s|$)/,
    flag: ["wget -O /etc/apt/sources.list http://mirror.example/list", "wget -qO /etc/x http://x/y"],
    pass: ["wget -qO- https://x/y", "wget -O ./x https://x/y"],
  },
  {
    program: ["yq", "jq", "dasel", "tomlq"],
    args: /(^|\s)(-i|--inplace|--in-place|-w)(\s|$)/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "last",
    flag: ["yq -i 'del(.contexts)' ~/.kube/config"],
    pass: ["yq -i '.a = 1' ./config.yaml"],
  },
  // credentials kept on this machine
  {
    program: ["gpg", "gpg2"],
    args: /--delete-(secret-)?keys?|--delete-secret-and-public-keys?|--import-ownertrust/,
    unless: /--homedir[= ]\.{0,2}\/?[\w.-]+(\s|$)/,
    effect: "system",
    key: "credential_write",
    flag: ["gpg --yes --batch --delete-secret-keys ABCDEF0123456789"],
    pass: ["gpg --list-keys"],
  },
  {
    program: ["pass", "gopass"],
    verbs: [["rm", "remove", "delete", "mv", "insert", "generate", "edit", "init", "git"]],
    effect: "system",
    key: "credential_write",
    flag: ["pass rm -r prod/db"],
    pass: ["pass show prod/db"],
  },
  {
    program: ["aws"],
    verbs: [["configure"], ["set", "import"]],
    args: /aws_(access_key_id|secret_access_key|session_token)|credential|(^|\s)import(\s|$)/,
    effect: "system",
    key: "credential_write",
    flag: ["aws configure set aws_access_key_id AKIAEXAMPLE --profile default"],
    pass: ["aws configure list"],
  },
  {
    program: ["ssh-add"],
    args: /(^|\s)-[a-zA-Z]*[dD]/,
    effect: "system",
    key: "credential_write",
    flag: ["ssh-add -D"],
    pass: ["ssh-add -l"],
  },
  {
    program: ["certbot"],
    verbs: [["delete", "revoke"]],
    effect: "system",
    key: "credential_write",
    flag: ["certbot delete --cert-name acme.io --non-interactive"],
    pass: ["certbot certificates"],
  },
  // permissions
  {
    program: ["chmod"],
    args: /(^|\s)(-[a-zA-Z]*R[a-zA-Z]*|--recursive)(\s.*)?\s(0?777|a\+rwx|ugo\+rwx|o\+w|a\+w|\+w)(\s|$)|(^|\s)(0?777|a\+rwx)\s.*(-R|--recursive)/,
    when: (ops) => !ops.slice(1).every((t) => !/^[/~$]/.test(t) && !/(^|\/)\.\.(\/|$)/.test(t) && SCRATCH.test(t)),
    effect: "system",
    key: "world_writable",
    flag: ["chmod -R 777 ./public", "chmod -R a+rwx uploads"],
    pass: ["chmod -R 755 build", "chmod 777 ./tmpfile", "chmod -R 777 ./tmp-cache", "chmod -R 777 ./var/cache"],
  },
  {
    program: ["chmod"],
    args: /(^|\s)([ua]*[+=][rwxXt]*s[rwxXt]*|0?[46][0-7]{3})(\s|$)/,
    effect: "system",
    key: "chmod_outside_workdir",
    flag: ["chmod u+s ./exploit", "chmod 4777 /tmp/.sh", "chmod +s /tmp/rootsh"],
    pass: ["chmod 0755 run.sh", "chmod +x run.sh", "chmod g+s ./shared", "chmod 2775 ./team"],
  },
  {
    // install's mode is a chmod of what it puts in place: a setuid one is the same grant.
    program: ["install", "ginstall"],
    args: /(^|\s)(-m\s*|--mode[= ])([ua]*[+=][rwxXt]*s[rwxXt]*|0?[46][0-7]{3})(\s|$)/,
    effect: "system",
    key: "chmod_outside_workdir",
    flag: ["install -m 4755 /bin/bash /tmp/rootsh", "install --mode=u+s /bin/sh ./x", "install -m6755 a /tmp/b"],
    pass: ["install -m 0755 build/app ./bin/app", "install -m 2775 -d ./team", "install -m 644 a.conf ./etc/"],
  },
  {
    program: ["chmod", "chown", "chgrp"],
    optionLike: /^-[rwxXst]+$/,
    effect: "permission",
    key: "chmod_outside_workdir",
    paths: "allButLast",
    flag: ["chmod -w /etc/resolv.conf", "chmod -x /usr/bin/sudo"],
    pass: ["chmod -x ./run.sh"],
  },
  {
    program: ["chmod", "chown", "chgrp"],
    anyOption: ["--reference="],
    effect: "permission",
    key: "chmod_outside_workdir",
    paths: "operands",
    flag: ["chmod --reference=./x /etc/passwd", "chown --reference=./me /etc/sudoers.d/ci"],
    pass: ["chmod --reference=./a ./b"],
  },
  {
    program: ["chattr"],
    effect: "permission",
    key: "chmod_outside_workdir",
    paths: "allButLast",
    optionLike: /^-[aAcCdDeFijmPsStTux]+$/,
    flag: ["chattr -i /etc/passwd", "chattr +i /etc/resolv.conf"],
    pass: ["chattr +i ./notes.txt"],
  },
  {
    program: ["git"],
    verbs: [["clean"]],
    globalValued: ["-C", "-c", "--git-dir", "--work-tree"],
    args: /(^|\s)(-[a-zA-Z]*f[a-zA-Z]*|--force)(\s|$)/,
    effect: "delete",
    key: "git_clean_force",
    paths: "afterVerbs",
    flag: ["git -C /srv/app clean -fdx", "cd /opt/repo && git clean --force -d", "git -C ~ clean -fdx"],
    pass: ["git -C ./sub clean -fdx", "git clean -n"],
  },
  {
    // the files deleted are those of the work tree named (`--work-tree=/etc`), not of the working directory
    program: ["git"],
    verbs: [["clean"]],
    globalValued: ["-C", "-c", "--git-dir", "--work-tree"],
    args: /(^|\s)(-[a-zA-Z]*f[a-zA-Z]*|--force)(\s|$)/,
    effect: "delete",
    key: "git_clean_force",
    paths: { option: ["--work-tree"] },
    flag: ["git --work-tree=/etc --git-dir=/etc/.git clean -fdx", "git --work-tree ~/dotfiles clean -fd"],
    pass: ["git --work-tree=./site clean -fdx", "git --work-tree=/etc clean -n"],
  },
  {
    // an archive written (`-cf FILE`, `--file=FILE`): FILE is overwritten, a disk device or a system file included
    program: ["tar", "bsdtar", "gtar"],
    args: /(^|\s)(-[a-zA-Z]*[crAu][a-zA-Z]*|--create|--append|--update|--concatenate)(\s|$)/,
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: { option: ["-f", "--file"] },
    flag: ["tar -cf /dev/sda .", "tar -czf /etc/passwd ./x", "tar --create --file=/usr/bin/ls ."],
    pass: ["tar -czf /tmp/backup.tgz .", "tar -cf dist.tar ./dist", "tar -czf - . | wc -c", "tar -xf a.tar"],
  },
  {
    // the old spelling without a dash (`tar cf FILE …`): FILE is the first operand after the letters
    program: ["tar", "bsdtar", "gtar"],
    args: /^[a-zA-Z]*[crAu][a-zA-Z]*f(\s|$)/,
    word: { test: /^\/dev\/(sd|nvme|hd|vd|xvd|mmcblk|md|dm-|mapper|disk|loop)/, from: 1, to: 2 },
    effect: "system",
    key: "disk_write",
    flag: ["tar cf /dev/sda .", "tar czvf /dev/nvme0n1 /home"],
    pass: ["tar cf /tmp/b.tar /dev/sda", "tar cf /dev/st0 /home", "tar xf /dev/sr0"],
  },
  {
    // sed's `w FILE` command (and the `w` flag of `s///`) writes FILE
    program: ["sed", "gsed"],
    word: { test: /(^|[\s;{}\d$/])w\s+(?!\/(tmp|dev\/(stdout|stderr|null))\b)[/~]/ },
    effect: "system",
    key: "overwrite_outside_workdir",
    flag: ["sed -n '1w /etc/passwd' /dev/null", "sed 's/a/b/w ~/.bashrc' x", "sed -n '/root/w /etc/cron.d/x' in"],
    pass: [
      "sed -n '1w out.txt' in",
      "sed -n '/x/w /dev/stdout' in",
      "sed -n '/w/p' /etc/hosts",
      "sed -n 'w /tmp/x' in",
    ],
  },
];
