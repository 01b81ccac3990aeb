"use client";

import { compareDesigns } from "@/lib/lab/comparison";
import { explainStorm } from "@/lib/lab/explain";
import { protocolName } from "@/lib/client/lab-storm";
import {
  isLabOnly,
  LAB_STRATEGIES,
  LAB_STRATEGY_INFO,
  type LabStrategy,
  type StrategyKind,
} from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import { CrashScenario } from "./CrashScenario";
import { DesignComparison } from "./DesignComparison";
import { StormHistory } from "./StormHistory";
import { useStrategyLab, type LabRun } from "./useStrategyLab";

interface StrategyLabProps {
  /** The storm sizes this server allows. */
  sizes: readonly number[];
  /** Whether the server runs the lab's own strategies (DEMO_FAULTS=on); the real one always runs. */
  brokenStrategiesEnabled: boolean;
  /** How long the copied designs keep a key (LAB_KEY_EXPIRY_SECONDS), and OncePay's lease. */
  keyExpirySeconds: number;
  leaseSeconds: number;
}

/**
 * The strategy lab: one storm of N identical checkout requests at a time,
 * fired at one strategy, and a row per strategy with what its latest storm
 * did, counted by the server: orders in our tables, charges at the provider.
 */
export function StrategyLab({
  sizes,
  brokenStrategiesEnabled,
  keyExpirySeconds,
  leaseSeconds,
}: StrategyLabProps) {
  const available = (strategy: LabStrategy) => !isLabOnly(strategy) || brokenStrategiesEnabled;
  const lab = useStrategyLab(sizes, available);
  const busy = lab.running !== null || lab.race !== null || Object.keys(lab.crashing).length > 0;

  return (
    <div className="mx-auto max-w-7xl px-4 pb-16 pt-6 sm:px-6 lg:px-8">
      <section aria-labelledby="lab-heading" className="max-w-3xl">
        <p className="inline-flex items-center gap-1.5 rounded-full bg-clay-soft px-2.5 py-0.5 text-xs font-semibold uppercase tracking-[0.14em] text-clay">
          <RepeatIcon width={14} height={14} /> Strategy lab
        </p>
        <h1
          id="lab-heading"
          className="mt-2 font-display text-3xl font-semibold text-espresso sm:text-4xl"
        >
          Fire one purchase many times at once
        </h1>
        <p className="mt-3 text-base leading-relaxed text-mocha">
          Each storm sends the same checkout (one Stoneware Mug, {formatMoney(1800)}, one cart and
          one Idempotency-Key) many times together, to one of seven server-side strategies: three
          broken on purpose, three designs the common guides teach, and OncePay&apos;s. They share
          the pricing, the payment provider and the order writing; they differ only in how they use
          the key. The counts come from the server: orders from our tables, charges from the payment
          provider&apos;s own records.
        </p>
      </section>

      <div className="mt-6 flex flex-wrap items-end gap-x-8 gap-y-4 rounded-2xl border border-sand bg-white p-4 sm:p-5">
        <fieldset disabled={lab.running !== null || lab.race !== null}>
          <legend className="text-sm font-medium text-espresso">Requests per storm</legend>
          <div className="mt-2 flex flex-wrap gap-2">
            {sizes.map((size) => (
              <label
                key={size}
                className={`cursor-pointer rounded-full px-4 py-1.5 text-sm font-semibold tabular-nums ring-1 transition-colors has-[:focus-visible]:outline has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-clay ${
                  lab.size === size
                    ? "bg-roast text-cream ring-roast"
                    : "bg-white text-espresso ring-sand hover:bg-oat"
                }`}
              >
                <input
                  type="radio"
                  name="storm-size"
                  value={size}
                  checked={lab.size === size}
                  onChange={() => lab.setSize(size)}
                  className="sr-only"
                />
                {size}
              </label>
            ))}
          </div>
        </fieldset>
        <button
          type="button"
          onClick={() => void lab.raceAll()}
          disabled={!lab.ready || busy}
          className="inline-flex items-center justify-center gap-2 rounded-xl bg-roast px-4 py-2.5 text-sm font-semibold text-cream shadow-sm transition-colors hover:bg-espresso active:translate-y-px disabled:cursor-not-allowed disabled:bg-latte disabled:text-espresso disabled:shadow-none"
          data-testid="lab-race-all"
        >
          {lab.race ? <Spinner width={16} height={16} /> : <RepeatIcon width={16} height={16} />}
          {lab.race ? "Racing…" : "Race all seven"}
        </button>
        <p className="max-w-xl text-xs leading-relaxed text-mocha">
          All requests are started together with <code className="font-mono">fetch</code>. Over
          HTTP/1.1 the browser opens at most 6 connections to one server, so the rest of a storm
          waits in the browser&apos;s queue; over HTTP/2 (the HTTPS address of{" "}
          <code className="font-mono">npm run cluster</code>) all of it is in flight at once.
          &ldquo;On the wire at once&rdquo; is what this browser measured.
        </p>
      </div>

      {!brokenStrategiesEnabled && (
        <p
          className="mt-4 flex gap-2 rounded-xl bg-berry-soft px-3.5 py-2.5 text-sm text-espresso"
          data-testid="lab-broken-disabled"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0 text-berry" />
          <span>
            <strong className="font-semibold">
              The lab&apos;s own strategies are switched off here.
            </strong>{" "}
            This server runs without <code className="font-mono text-xs">DEMO_FAULTS=on</code>, so
            they answer 403; OncePay&apos;s own still runs.
          </span>
        </p>
      )}
      {lab.error && (
        <p
          role="alert"
          className="mt-4 flex gap-2 rounded-xl bg-berry-soft px-3.5 py-2.5 text-sm text-espresso"
          data-testid="lab-error"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0 text-berry" />
          <span>The storm could not run: {lab.error}</span>
        </p>
      )}

      <DesignComparison
        rows={compareDesigns({
          latestStorm: (strategy) => lab.latest(strategy)?.report,
          latestCrash: (strategy) => lab.latestCrash(strategy)?.report,
          available,
        })}
        race={lab.race}
        raced={lab.raced}
        storming={lab.running}
        crashing={(strategy) => lab.crashing[strategy] !== undefined}
      />

      <ol className="mt-6 space-y-4" aria-label="Strategies, with their latest storm">
        {LAB_STRATEGIES.map((strategy) => (
          <StrategyRow
            key={strategy}
            strategy={strategy}
            size={lab.size}
            run={lab.latest(strategy)}
            running={lab.running === strategy}
            disabled={
              !lab.ready || lab.running !== null || lab.race !== null || !available(strategy)
            }
            onRun={() => void lab.run(strategy)}
          />
        ))}
      </ol>

      <CrashScenario
        crashes={lab.latestCrash}
        crashing={lab.crashing}
        ready={lab.ready && lab.race === null}
        enabled={available}
        onCrash={(strategy) => void lab.crash(strategy)}
        keyExpirySeconds={keyExpirySeconds}
        leaseSeconds={leaseSeconds}
      />

      <StormHistory reports={[...lab.runs, ...lab.crashes].map((run) => run.report)} />
    </div>
  );
}

function StrategyRow({
  strategy,
  size,
  run,
  running,
  disabled,
  onRun,
}: {
  strategy: LabStrategy;
  size: number;
  run: LabRun | undefined;
  running: boolean;
  disabled: boolean;
  onRun: () => void;
}) {
  const info = LAB_STRATEGY_INFO[strategy];
  return (
    <li
      className="grid gap-5 rounded-2xl border border-sand bg-white p-5 shadow-[0_10px_30px_-22px_rgba(43,29,22,0.45)] lg:grid-cols-[minmax(0,17rem)_minmax(0,1fr)_minmax(0,20rem)] lg:items-start"
      data-testid={`lab-row-${strategy}`}
      data-storm-id={run?.report.id ?? ""}
      aria-busy={running}
    >
      <div>
        <div className="flex flex-wrap items-center gap-2">
          <h2 className="font-display text-xl font-semibold text-espresso">{info.name}</h2>
          <span
            className={`rounded-full px-2 py-0.5 text-[0.6875rem] font-semibold uppercase tracking-wide ${KIND_BADGE[info.kind].tone}`}
          >
            {KIND_BADGE[info.kind].label}
          </span>
        </div>
        <p className="mt-1.5 text-sm leading-relaxed text-mocha">{info.how}</p>
        <button
          type="button"
          onClick={onRun}
          disabled={disabled}
          className={`mt-4 inline-flex w-full items-center justify-center gap-2 rounded-xl px-4 py-2.5 text-sm font-semibold text-cream shadow-sm transition-colors active:translate-y-px disabled:cursor-not-allowed disabled:bg-latte disabled:text-espresso disabled:shadow-none sm:w-auto ${
            info.kind === "broken" ? "bg-berry hover:bg-espresso" : "bg-roast hover:bg-espresso"
          }`}
          data-testid={`lab-run-${strategy}`}
        >
          {running ? <Spinner width={16} height={16} /> : <RepeatIcon width={16} height={16} />}
          {running ? `Firing ${size} requests…` : `Fire ${size} requests`}
        </button>
      </div>

      {run ? (
        <StormNumbers run={run} />
      ) : (
        <p className="self-center text-sm text-mocha">
          {running ? "Storm on its way…" : "No storm yet."}
        </p>
      )}
      {run ? <Verdict run={run} /> : <div className="hidden lg:block" />}
    </li>
  );
}

const KIND_BADGE: Record<StrategyKind, { label: string; tone: string }> = {
  broken: { label: "Broken on purpose", tone: "bg-berry-soft text-berry" },
  copied: { label: "A common design", tone: "bg-honey/40 text-roast" },
  real: { label: "The real one", tone: "bg-sage-soft text-sage" },
};

function StormNumbers({ run }: { run: LabRun }) {
  const { report, observation } = run;
  const provider = report.provider;
  const charges = provider.available ? provider.charges : null;
  const tooMany = (n: number | null) => n !== null && n > 1;
  return (
    <div className="min-w-0">
      <p className="text-sm text-espresso">
        <span className="font-semibold tabular-nums" data-testid="lab-sent">
          {report.size}
        </span>{" "}
        requests sent
        {observation?.peakInFlight != null && (
          <>
            ,{" "}
            <span className="font-semibold tabular-nums" data-testid="lab-peak">
              {observation.peakInFlight}
            </span>{" "}
            on the wire at once
            {observation.protocol && (
              <span data-testid="lab-protocol"> over {protocolName(observation.protocol)}</span>
            )}
          </>
        )}
      </p>
      <ul
        className="mt-2 flex flex-wrap gap-1.5"
        aria-label="HTTP statuses the browser saw"
        data-testid="lab-statuses"
      >
        {observation ? (
          observation.statuses.map(({ label, count }) => (
            <li
              key={label}
              className={`rounded-full px-2.5 py-0.5 text-xs font-semibold tabular-nums ${statusTone(label)}`}
              data-status={label}
              data-count={count}
            >
              {label} × {count}
            </li>
          ))
        ) : (
          <li className="text-xs text-mocha">Statuses were seen by another page load.</li>
        )}
      </ul>
      <dl className="mt-3 grid grid-cols-3 gap-2">
        <Stat
          label="Orders written"
          value={String(report.orders)}
          alarm={tooMany(report.orders)}
          testId="lab-orders"
        />
        <Stat
          label="Charges at the provider"
          value={charges === null ? "?" : String(charges)}
          alarm={tooMany(charges)}
          testId="lab-charges"
        />
        <Stat
          label="Money taken"
          value={provider.available ? formatMoney(provider.amountCharged, report.currency) : "?"}
          alarm={tooMany(charges)}
          testId="lab-money"
        />
      </dl>
      {!provider.available && <p className="mt-2 text-xs text-berry">{provider.detail}</p>}
    </div>
  );
}

function Stat({
  label,
  value,
  alarm,
  testId,
}: {
  label: string;
  value: string;
  alarm: boolean;
  testId: string;
}) {
  return (
    <div className={`rounded-xl px-3 py-2 ${alarm ? "bg-berry-soft" : "bg-cream"}`}>
      <dt className="text-[0.6875rem] font-medium uppercase leading-tight tracking-wide text-mocha">
        {label}
      </dt>
      <dd
        className={`mt-0.5 text-xl font-semibold tabular-nums ${alarm ? "text-berry" : "text-espresso"}`}
        data-testid={testId}
      >
        {value}
      </dd>
    </div>
  );
}

function Verdict({ run }: { run: LabRun }) {
  const { report } = run;
  if (!report.provider.available)
    return (
      <p className="text-sm text-mocha">
        The charges could not be counted, so there is no verdict.
      </p>
    );
  const verdict = explainStorm({
    strategy: report.strategy,
    size: report.size,
    orders: report.orders,
    charges: report.provider.charges,
  });
  const broke = verdict.outcome === "broke";
  const Icon = broke ? AlertIcon : verdict.outcome === "held" ? CheckIcon : RepeatIcon;
  return (
    <p
      className={`flex gap-2 rounded-xl p-3 text-sm leading-relaxed ${broke ? "bg-berry-soft text-espresso" : verdict.outcome === "held" ? "bg-sage-soft text-espresso" : "bg-oat text-espresso"}`}
      data-testid="lab-verdict"
      data-outcome={verdict.outcome}
    >
      <Icon
        width={18}
        height={18}
        className={`mt-0.5 shrink-0 ${broke ? "text-berry" : verdict.outcome === "held" ? "text-sage" : "text-clay"}`}
      />
      <span>
        <strong className="font-semibold">
          {broke ? "Broke. " : verdict.outcome === "held" ? "Held. " : "Got lucky. "}
        </strong>
        {verdict.sentence}
      </span>
    </p>
  );
}

function statusTone(label: string): string {
  if (label.startsWith("2"))
    return label.includes("replayed") ? "bg-clay-soft text-clay" : "bg-sage-soft text-sage";
  if (label === "409") return "bg-honey/40 text-roast";
  return "bg-berry-soft text-berry";
}
