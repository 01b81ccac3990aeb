import { setTimeout as delay } from "node:timers/promises";
import type { Cluster } from "@/lib/cluster/cluster";
import { parsePrometheusText } from "@/lib/observability/prometheus-text";

/**
 * Who leads, moment by moment, through a failover: read every 100 ms from
 * the three places that could disagree: etcd's leader key, each node's own
 * Patroni, and the balancer's view of which PostgreSQL server is up.
 */
export interface FailoverMoment {
  /** ms since the epoch. */
  at: number;
  /** The member etcd's leader key names ("none" while nobody holds it). */
  dcsLeader: string;
  /** Each node's role as its Patroni reports it ("no answer" while frozen or dead). */
  roles: Record<string, string>;
  /** The nodes the balancer counts up. */
  countedUp: string[];
}

export interface FailoverWatch {
  stop(): Promise<FailoverMoment[]>;
}

export function watchFailover(cluster: Cluster, everyMs = 100): FailoverWatch {
  const replicated = cluster.replicated;
  if (!replicated) throw new Error("watchFailover needs a replicated cluster");
  const moments: FailoverMoment[] = [];
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const at = Date.now();
      const [dcsLeader, roles, countedUp] = await Promise.all([
        replicated.leaderInDcs().then(
          (name) => name ?? "none",
          () => "no answer",
        ),
        Promise.all(
          replicated.nodes.map(
            async (node) => [node.name, await patroniRole(node.restUrl)] as const,
          ),
        ).then((entries) => Object.fromEntries(entries)),
        nodesCountedUp(cluster),
      ]);
      moments.push({ at, dcsLeader, roles, countedUp });
      await delay(Math.max(0, everyMs - (Date.now() - at)));
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      return moments;
    },
  };
}

/** The moments at which something changed, one line each, for a failure message. */
export function describeMoments(moments: readonly FailoverMoment[], since: number): string {
  const lines: string[] = [];
  let last = "";
  for (const moment of moments) {
    const line = `leader key ${moment.dcsLeader}; ${Object.entries(moment.roles)
      .map(([name, role]) => `${name} ${role}`)
      .join(", ")}; balancer up: ${moment.countedUp.join(" ") || "none"}`;
    if (line !== last) lines.push(`${((moment.at - since) / 1000).toFixed(1)} s: ${line}`);
    last = line;
  }
  return lines.join("\n");
}

async function patroniRole(restUrl: string): Promise<string> {
  try {
    const answer = await fetch(`${restUrl}/patroni`, { signal: AbortSignal.timeout(300) });
    const body = (await answer.json()) as { role?: string; state?: string };
    return `${body.role ?? "?"}/${body.state ?? "?"}`;
  } catch {
    return "no answer";
  }
}

async function nodesCountedUp(cluster: Cluster): Promise<string[]> {
  try {
    const text = await (await fetch(`${cluster.balancer.statsUrl}/metrics`)).text();
    return parsePrometheusText(text)
      .filter(
        ({ name, labels, value }) =>
          name === "haproxy_server_status" &&
          labels.proxy === "postgres" &&
          labels.state === "UP" &&
          value === 1,
      )
      .map(({ labels }) => labels.server!)
      .sort();
  } catch {
    return ["no answer"];
  }
}
