import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Which node the balancer may send PostgreSQL connections to: the one the
 * DCS (etcd) names leader, if its Patroni also says it is the primary.
 *
 * Patroni's /primary alone is not enough. A primary paused past its leader
 * key's expiry (a stalled VM; SIGSTOP in the tests), once resumed, can answer
 * 200 and even name a new synchronous standby among the nodes still
 * following it, for a few seconds before it learns that another node leads
 * (Patroni 3.0 without a watchdog): seen in the failover tests, a durable
 * commit acknowledged on such a node. The leader key in etcd is the one
 * truth both sides agree on, so the balancer routes by it.
 *
 * One small HTTP server per node, since HAProxy checks each server on a
 * port of its own (`check port`): 200 for the leader, 503 for the others.
 */
export interface LeaderCheck {
  /** The port that answers for each node, by node name. */
  readonly ports: ReadonlyMap<string, number>;
  stop(): Promise<void>;
}

export interface CheckedNode {
  name: string;
  /** Patroni's REST API. */
  restUrl: string;
}

/** Each check asks both, and waits this long for either before it answers 503. */
const ASK_TIMEOUT_MS = 400;

export async function startLeaderCheck(
  nodes: readonly CheckedNode[],
  leaderInDcs: () => Promise<string | undefined>,
): Promise<LeaderCheck> {
  const servers: Server[] = [];
  const ports = new Map<string, number>();
  for (const node of nodes) {
    const server = createServer((_request, response) => {
      void leads(node, leaderInDcs).then((yes) => {
        response.writeHead(yes ? 200 : 503, { "Content-Type": "text/plain" });
        response.end(yes ? "leader\n" : "not the leader\n");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    ports.set(node.name, (server.address() as AddressInfo).port);
  }
  return {
    ports,
    stop: async () => {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

async function leads(
  node: CheckedNode,
  leaderInDcs: () => Promise<string | undefined>,
): Promise<boolean> {
  try {
    const [leader, primary] = await Promise.all([
      leaderInDcs(),
      fetch(`${node.restUrl}/primary`, { signal: AbortSignal.timeout(ASK_TIMEOUT_MS) }),
    ]);
    return leader === node.name && primary.status === 200;
  } catch {
    return false;
  }
}

/**
 * The leader key's value in etcd (the leading member's name), read through
 * etcd's v2 API, where Patroni keeps it; undefined while no node holds it.
 */
export async function readLeaderKey(etcdUrl: string, key: string): Promise<string | undefined> {
  const response = await fetch(`${etcdUrl}/v2/keys${key}`, {
    signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
  });
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`etcd answered ${response.status}`);
  const { node } = (await response.json()) as { node?: { value?: string } };
  return node?.value;
}
