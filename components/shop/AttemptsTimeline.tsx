"use client";

import Link from "next/link";
import { useEffect, useRef } from "react";
import { summarize, type AttemptLog, type LoggedAttempt } from "@/lib/client/attempt-log";
import { RETRY_POLICY } from "@/lib/client/retry-policy";
import { AlertIcon, CheckIcon, KeyIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import { keyPagePath } from "@/components/ledger/format";
import { describeStatus, describeWait, formatDuration } from "./attempt-labels";

interface AttemptsTimelineProps {
  log: AttemptLog;
  /** The intent's one key; null with `keyless` for the lab's broken strategy. */
  idempotencyKey: string | null;
  keyless: boolean;
  /** A payment is still running (attempts may follow), so "no order" is only "no order yet". */
  running: boolean;
  /**
   * Whether the cart column may scroll to the newest attempt. Not while a
   * run's first attempt is alone: scrolling then would move Pay from under
   * the pointer that may be about to click it a second time.
   */
  followNewest: boolean;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * Every attempt of the intent under its one Idempotency-Key, so a person can
 * see "3 attempts, 1 key, 1 order": what each attempt got back, how long it
 * took, its X-Request-Id (one per attempt), and which answers were replays.
 */
export function AttemptsTimeline({
  log,
  idempotencyKey,
  keyless,
  running,
  followNewest,
}: AttemptsTimelineProps) {
  const listRef = useRef<HTMLOListElement>(null);
  // On wide screens the cart column scrolls on its own: keep the newest
  // attempt in view there, without moving the page the person is looking at.
  useEffect(() => {
    if (!followNewest) return;
    const column = listRef.current?.closest<HTMLElement>("[data-scrolls-itself]");
    if (column && column.scrollHeight > column.clientHeight) column.scrollTop = column.scrollHeight;
  }, [log.length, followNewest]);

  if (log.length === 0) return null;
  const { attempts, orders } = summarize(log);
  const summary = keyless
    ? `${plural(attempts, "attempt")}, no key: each attempt that reached the server was a new order`
    : `${plural(attempts, "attempt")}, 1 key, ${orders > 0 ? plural(orders, "order") : running ? "no order yet" : "no order"}`;

  return (
    <section
      aria-labelledby="attempts-heading"
      data-testid="attempts-timeline"
      className="rounded-xl border border-sand bg-cream p-4"
    >
      <div className="flex flex-wrap items-baseline justify-between gap-x-3 gap-y-1">
        <h3 id="attempts-heading" className="text-sm font-semibold text-espresso">
          Attempts
        </h3>
        <p
          className={`text-xs font-medium ${keyless ? "text-berry" : "text-mocha"}`}
          data-testid="attempts-summary"
        >
          {summary}
        </p>
      </div>

      {keyless ? (
        <p
          className="mt-2 flex items-center gap-1.5 rounded-lg bg-berry-soft px-2.5 py-1.5 text-xs font-medium text-berry"
          data-testid="timeline-key"
        >
          <AlertIcon width={14} height={14} className="shrink-0" /> No Idempotency-Key sent (broken
          strategy)
        </p>
      ) : (
        <p className="mt-2 text-xs text-mocha">
          <span className="flex flex-wrap items-center gap-x-1.5 font-medium">
            <KeyIcon width={14} height={14} /> Idempotency-Key, sent with every attempt
            {idempotencyKey && (
              <Link
                href={keyPagePath(idempotencyKey)}
                className="font-semibold text-clay underline underline-offset-2 hover:text-espresso"
                data-testid="inspect-key"
              >
                Inspect<span className="sr-only"> this key</span>
              </Link>
            )}
          </span>
          <code
            className="mt-0.5 block break-all font-mono text-espresso"
            data-testid="timeline-key"
          >
            {idempotencyKey}
          </code>
        </p>
      )}

      <ol
        ref={listRef}
        className="mt-3 space-y-2.5 border-l-2 border-sand pl-4"
        aria-label="Attempts, oldest first"
      >
        {log.map((entry) => (
          <AttemptRow key={entry.seq} entry={entry} keyless={keyless} />
        ))}
      </ol>
    </section>
  );
}

function AttemptRow({ entry, keyless }: { entry: LoggedAttempt; keyless: boolean }) {
  const look = appearance(entry);
  const Icon = look.icon;
  return (
    <li
      className="relative"
      data-testid="attempt"
      data-state={entry.state}
      data-status={entry.status ?? entry.failure ?? ""}
      data-replayed={entry.replayed}
    >
      <span
        aria-hidden="true"
        className={`absolute -left-[1.6rem] top-0.5 grid size-5 place-items-center rounded-full ring-4 ring-cream ${look.dot}`}
      >
        <Icon width={12} height={12} strokeWidth={2.5} />
      </span>
      <div className="flex items-baseline justify-between gap-2 text-sm">
        <p className="min-w-0 text-espresso">
          <span className="font-semibold">#{entry.seq}</span>{" "}
          <span data-testid="attempt-outcome">{look.label}</span>
          {entry.replayed && (
            <span className="ml-1.5 inline-block rounded-full bg-clay-soft px-1.5 py-px align-middle text-[0.6875rem] font-semibold uppercase tracking-wide text-clay">
              Replay
            </span>
          )}
        </p>
        <span className="shrink-0 text-xs tabular-nums text-mocha" data-testid="attempt-duration">
          {entry.durationMs === null
            ? entry.state === "sending"
              ? "…"
              : "–"
            : formatDuration(entry.durationMs)}
        </span>
      </div>
      {/* One line of detail a row, the id cut to fit: a run's rows stay on one screen. */}
      <p className="mt-0.5 truncate text-xs text-mocha">
        {entry.requestId ? (
          <>
            X-Request-Id{" "}
            <code
              className="font-mono text-espresso"
              title={entry.requestId}
              data-testid="attempt-request-id"
            >
              {entry.requestId}
            </code>
          </>
        ) : entry.state === "sending" ? (
          "Waiting for an answer"
        ) : (
          "No X-Request-Id: no answer came back"
        )}
      </p>
      {entry.waited && (
        <p className="mt-0.5 text-xs font-medium text-sage" data-testid="attempt-waited">
          {describeWait(entry)}
        </p>
      )}
      {entry.retryInMs !== null && (
        <p className="mt-0.5 text-xs font-medium text-clay">
          Retry in {(entry.retryInMs / 1000).toFixed(1)} s, {keyless ? "still no key" : "same key"}
        </p>
      )}
    </li>
  );
}

function appearance(entry: LoggedAttempt): { label: string; dot: string; icon: typeof CheckIcon } {
  if (entry.state === "sending")
    return { label: "Sending…", dot: "bg-oat text-espresso", icon: Spinner };
  if (entry.state === "interrupted") {
    return {
      label: "Interrupted: the page reloaded before an answer",
      dot: "bg-latte text-espresso",
      icon: RepeatIcon,
    };
  }
  if (entry.failure === "timeout") {
    return {
      label: `Timed out after ${RETRY_POLICY.attemptTimeoutMs / 1000} s`,
      dot: "bg-honey text-roast",
      icon: AlertIcon,
    };
  }
  if (entry.failure === "network")
    return { label: "Network error: connection lost", dot: "bg-honey text-roast", icon: AlertIcon };
  const status = entry.status ?? 0;
  const label = describeStatus(entry);
  if (status >= 200 && status < 300) {
    return entry.replayed
      ? { label, dot: "bg-clay text-white", icon: RepeatIcon }
      : { label, dot: "bg-sage text-white", icon: CheckIcon };
  }
  if (entry.retryInMs !== null || status === 409 || status === 429 || status >= 500)
    return { label, dot: "bg-honey text-roast", icon: AlertIcon };
  return { label, dot: "bg-berry text-white", icon: AlertIcon };
}
