/**
 * The rebuilt analyser's command model (tools/approval/next/model.ts, words.ts, parser.ts) and the
 * readings built on it (windows.ts, pids.ts): words as bash makes them, and what is judged from them.
 */
import { describe, expect, it } from "vitest";
import { judgeCommand } from "../tools/approval/next/analyse.js";
import { modelCommandLine } from "../tools/approval/next/model.js";
import { windowsText } from "../tools/approval/next/windows.js";

const inWorkspace = { cwd: "/workspace", defaultCwd: "/workspace" };
const argv = (line: string) => modelCommandLine(line).commands[0]!.argv.map((w) => w.text);
const flagged = (line: string) => judgeCommand(line, inWorkspace).dangerous;

describe("words", () => {
  it("expands unquoted braces only", () => {
    expect(argv("rm -rf /etc/{nginx,apache2}")).toEqual(["rm", "-rf", "/etc/nginx", "/etc/apache2"]);
    expect(argv('node -e "const f = (a, b) => { return a, b }"')).toEqual([
      "node",
      "-e",
      "const f = (a, b) => { return a, b }",
    ]);
  });
  it("keeps the newlines of a double-quoted string", () => {
    expect(argv('python3 -c "import os\nwhile True: os.fork()"')[2]).toBe("import os\nwhile True: os.fork()");
  });
  it("reads a brace expansion in the command word as the words it makes", () => {
    expect(argv("{rm,-r,/etc/nginx}")).toEqual(["rm", "-r", "/etc/nginx"]);
    expect(flagged("{rm,-r,/etc/nginx}")).toBe(true);
    expect(flagged("{ ls; pwd; }")).toBe(false);
  });
});

describe("computed words that are known", () => {
  it('splits at ${IFS}, expands set -- into "$@", reads time (…) as its text', () => {
    expect(argv("ls${IFS}-la")).toEqual(["ls", "-la"]);
    expect(flagged("ls${IFS}-la")).toBe(false);
    expect(flagged("rm${IFS}-rf${IFS}/etc")).toBe(true);
    expect(flagged('set -- pytest -k smoke; "$@"')).toBe(false);
    expect(flagged('set -- rm -rf /etc; "$@"')).toBe(true);
    // A name reference (`declare -n`, `local -n`, `typeset -n`) reads the variable it names.
    expect(flagged("declare -n r=HOME; rm -rf $r")).toBe(true);
    expect(flagged('target=/etc; typeset -n t=target; rm -rf "$t"')).toBe(true);
    expect(flagged("f() { local -n d=$1; rm -rf $d/*; }; f HOME")).toBe(true);
    expect(flagged("declare -n r=BUILD_DIR; BUILD_DIR=out; rm -rf $r")).toBe(false);
    expect(flagged("declare r=HOME; rm -rf $r")).toBe(false);
    // BASH_ENV (bash) and ENV (sh) name a file a non-interactive shell runs first: judged as a script it runs.
    expect(flagged("echo 'rm -rf /etc' > /tmp/e.sh; BASH_ENV=/tmp/e.sh bash -c true")).toBe(true);
    expect(flagged("export BASH_ENV=<(echo rm -rf /etc); bash -c true")).toBe(true);
    expect(flagged("ENV=<(echo rm -rf ~) sh -c 'echo hi'")).toBe(true);
    expect(flagged("echo 'set -e' > /tmp/e.sh; BASH_ENV=/tmp/e.sh bash -c 'make test'")).toBe(false);
    // A task file read from standard input under its device name is the here-doc's text.
    expect(flagged("make -f /dev/stdin <<EOF\nall:\n\trm -rf /etc\nEOF")).toBe(true);
    expect(flagged("make -f /dev/stdin <<EOF\nall:\n\tpytest -q\nEOF")).toBe(false);
    expect(flagged("time (make clean && make -j8)")).toBe(false);
    expect(flagged("time (rm -rf /etc)")).toBe(true);
  });
});

describe("Windows shells", () => {
  it("rewrites drive paths, separators, switches and case", () => {
    expect(windowsText("rmdir /s /q D:\\builds\\cache")).toBe("rmdir -s -q /d/builds/cache");
    expect(windowsText("Remove-Item -Force $HOME\\.aws")).toBe("remove-item -force ~/.aws");
  });
  it("judges what cmd /c and powershell -Command run", () => {
    expect(flagged('cmd /c "rmdir /s /q D:\\builds\\cache"')).toBe(true);
    expect(flagged('cmd /c "rd /s /q build"')).toBe(false);
    expect(flagged('pwsh -Command "Get-ChildItem C:\\Users\\dev\\Documents -Recurse | Remove-Item -Force"')).toBe(true);
    expect(flagged('powershell -Command "Get-ChildItem -Path . -Recurse -Include *.tmp | Remove-Item"')).toBe(false);
    expect(flagged("pwsh -c '$files = Get-ChildItem ./build; $files.Count'")).toBe(false);
  });
});

describe("kill of listed process ids", () => {
  it("reads the pids' lister as the pkill it equals", () => {
    expect(flagged("for p in $(pgrep -f celery); do kill -9 $p; done")).toBe(true);
    expect(flagged("pidof -x job.sh | xargs kill -s KILL")).toBe(true);
    expect(flagged("ps -e -o pid= | xargs -n1 kill")).toBe(true);
    expect(flagged("pgrep -f pytest | xargs kill")).toBe(false);
    expect(flagged("ps aux | grep '[n]ode server.js' | awk '{print $2}' | xargs kill")).toBe(false);
    expect(flagged("kill -0 $(pidof sshd)")).toBe(false);
  });
});

describe("a directory only known when the line runs", () => {
  it('reads paths after cd "$DIR", cd - or popd as unknown', () => {
    expect(flagged('cd "$TARGET" && rm -rf build')).toBe(true);
    expect(flagged("popd && rm -rf build")).toBe(true);
    expect(flagged("cd - && rm -rf dist")).toBe(true);
    expect(flagged('cd "$TARGET" && rm -f x.o')).toBe(false);
    expect(flagged('cd "$TARGET" && ls -la')).toBe(false);
    expect(flagged("cd sub && rm -rf build")).toBe(false);
  });
});

describe("deletes of what find and fd list", () => {
  it("reads fd -x/-X as its command run on what fd finds", () => {
    expect(flagged("fd -e log . /var/log -X rm")).toBe(true);
    expect(flagged("fd -H -t f . /var/spool -x sudo rm")).toBe(true);
    expect(flagged("fd -e pyc . src -X rm {}")).toBe(false);
    expect(flagged("fd -e o -x rm")).toBe(false);
  });
  it("reads a listed folder emptied through xargs as a recursive delete", () => {
    expect(flagged("find /var/tmp/cache -name '*.tmp' | xargs rm")).toBe(true);
    expect(flagged("fd -e log . /var/log | xargs rm")).toBe(true);
    expect(flagged("find . -name '*.o' | xargs rm")).toBe(false);
  });
});

describe("shell text in another program's options", () => {
  it("reads an option's value given as the next word, and mvn's exec program with its args", () => {
    expect(flagged(`rsync -a -e 'sh -c "rm -rf /opt/*"' ./src host:/srv`)).toBe(true);
    expect(flagged("rsync -a -e 'ssh -p 2222' ./src host:/srv")).toBe(false);
    expect(flagged("zip -q /tmp/b.zip ./notes.txt -T --unzip-command 'crontab -r;'")).toBe(true);
    expect(flagged("zip -T --unzip-command 'unzip -t' a.zip x")).toBe(false);
    expect(flagged(`mvn exec:exec -Dexec.executable=bash -Dexec.args="-c 'rm -rf ~/.m2'"`)).toBe(true);
    expect(flagged("mvn exec:exec -Dexec.executable=rm -Dexec.args='-rf /opt/tomcat/webapps'")).toBe(true);
    expect(flagged("mvn exec:exec -Dexec.executable=echo -Dexec.args=hi")).toBe(false);
  });
});

describe("configuration DSLs run from the line", () => {
  it("judges the command of chef-apply's execute and puppet's exec", () => {
    expect(flagged(`chef-apply -e 'execute "wipe" do command "rm -rf /var/lib/docker" end'`)).toBe(true);
    expect(flagged(`puppet apply -e 'exec { "wipe": command => "/bin/rm -rf /srv/data" }'`)).toBe(true);
    expect(flagged(`puppet apply -e 'exec { "hi": command => "/bin/echo hi" }'`)).toBe(false);
  });
});

describe("programs built on the line", () => {
  it("judges a program compiled from a file written on the line by that file", () => {
    const c = (body: string) => `cat > w.c <<'EOF'\n#include <stdlib.h>\nint main(){${body}}\nEOF\n`;
    expect(flagged(`${c('return system("rm -rf /var/lib/app");')}cc w.c -o w && ./w`)).toBe(true);
    expect(flagged(`${c('return system("rm -rf /var/lib/app");')}gcc w.c && ./a.out`)).toBe(true);
    expect(flagged(`${c('return system("rm -rf /var/lib/app");')}cc w.c -o w`)).toBe(false);
    expect(flagged(`${c('puts("hi"); return 0;')}cc w.c -o w && ./w`)).toBe(false);
  });
});

describe("scripts written by tee", () => {
  it("judges a script tee wrote on the line when it is run", () => {
    expect(flagged("tee /tmp/run.sh <<< 'crontab -r' && sh /tmp/run.sh")).toBe(true);
    expect(flagged("echo 'crontab -r' | tee /tmp/run.sh && bash /tmp/run.sh")).toBe(true);
    expect(flagged("tee /tmp/run.sh <<< 'echo hi' && sh /tmp/run.sh")).toBe(false);
  });
});

describe("interpreter modules that are programs", () => {
  it("reads python3 -m pip as pip", () => {
    expect(flagged("python3 -m pip uninstall -y pip")).toBe(true);
    expect(flagged("sudo -H python3 -m pip install --break-system-packages numpy")).toBe(true);
    expect(flagged("python3 -m pip install -r requirements.txt")).toBe(false);
    expect(flagged("python3 -m http.server 8000")).toBe(false);
  });
});

describe("here-documents and long input", () => {
  it("runs an unquoted here-doc's command substitutions, not a quoted one's", () => {
    const keysOf = (line: string) => judgeCommand(line, inWorkspace).findings.map((f) => f.key);
    expect(keysOf("cat <<EOF\n$(rm -rf /)\nEOF")).toContain("delete_system_path");
    expect(keysOf("cat <<EOF > notes.txt\nbuilt `rm -rf /etc` at $(date)\nEOF")).toContain("delete_system_path");
    expect(keysOf("cat <<'EOF'\n$(rm -rf /)\nEOF")).toEqual([]);
    expect(keysOf("cat <<EOF > notes.txt\nbuilt at $(date) by $USER\nEOF")).toEqual([]);
  });
  it("judges a 50,000-character function name without failing (a fork bomb is still one)", () => {
    const name = "x".repeat(50_000);
    expect(judgeCommand(`${name}(){ :; }; echo ok`, inWorkspace).dangerous).toBe(false);
    expect(judgeCommand(`${name}(){ ${name} | ${name} & }; ${name}`, inWorkspace).patternKey).toBe("fork_bomb");
  });
});
