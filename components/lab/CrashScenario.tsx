"use client";

import { summarizeRetries, type CrashAttempt } from "@/lib/client/lab-crash";
import { explainCrash } from "@/lib/lab/explain";
import { crashButtonLabel, type CrashProgress } from "@/lib/lab/race";
import { LAB_STRATEGIES, LAB_STRATEGY_INFO, type LabStrategy } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon, Spinner } from "@/components/ui/icons";
import type { CrashRun } from "./useStrategyLab";

interface CrashScenarioProps {
  crashes: (strategy: LabStrategy) => CrashRun | undefined;
  crashing: Partial<Record<LabStrategy, CrashAttempt[]>>;
  /** "Crash every strategy" while it runs: how many of its crash runs are done. */
  batch: CrashProgress | null;
  ready: boolean;
  enabled: (strategy: LabStrategy) => boolean;
  onCrash: (strategy: LabStrategy) => void;
  onCrashAll: () => void;
  /** The copied designs' key expiry and OncePay's lease, as this server runs them. */
  keyExpirySeconds: number;
  leaseSeconds: number;
}

/**
 * The crash scenario, for every strategy: the server crashes right after
 * the charge, before the result is recorded; the client retries with the
 * same key at once, and on until the key's in-flight expiry has passed.
 */
export function CrashScenario({
  crashes,
  crashing,
  batch,
  ready,
  enabled,
  onCrash,
  onCrashAll,
  keyExpirySeconds,
  leaseSeconds,
}: CrashScenarioProps) {
  const idle = LAB_STRATEGIES.filter((strategy) => enabled(strategy) && !crashing[strategy]);
  return (
    <section aria-labelledby="crash-heading" className="mt-12">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div className="max-w-3xl">
          <h2
            id="crash-heading"
            className="font-display text-2xl font-semibold text-espresso sm:text-3xl"
          >
            Crash after the charge
          </h2>
          <p className="mt-2 text-sm leading-relaxed text-mocha">
            The server charges the card and then dies before it records the result. The client
            retries with the same key at once, and every second after that, until it gets a final
            answer. Here the copied designs keep a key for{" "}
            <strong className="font-semibold text-espresso">{keyExpirySeconds} s</strong> (the
            guides use 24 h: a crashed key would answer 409 for a day), and OncePay&apos;s lease is{" "}
            <strong className="font-semibold text-espresso">{leaseSeconds} s</strong>.
            OncePay&apos;s checkout is sent its after-charge fault, which leaves its key exactly as
            a crash does.
          </p>
        </div>
        <button
          type="button"
          // Pressed again while its runs go on, it would start a second crash run of each design.
          disabled={!ready || batch !== null || idle.length === 0}
          onClick={onCrashAll}
          className="inline-flex items-center gap-2 rounded-xl bg-roast px-4 py-2.5 text-sm font-semibold text-cream shadow-sm hover:bg-espresso disabled:cursor-not-allowed disabled:bg-latte disabled:text-espresso"
          data-testid="crash-all"
          data-done={batch?.done ?? ""}
          data-total={batch?.total ?? ""}
        >
          {batch && <Spinner width={16} height={16} />}
          {batch ? crashButtonLabel(batch) : "Crash every strategy"}
        </button>
        <p role="status" className="sr-only">
          {batch ? crashButtonLabel(batch) : ""}
        </p>
      </div>

      <ol className="mt-5 space-y-3" aria-label="The crash scenario, per strategy">
        {LAB_STRATEGIES.map((strategy) => (
          <CrashRow
            key={strategy}
            strategy={strategy}
            run={crashes(strategy)}
            live={crashing[strategy]}
            disabled={!ready || !enabled(strategy) || crashing[strategy] !== undefined}
            onCrash={() => onCrash(strategy)}
            expirySeconds={
              LAB_STRATEGY_INFO[strategy].inFlightExpiry === "lease"
                ? leaseSeconds
                : LAB_STRATEGY_INFO[strategy].inFlightExpiry === "key-expiry"
                  ? keyExpirySeconds
                  : null
            }
          />
        ))}
      </ol>
    </section>
  );
}

function CrashRow({
  strategy,
  run,
  live,
  disabled,
  onCrash,
  expirySeconds,
}: {
  strategy: LabStrategy;
  run: CrashRun | undefined;
  live: CrashAttempt[] | undefined;
  disabled: boolean;
  onCrash: () => void;
  expirySeconds: number | null;
}) {
  const info = LAB_STRATEGY_INFO[strategy];
  const attempts = live ?? run?.observation?.attempts;
  return (
    <li
      className="grid gap-4 rounded-2xl border border-sand bg-white p-4 sm:p-5 lg:grid-cols-[minmax(0,15rem)_minmax(0,1fr)_minmax(0,19rem)] lg:items-start"
      data-testid={`crash-row-${strategy}`}
      data-storm-id={live ? "" : (run?.report.id ?? "")}
      aria-busy={live !== undefined}
    >
      <div>
        <h3 className="font-display text-lg font-semibold text-espresso">{info.name}</h3>
        <p className="mt-0.5 text-xs text-mocha">
          {expirySeconds === null
            ? "Keeps no in-progress state."
            : `${info.kind === "real" ? "Lease" : "Key expiry"}: ${expirySeconds} s.`}
        </p>
        <button
          type="button"
          onClick={onCrash}
          disabled={disabled}
          className="mt-3 inline-flex items-center gap-2 rounded-xl border border-roast bg-white px-3.5 py-2 text-sm font-semibold text-roast hover:bg-oat disabled:cursor-not-allowed disabled:border-latte disabled:text-mocha"
          data-testid={`crash-run-${strategy}`}
        >
          {live ? <Spinner width={16} height={16} /> : null}
          {live ? "Retrying…" : "Crash after the charge"}
        </button>
      </div>

      <div className="min-w-0">
        {attempts && attempts.length > 0 ? (
          <Retries attempts={attempts} running={live !== undefined} />
        ) : (
          <p className="text-sm text-mocha">
            {live ? "Sending the request that crashes…" : "Not run yet."}
          </p>
        )}
        {run && !live && <Books run={run} />}
      </div>

      {run && !live ? <CrashVerdict run={run} /> : <div className="hidden lg:block" />}
    </li>
  );
}

function Retries({ attempts, running }: { attempts: CrashAttempt[]; running: boolean }) {
  const summary = summarizeRetries(attempts);
  const conflicts = attempts.filter((attempt) => attempt.label === "409").length;
  return (
    <p
      className="text-sm text-espresso"
      data-testid="crash-retries"
      data-first={attempts[0]!.label}
      data-at-once={summary.atOnce ?? ""}
      data-final={summary.final ?? ""}
      data-in-progress-ms={summary.inProgressMs ?? ""}
    >
      First request: <strong className="font-semibold">{attempts[0]!.label}</strong>
      {summary.atOnce && (
        <>
          ; the retry at once: <strong className="font-semibold">{summary.atOnce}</strong>
        </>
      )}
      {conflicts > 0 && summary.inProgressMs !== null && (
        <>
          ; 409 for{" "}
          <strong className="font-semibold tabular-nums">
            {(summary.inProgressMs / 1000).toFixed(1)} s
          </strong>{" "}
          ({conflicts} retries)
        </>
      )}
      {summary.final ? (
        attempts.length > 2 ? (
          <>
            , then <strong className="font-semibold">{summary.final}</strong>.
          </>
        ) : (
          "."
        )
      ) : running ? (
        "…"
      ) : (
        ", and no final answer before the scenario gave up."
      )}
    </p>
  );
}

function Books({ run }: { run: CrashRun }) {
  const { report } = run;
  if (!report.provider.available)
    return <p className="mt-2 text-xs text-berry">{report.provider.detail}</p>;
  const agree = report.orders === report.provider.charges;
  return (
    <dl className="mt-3 grid grid-cols-3 gap-2 text-sm">
      <div className="rounded-xl bg-cream px-3 py-2">
        <dt className="text-[0.6875rem] font-medium uppercase tracking-wide text-mocha">Orders</dt>
        <dd className="text-lg font-semibold tabular-nums" data-testid="crash-orders">
          {report.orders}
        </dd>
      </div>
      <div
        className={`rounded-xl px-3 py-2 ${report.provider.charges > 1 ? "bg-berry-soft" : "bg-cream"}`}
      >
        <dt className="text-[0.6875rem] font-medium uppercase tracking-wide text-mocha">Charges</dt>
        <dd
          className={`text-lg font-semibold tabular-nums ${report.provider.charges > 1 ? "text-berry" : ""}`}
          data-testid="crash-charges"
        >
          {report.provider.charges}
          <span className="ml-1 text-xs font-normal text-mocha">
            {formatMoney(report.provider.amountCharged, report.currency)}
          </span>
        </dd>
      </div>
      <div className={`rounded-xl px-3 py-2 ${agree ? "bg-sage-soft" : "bg-berry-soft"}`}>
        <dt className="text-[0.6875rem] font-medium uppercase tracking-wide text-mocha">
          Books agree
        </dt>
        <dd
          className={`text-lg font-semibold ${agree ? "text-sage" : "text-berry"}`}
          data-testid="crash-books"
          data-agree={agree}
        >
          {agree ? "Yes" : "No"}
        </dd>
      </div>
    </dl>
  );
}

function CrashVerdict({ run }: { run: CrashRun }) {
  const { report, observation } = run;
  if (!report.provider.available)
    return (
      <p className="text-sm text-mocha">
        The charges could not be counted, so there is no verdict.
      </p>
    );
  const summary = observation ? summarizeRetries(observation.attempts) : null;
  const verdict = explainCrash({
    strategy: report.strategy,
    orders: report.orders,
    charges: report.provider.charges,
    inProgressSeconds: summary?.inProgressMs == null ? null : summary.inProgressMs / 1000,
    final: summary?.final ?? null,
  });
  const held = verdict.outcome === "held";
  const Icon = held ? CheckIcon : AlertIcon;
  return (
    <p
      className={`flex gap-2 rounded-xl p-3 text-sm leading-relaxed text-espresso ${held ? "bg-sage-soft" : "bg-berry-soft"}`}
      data-testid="crash-verdict"
      data-outcome={verdict.outcome}
    >
      <Icon
        width={18}
        height={18}
        className={`mt-0.5 shrink-0 ${held ? "text-sage" : "text-berry"}`}
      />
      <span>{verdict.sentence}</span>
    </p>
  );
}
