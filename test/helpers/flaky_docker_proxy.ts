/**
 * A Docker engine proxy on a unix socket in front of the real engine, failing chosen requests: point a client
 * at it with DOCKER_HOST=unix://PATH. Requests a rule matches get the rule's faults in order (an HTTP error
 * answer, or a dropped connection), then pass through; everything else, hijacked exec streams included, is
 * relayed byte for byte.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type Fault = { status: number; message: string } | "reset";

export interface FaultRule {
  /** Which requests: method, the path without the API version prefix, and the JSON body when there is one. */
  match: (req: { method: string; path: string; body: unknown }) => boolean;
  /** Given to the first matching requests, one each. */
  faults: Fault[];
}

export interface FlakyDockerProxy {
  dockerHost: string;
  /** Faults handed out so far, per rule. */
  given: number[];
  close(): Promise<void>;
}

const UPSTREAM = "/var/run/docker.sock";

function unversioned(url: string): string {
  return url.replace(/^\/v\d+\.\d+/, "").split("?")[0]!;
}

export async function startFlakyDockerProxy(rules: FaultRule[]): Promise<FlakyDockerProxy> {
  const dir = mkdtempSync(join(tmpdir(), "hb-flaky-docker-"));
  const socketPath = join(dir, "docker.sock");
  const given = rules.map(() => 0);
  const sockets = new Set<Socket>();

  const relay = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const up = request({ socketPath: UPSTREAM, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on("error", () => res.destroy());
    up.end(body);
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    let parsed: unknown;
    try {
      parsed = body.length ? JSON.parse(body.toString("utf8")) : undefined;
    } catch {
      parsed = undefined;
    }
    const at = { method: req.method ?? "GET", path: unversioned(req.url ?? "/"), body: parsed };
    const i = rules.findIndex((r, k) => given[k]! < r.faults.length && r.match(at));
    if (i >= 0) {
      const fault = rules[i]!.faults[given[i]!++]!;
      if (fault === "reset") {
        req.socket.destroy();
        return;
      }
      res.writeHead(fault.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: fault.message }));
      return;
    }
    // Content-length is recomputed from the body read above.
    delete req.headers["transfer-encoding"];
    req.headers["content-length"] = String(body.length);
    relay(req, res, body);
  });
  // Hijacked streams (exec start/attach): the request goes up as it came, then bytes flow both ways.
  server.on("upgrade", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const up = connect(UPSTREAM);
    sockets.add(up);
    up.on("close", () => sockets.delete(up));
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (let k = 0; k < req.rawHeaders.length; k += 2) lines.push(`${req.rawHeaders[k]}: ${req.rawHeaders[k + 1]}`);
    up.write(lines.join("\r\n") + "\r\n\r\n");
    if (head.length) up.write(head);
    up.pipe(client);
    client.pipe(up);
    const end = () => {
      up.destroy();
      client.destroy();
    };
    up.on("error", end);
    client.on("error", end);
    up.on("close", end);
    client.on("close", end);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    dockerHost: `unix://${socketPath}`,
    given,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
