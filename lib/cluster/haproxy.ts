import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { startProcess, waitUntil, type GroupProcess } from "@/lib/process/process-group";
import {
  BALANCER_PROBLEMS,
  DOT_SEGMENT_PATTERN,
  DOT_SEGMENT_PROBLEM,
} from "@/lib/http/balancer-problems";
import { describedByLink, PROBLEM_CONTENT_TYPE, problemType } from "@/lib/http/problem-type";

/**
 * HAProxy in front of the app instances: round-robin, each instance in the
 * rotation only while GET /api/ready answers 200.
 *
 * HAProxy rather than nginx: open-source nginx checks a server's health
 * only passively (by failing real requests on it); HAProxy asks /api/ready
 * every second and takes an instance out before a shopper meets it. It also
 * mints the per-request id the app logs, and has a Prometheus exporter built
 * in.
 *
 * What it retries: only a request that never reached an instance (the
 * connection failed), and on another instance. A request an instance
 * received and did not answer goes back to the client as 502 or 504, and the
 * client retries it with the same Idempotency-Key: only the client knows the
 * key is safe to repeat, and the key is what makes it so.
 */
export interface Balancer {
  readonly url: string;
  /** The same shop over HTTPS and HTTP/2, when started with `tls`. */
  readonly tlsUrl?: string;
  /** The current primary's PostgreSQL port, when it balances a Patroni cluster (the address, without user or database). */
  readonly postgresAddress?: string;
  /** HAProxy's statistics page; its Prometheus exporter is at /metrics. */
  readonly statsUrl: string;
  readonly process: GroupProcess;
  stop(): Promise<void>;
}

export interface BalancerOptions {
  port: number;
  statsPort: number;
  instances: readonly { name: string; port: number }[];
  /** Also serve the shop over TLS on this port, offering HTTP/2 (ALPN h2, then http/1.1). */
  tls?: { port: number; pemFile: string };
  /** A Patroni cluster's nodes: the balancer then also forwards PostgreSQL connections to whichever leads. */
  postgres?: PostgresRoute;
  workDir: string;
  output: "inherit" | ((chunk: string) => void);
}

export interface PostgresRoute {
  /** Where it listens for PostgreSQL connections. */
  port: number;
  /** Each node, and the port of its leader check (lib/cluster/leader-check.ts). */
  nodes: readonly { name: string; pgPort: number; checkPort: number }[];
}

const READY_TIMEOUT_MS = 15_000;

export async function startHaproxy(options: BalancerOptions): Promise<Balancer> {
  await mkdir(options.workDir, { recursive: true });
  const errorFiles: Record<string, string> = {};
  for (const [status, problem] of Object.entries(BALANCER_PROBLEMS)) {
    errorFiles[status] = path.join(options.workDir, `${status}.http`);
    await writeFile(errorFiles[status], rawProblemResponse(Number(status), problem));
  }
  const dotSegmentFile = path.join(options.workDir, "dot-segment.http");
  await writeFile(
    dotSegmentFile,
    rawProblemResponse(DOT_SEGMENT_PROBLEM.status, {
      ...DOT_SEGMENT_PROBLEM,
      retryAfter: undefined,
    }),
  );
  const configFile = path.join(options.workDir, "haproxy.cfg");
  await writeFile(configFile, haproxyConfig(options, errorFiles, dotSegmentFile));

  const started = startProcess({
    command: "haproxy",
    args: ["-f", configFile, "-db"],
    output: options.output,
    endsWithStarter: true,
  });
  const url = `http://127.0.0.1:${options.port}`;
  const statsUrl = `http://127.0.0.1:${options.statsPort}`;
  await waitUntil(async () => (await fetch(`${statsUrl}/metrics`)).ok, {
    timeoutMs: READY_TIMEOUT_MS,
    process: started,
    describe: () => `HAProxy on port ${options.port} did not start`,
  });
  return {
    url,
    ...(options.tls && { tlsUrl: `https://127.0.0.1:${options.tls.port}` }),
    statsUrl,
    ...(options.postgres && { postgresAddress: `127.0.0.1:${options.postgres.port}` }),
    process: started,
    stop: () => started.stop(),
  };
}

export function haproxyConfig(
  {
    port,
    statsPort,
    instances,
    tls,
    postgres,
  }: Pick<BalancerOptions, "port" | "statsPort" | "instances" | "tls" | "postgres">,
  errorFiles: Record<string, string>,
  dotSegmentFile: string,
): string {
  return `
global
  log stdout format raw local0 info
  maxconn 4096

defaults
  mode http
  log global
  option dontlognull
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-request 10s
  timeout http-keep-alive 10s
  timeout queue 10s
  timeout check 2s
  # Only a request that never reached an instance is tried again (on another one).
  retries 2
  retry-on conn-failure
  option redispatch
${Object.entries(errorFiles)
  .map(([status, file]) => `  errorfile ${status} ${file}`)
  .join("\n")}

frontend shop
  bind 127.0.0.1:${port}
${tls ? tlsBind(tls) : ""}  # The scheme the shopper used, never the one a client claims: the app marks
  # its session cookie Secure over HTTPS.
  http-request set-header X-Forwarded-Proto https if { ssl_fc }
  http-request set-header X-Forwarded-Proto http if !{ ssl_fc }
  # One id per request, whatever the client sent: the app logs it with every
  # line of the attempt, and so does this line.
  unique-id-format %[uuid()]
  http-request set-header X-Request-Id %[unique-id]
  http-after-response set-header X-Request-Id %[unique-id]
  # Appends the client's address; the app trusts this one hop (TRUSTED_PROXIES=1).
  option forwardfor
  # The block below checks the path as sent; Next.js resolves dot segments
  # (/x/../api/metrics is /api/metrics to it), so a path with one is refused first.
  http-request deny deny_status 400 errorfile ${dotSegmentFile} if { path_reg -i ${DOT_SEGMENT_PATTERN} }
  http-request deny deny_status 404 if { path_beg /api/metrics }
  # Compression happens here, once, rather than in each instance (next.config.ts
  # turns Next's off): pages, styles and scripts. The API's JSON answers are
  # mostly under 1 KiB, where gzip costs more CPU than the bytes it saves.
  compression algo gzip
  compression type text/html text/css text/javascript application/javascript image/svg+xml
  log-format '{"time":"%trg","level":"info","event":"balancer.request","requestId":"%ID","client":"%ci","instance":"%s","method":"%HM","path":"%HPO","status":%ST,"ms":%Ta,"retries":%rc,"termination":"%ts"}'
  default_backend instances

backend instances
  balance roundrobin
  option httpchk GET /api/ready
  http-check expect status 200
  default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 2
${instances.map((instance) => `  server ${instance.name} 127.0.0.1:${instance.port} check`).join("\n")}

${postgres ? postgresSection(postgres) : ""}
frontend stats
  bind 127.0.0.1:${statsPort}
  no log
  http-request use-service prometheus-exporter if { path /metrics }
  stats enable
  stats uri /
  stats refresh 2s
`.trimStart();
}

// A browser speaks HTTP/2 only over TLS; the instances behind still get HTTP/1.1.
function tlsBind(tls: { port: number; pemFile: string }): string {
  return `  bind 127.0.0.1:${tls.port} ssl crt ${tls.pemFile} alpn h2,http/1.1\n`;
}

/**
 * PostgreSQL connections go to the node that holds the leader key in etcd
 * and says it is the primary (lib/cluster/leader-check.ts: not Patroni's
 * /primary alone, which a resumed old primary can answer 200 for a few
 * seconds), asked every half second. A node that stops answering is out
 * after two checks, and its connections are cut (on-marked-down
 * shutdown-sessions): a client of a frozen primary gets an error at once,
 * never a commit on a node that no longer leads. Long idle timeouts:
 * PgBouncer keeps its server connections.
 */
function postgresSection(postgres: PostgresRoute): string {
  return `
listen postgres
  mode tcp
  bind 127.0.0.1:${postgres.port}
  no log
  timeout client 30m
  timeout server 30m
  option httpchk GET /leader
  http-check expect status 200
  default-server inter 500ms fastinter 500ms downinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
${postgres.nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.checkPort}`).join("\n")}
`;
}

function rawProblemResponse(
  status: number,
  problem: { slug: string; title: string; detail: string; retryAfter: number | undefined },
): string {
  // Keys in canonical (sorted) order, as the app writes its problems.
  const body = JSON.stringify({
    detail: problem.detail,
    status,
    title: problem.title,
    type: problemType(problem.slug),
  });
  const reason = {
    400: "Bad Request",
    404: "Not Found",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
  }[status];
  return [
    `HTTP/1.1 ${status} ${reason}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Link: ${describedByLink(problemType(problem.slug))}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Cache-Control: no-store",
    // HAProxy closes the client's connection after an answer of its own; a
    // client that took it for a keep-alive one would send its next request
    // into a closed socket.
    "Connection: close",
    ...(problem.retryAfter !== undefined ? [`Retry-After: ${problem.retryAfter}`] : []),
    "",
    body,
  ].join("\r\n");
}
