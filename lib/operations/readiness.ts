/**
 * Whether this instance can serve at all: each dependency it cannot serve
 * without asked once, all at the same time, each within a deadline, so a
 * hung dependency makes the answer "not ready" rather than making the
 * balancer's check time out.
 *
 * The answer is shared: one probe serves every caller for a short while
 * (sharedReadiness), so no number of callers, with or without credentials,
 * can make an instance ask its dependencies more than about once a TTL.
 */
export interface DependencyCheck {
  name: string;
  /** Resolves when the dependency answered; throws (or never settles) when it did not. */
  probe(timeoutMs: number): Promise<unknown>;
}

export interface CheckResult {
  ok: boolean;
  ms: number;
  /** Why it is not ok, in words an operator can act on. For the log: it may name hosts and ports. */
  reason?: string;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

/** One probe's result, as every caller until the next probe gets it. */
export interface SharedReadinessResult extends Readiness {
  /** When the probe that produced it finished: the same for every caller it served. */
  checkedAt: Date;
}

export async function checkReadiness(
  dependencies: readonly DependencyCheck[],
  timeoutMs: number,
): Promise<Readiness> {
  const results = await Promise.all(
    dependencies.map(
      async (dependency) => [dependency.name, await runCheck(dependency, timeoutMs)] as const,
    ),
  );
  return { ready: results.every(([, result]) => result.ok), checks: Object.fromEntries(results) };
}

export interface SharedReadinessOptions {
  dependencies: readonly DependencyCheck[];
  timeoutMs: number;
  /** How long one probe's result answers every caller. */
  ttlMs: number;
  /** Told of each probe once, when it finishes: the metric and the log line, not once per caller. */
  onProbe?(result: SharedReadinessResult): void;
  now?: () => number;
}

/**
 * Readiness from one probe at a time: a result younger than the TTL answers
 * at once; otherwise the first caller starts a probe and every caller that
 * arrives while it runs waits for that same probe (single flight). A
 * failed probe is shared too, so a dead database is asked once a TTL, not
 * once a caller.
 */
export function sharedReadiness(
  options: SharedReadinessOptions,
): () => Promise<SharedReadinessResult> {
  const now = options.now ?? Date.now;
  let latest: { result: SharedReadinessResult; at: number } | undefined;
  let running: Promise<SharedReadinessResult> | undefined;

  const probe = async (): Promise<SharedReadinessResult> => {
    try {
      const readiness = await checkReadiness(options.dependencies, options.timeoutMs);
      const at = now();
      const result = { ...readiness, checkedAt: new Date(at) };
      latest = { result, at };
      options.onProbe?.(result);
      return result;
    } finally {
      running = undefined;
    }
  };

  return () => {
    if (latest && now() - latest.at < options.ttlMs) return Promise.resolve(latest.result);
    running ??= probe();
    return running;
  };
}

async function runCheck(dependency: DependencyCheck, timeoutMs: number): Promise<CheckResult> {
  const startedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(timeoutMs)), timeoutMs);
  });
  try {
    await Promise.race([dependency.probe(timeoutMs), deadline]);
    return { ok: true, ms: elapsed(startedAt) };
  } catch (error) {
    return { ok: false, ms: elapsed(startedAt), reason: reasonOf(error) };
  } finally {
    clearTimeout(timer);
  }
}

class DeadlineExceeded extends Error {
  constructor(timeoutMs: number) {
    super(`did not answer within ${timeoutMs} ms`);
  }
}

function elapsed(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}

// The error's code and first line: enough to act on (ECONNREFUSED, a
// timeout, an authentication failure), without a stack or a connection string.
function reasonOf(error: unknown): string {
  if (error instanceof DeadlineExceeded) return error.message;
  const code =
    typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
      ? error.code
      : undefined;
  const message = (error instanceof Error ? error.message : String(error))
    .split("\n", 1)
    .join("")
    .slice(0, 200);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
