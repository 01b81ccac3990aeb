/**
 * The apps whose answers the contract check judges (openapi-setup.ts): each
 * app a test starts is named here by whatever starts it (startAppServer,
 * the cluster tests for the balancer and the instances), so the check
 * needs to know nothing about how apps are started, and the starters
 * nothing about the check.
 */
export type JudgedAppListener = (origin: string) => void;

const origins = new Set<string>();
const listeners = new Set<JudgedAppListener>();

/** From now on, answers from this app's origin are judged by the document it serves. */
export function judgeAnswersOf(...baseUrls: string[]): void {
  for (const baseUrl of baseUrls) {
    const origin = new URL(baseUrl).origin;
    if (origins.has(origin)) continue;
    origins.add(origin);
    for (const listener of listeners) listener(origin);
  }
}

export function isJudged(url: string): boolean {
  return origins.has(new URL(url).origin);
}

/** Told of each app as it is named (so the check can read its document while it still serves). */
export function onJudgedApp(listener: JudgedAppListener): void {
  listeners.add(listener);
}
