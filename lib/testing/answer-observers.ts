import type { Answer } from "@/lib/testing/openapi-check";

/**
 * Where the test helpers that speak HTTP below fetch (raw-http.ts) report
 * each answer they receive, so that the contract check (openapi-setup.ts)
 * sees those answers as well as fetch's.
 */
export type AnswerObserver = (url: string, answer: Answer) => void;

const observers = new Set<AnswerObserver>();

export function observeAnswers(observer: AnswerObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/** `url`: where the request went (its origin says which server answered). */
export function reportAnswer(url: string, answer: Answer): void {
  for (const observer of observers) observer(url, answer);
}
