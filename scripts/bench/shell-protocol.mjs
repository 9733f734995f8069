#!/usr/bin/env node
/**
 * CPU per command of the persistent shell's protocol on its own (no sandbox): S bash shells booted with
 * bootScript() are each fed N `echo x` commands through hb_run, S at once; CPU of this process plus each bash
 * and its waited-for subshells, per command. Beside it, the same S-at-once count of bare bash loops
 * (`( echo x ) </dev/null & wait $!`, one fork per command) and of bash loops spawning /bin/true: how much the
 * cost of a fork grows when several run at once on this machine. Needs a build (npm run build).
 *   node scripts/bench/shell-protocol.mjs [--shells 1] [--commands 500]
 */
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { procCpu } from "./proc_cpu.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: { shells: { type: "string", default: "1" }, commands: { type: "string", default: "500" } },
});
const shells = Number(values.shells);
const n = Number(values.commands);
const { bootScript } = await import(
  pathToFileURL(join(HERE, "..", "..", "dist", "tools", "environments", "shell_session.js")).href
);

async function protocolShell() {
  const p = spawn("bash", [], { stdio: ["pipe", "pipe", "pipe"] });
  p.stdin.write(bootScript("__M__", "/bin/bash", false));
  let buf = "";
  let waiter;
  p.stdout.setEncoding("utf8");
  p.stdout.on("data", (d) => {
    buf += d;
    if (waiter && buf.includes(waiter.tag)) {
      const w = waiter;
      waiter = undefined;
      buf = "";
      w.resolve();
    }
  });
  p.stderr.resume();
  await new Promise((resolve) => (waiter = { tag: "READY", resolve }));
  const run = (i) =>
    new Promise((resolve) => {
      waiter = { tag: `__M__ ${i} E`, resolve };
      p.stdin.write(`hb_run ${i} '/tmp' 'echo x'\n`);
    });
  for (let i = 0; i < 20; i++) await run(i);
  const c0 = procCpu(p.pid);
  for (let i = 20; i < 20 + n; i++) await run(i);
  const c1 = procCpu(p.pid);
  p.stdin.end();
  return c1.selfMs + c1.childrenMs - c0.selfMs - c0.childrenMs;
}

/** S bash loops at once, each running `body` N times; CPU per iteration from each bash's `times`. */
function loops(body) {
  const script = `for ((i = 0; i < ${n}; i++)); do ${body}; done; times`;
  const r = spawnSync(
    "bash",
    ["-c", Array.from({ length: shells }, () => `bash -c '${script}' &`).join(" ") + " wait; times"],
    { encoding: "utf8" },
  );
  const lines = r.stdout.trim().split("\n");
  const seconds = [
    ...lines
      .slice(-2)
      .join(" ")
      .matchAll(/(\d+)m([\d.]+)s/g),
  ].reduce((a, m) => a + Number(m[1]) * 60 + Number(m[2]), 0);
  return (seconds * 1000) / (n * shells);
}

const u0 = process.cpuUsage();
const bashMs = (await Promise.all(Array.from({ length: shells }, protocolShell))).reduce((a, b) => a + b, 0);
const u1 = process.cpuUsage(u0);
const nodeMs = (u1.user + u1.system) / 1000;
const per = (ms) => (ms / (n * shells)).toFixed(3);
console.log(`${shells} shell(s) at once, ${n} 'echo x' each`);
console.log(
  `  protocol (bootScript, hb_run): ${per(nodeMs + bashMs)} ms CPU per command (node ${per(nodeMs)}, bash ${per(bashMs)})`,
);
console.log(
  `  bare fork loop:                ${loops("( echo x >/dev/null ) </dev/null & wait $!").toFixed(3)} ms CPU per command`,
);
console.log(`  /bin/true spawn loop:          ${loops("/bin/true").toFixed(3)} ms CPU per spawn`);
