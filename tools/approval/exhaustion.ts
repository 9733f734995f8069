/**
 * Resource exhaustion that is not a loop (patterns.ts ENDLESS_LOAD) or inline code (judge.ts memoryBomb):
 * programs that hold an endless stream in memory (`tail /dev/zero`, `sort /dev/urandom`), load generators aimed at
 * another host with huge counts, durations or concurrency (a denial of service of someone's server), floods, and
 * thousands of replicas or instances requested at once. Small runs against this machine pass (`ab -n 100 -c 5
 * http://127.0.0.1:8000/`, `hey -n 200 -c 10 http://localhost:8080/`).
 */
import type { JudgedArg, JudgedRedirect, Producer } from "./judge.js";

const LOCAL = /^(?:localhost|[\w.-]+\.localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[?::1\]?|host\.docker\.internal|[\w-]+)$/i; // a bare name (`web`, `api`) is a service of a local compose network
const ENDLESS = /^\/dev\/(?:zero|u?random)$/;

/** Seconds in a duration (`24h`, `90m`, `3600`, `1H`, `2d`). */
function seconds(v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min|h|hr|d)?$/i.exec(v.trim());
  if (!m) return NaN;
  const unit = (m[2] ?? "s").toLowerCase();
  return (
    Number(m[1]) *
    (unit === "ms"
      ? 0.001
      : unit.startsWith("m") && unit !== "ms"
        ? 60
        : unit.startsWith("h")
          ? 3600
          : unit === "d"
            ? 86400
            : 1)
  );
}

function hostOf(u: string): string | null {
  const m = /^(?:[a-z][\w+.-]*:\/\/)(?:[^@/\s]*@)?(\[[^\]]+\]|[^:/\s?#]+)/i.exec(
    u.replace(/^["']|["']$/g, "").replace(/^(?:GET|POST|PUT|DELETE|PATCH|HEAD)\s+/i, ""),
  );
  return m ? m[1]! : null;
}

function value(t: string[], ...opts: string[]): string | undefined {
  for (let k = 0; k < t.length; k++) {
    for (const o of opts) {
      if (t[k] === o) return t[k + 1];
      if (t[k]!.startsWith(o + "=")) return t[k]!.slice(o.length + 1);
      if (/^-[a-zA-Z]$/.test(o) && t[k]!.startsWith(o) && t[k]!.length > 2 && /^\d/.test(t[k]!.slice(2)))
        return t[k]!.slice(2);
    }
  }
  return undefined;
}

const LOAD_TOOLS =
  /^(?:ab|hey|wrk|wrk2|siege|bombardier|oha|h2load|autocannon|vegeta|k6|locust|artillery|loadtest|plow|ali|gobench|httperf|slowhttptest|goldeneye|jmeter)$/;

export function exhaustionEffects(
  name: string,
  args: JudgedArg[],
  redirects: JudgedRedirect[],
  producer: Producer | null | undefined,
): string[] {
  const t = args.map((a) => a.text);
  // Programs that keep their whole input (or its last line, which never ends) in memory, given an endless stream.
  if (/^(?:tail|tac|sort|shuf|rev|jq)$/.test(name)) {
    const endlessIn =
      t.some((x) => ENDLESS.test(x)) ||
      redirects.some((r) => r.op === "<" && ENDLESS.test(r.target)) ||
      (producer != null &&
        (producer.name === "yes" ||
          (/^(?:cat|pv)$/.test(producer.name) && producer.args.some((a) => ENDLESS.test(a.text)))));
    if (endlessIn) return ["resource_exhaustion"];
  }
  if (LOAD_TOOLS.test(name)) {
    const targets = [
      ...t.filter((x) => /^[a-z]+:\/\//i.test(x)),
      ...t.flatMap((x) => (/^--(?:host|url|target)=/.test(x) ? [x.replace(/^[^=]*=/, "")] : [])),
      ...t.filter((x, k) => /^(?:--host|-H|--url|--target|-host)$/.test(t[k - 1] ?? "") && /^[a-z]+:\/\//i.test(x)),
    ];
    if (name === "vegeta" && producer)
      for (const a of producer.args)
        if (/^(?:GET|POST|PUT|DELETE|PATCH|HEAD)\s+\S/i.test(a.text) || /^https?:\/\//.test(a.text))
          targets.push(a.text);
    const remote = targets.some((u) => {
      const h = hostOf(u);
      return h !== null && !LOCAL.test(h);
    });
    // No target in sight (a k6/locust/artillery script names it): only enormous runs are flagged.
    if (!remote && targets.length === 0 && /^(?:k6|locust|artillery|jmeter|loadtest)$/.test(name)) {
      const users = Number(value(t, "--vus", "-u", "--users", "-c", "--count") ?? NaN);
      const dur = seconds(value(t, "--duration", "-d", "--run-time", "-t") ?? "");
      if (users >= 1000 || dur >= 6 * 3600) return ["resource_exhaustion"];
    }
    if (!remote) return [];
    const n = Number(
      value(t, "-n", "--requests", "--number", "-r", "--reps", "--amount", "-a", "--iterations", "-i") ?? NaN,
    );
    const c = Number(
      value(t, "-c", "--concurrency", "--connections", "--clients", "-u", "--users", "--vus", "--workers") ?? NaN,
    );
    // -t is a time limit for ab and siege, a thread count for wrk, hey and h2load.
    const d = seconds(
      value(
        t,
        ...(name === "ab" || name === "siege" ? ["-t"] : []),
        "-z",
        "-d",
        "--duration",
        "--time",
        "-T",
        "--timelimit",
        "--run-time",
      ) ?? "",
    );
    const rate = Number(value(t, "-rate", "--rate", "-q", "--qps", "-R") ?? NaN);
    if (
      n >= 100_000 ||
      c >= 500 ||
      d >= 3600 ||
      rate >= 1000 ||
      (name === "siege" &&
        t.some((x) => x === "-b" || x === "--benchmark") &&
        !Number.isFinite(d) &&
        !Number.isFinite(n))
    )
      return ["resource_exhaustion"];
    return [];
  }
  // Floods: hping3 --flood / -i u1, ping -f towards another host.
  if (name === "hping3" || name === "hping" || name === "nping") {
    if (
      t.some((x) => x === "--flood" || x === "--faster") ||
      /(?:^|\s)-i\s+u\d{1,3}\b|--rate\s+\d{4,}/.test(t.join(" "))
    )
      return ["resource_exhaustion"];
  }
  if ((name === "ping" || name === "ping6") && t.some((x) => /^-[a-zA-Z]*f/.test(x))) {
    const host = t.filter((x, k) => !x.startsWith("-") && !/^-[cisWtwlQpIM]$/.test(t[k - 1] ?? "")).pop();
    if (host && !LOCAL.test(host)) return ["resource_exhaustion"];
  }
  // Thousands of replicas, tasks or instances at once.
  const huge = (v: string | undefined, min = 1000) => v !== undefined && /^\d+$/.test(v) && Number(v) >= min;
  if (
    /^(?:kubectl|oc|k|kubecolor)$/.test(name) &&
    /^(?:scale|create|run|autoscale)$/.test(t.find((x) => !x.startsWith("-")) ?? "") &&
    (huge(value(t, "--replicas")) || huge(value(t, "--min")))
  )
    return ["resource_exhaustion"];
  if (/^(?:docker|podman)(?:-compose)?$/.test(name) || name === "compose") {
    if (
      t.some((x, k) => (x === "--scale" || x === "--replicas") && /=(\d{4,})$|^\d{4,}$/.test(t[k + 1] ?? "")) ||
      t.some((x) => /^--(?:scale=\S+|replicas)=\d{4,}$/.test(x))
    )
      return ["resource_exhaustion"];
    if (t.includes("service") && t.includes("scale") && t.some((x) => /^[\w.-]+=\d{4,}$/.test(x)))
      return ["resource_exhaustion"];
  }
  if (
    name === "helm" &&
    t.some((x, k) => (t[k - 1] === "--set" || x.startsWith("--set=")) && /(?:replicaCount|replicas)=(\d{4,})/i.test(x))
  )
    return ["resource_exhaustion"];
  if (
    name === "aws" &&
    t.includes("autoscaling") &&
    (huge(value(t, "--desired-capacity"), 500) ||
      (huge(value(t, "--max-size"), 500) && huge(value(t, "--min-size"), 500)))
  )
    return ["resource_exhaustion"];
  if (name === "aws" && t.includes("run-instances") && huge(value(t, "--count", "--min-count"), 100))
    return ["resource_exhaustion"];
  if (name === "gcloud" && t.includes("resize") && huge(value(t, "--size", "--num-nodes"), 500))
    return ["resource_exhaustion"];
  if (name === "az" && t.includes("scale") && huge(value(t, "--new-capacity", "--node-count"), 500))
    return ["resource_exhaustion"];
  return [];
}
