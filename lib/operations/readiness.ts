/**
 * Whether this instance can serve a checkout now: each dependency asked once,
 * all at the same time, each within a deadline, so a hung dependency makes
 * the answer "not ready" rather than making the balancer's check time out.
 */
export interface DependencyCheck {
  name: string;
  /** Resolves when the dependency answered; throws (or never settles) when it did not. */
  probe(timeoutMs: number): Promise<unknown>;
}

export interface CheckResult {
  ok: boolean;
  ms: number;
  /** Why it is not ok, in words an operator can act on. */
  reason?: string;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
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
