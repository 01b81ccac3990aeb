"use client";

import { compareDesigns } from "@/lib/lab/comparison";
import { raceButtonLabel } from "@/lib/lab/race";
import { isLabOnly, LAB_STRATEGIES, type LabStrategy } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import { CrashScenario } from "./CrashScenario";
import { DesignComparison } from "./DesignComparison";
import { StormHistory } from "./StormHistory";
import { StrategyRow } from "./StrategyRow";
import { useStrategyLab } from "./useStrategyLab";
import { WebhookStorms } from "./WebhookStorms";

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
  const busy =
    lab.running !== null ||
    lab.race !== null ||
    lab.crashBatch !== null ||
    Object.keys(lab.crashing).length > 0;

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
          {lab.race ? raceButtonLabel(lab.race) : "Race all seven"}
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
        batch={lab.crashBatch}
        ready={lab.ready && lab.race === null}
        enabled={available}
        onCrash={(strategy) => void lab.crash(strategy)}
        onCrashAll={() => void lab.crashAll()}
        keyExpirySeconds={keyExpirySeconds}
        leaseSeconds={leaseSeconds}
      />

      <WebhookStorms sizes={sizes} enabled={brokenStrategiesEnabled} />

      <StormHistory reports={lab.history} />
    </div>
  );
}
