"use client";

import { useEffect, useState } from "react";
import {
  latestWebhookStorms,
  runWebhookStorm,
  type WebhookStormRun,
  type WebhookStormReport,
} from "@/lib/client/lab-webhook-storm";
import type { StatusCount } from "@/lib/client/lab-storm";
import {
  LAB_WEBHOOK_DESIGN_INFO,
  LAB_WEBHOOK_DESIGNS,
  stormWaves,
  type LabWebhookDesign,
} from "@/lib/lab/webhook-designs";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";

interface WebhookStormsProps {
  /** The storm sizes this server allows: the success is delivered this many times at once. */
  sizes: readonly number[];
  /** Whether the server runs the lab's webhook handlers (DEMO_FAULTS=on). */
  enabled: boolean;
}

interface DesignState {
  report: WebhookStormReport;
  /** What the browser saw answered; only for a storm run on this page. */
  answers: StatusCount[] | null;
}

const browserFetch = (input: string, init: RequestInit) => fetch(input, init);

/**
 * The lab's webhook storm: one pending order, its success event delivered
 * many times at once, then late copies of it mixed with an older failure,
 * at OncePay's handler or one without an event record. The counts are the
 * server's: shipments of the order, and its status.
 */
export function WebhookStorms({ sizes, enabled }: WebhookStormsProps) {
  const [size, setSize] = useState(sizes.includes(50) ? 50 : (sizes.at(-1) ?? 10));
  const [latest, setLatest] = useState<Partial<Record<LabWebhookDesign, DesignState>>>({});
  const [running, setRunning] = useState<{ design: LabWebhookDesign; wave: string } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!enabled) return;
    let cancelled = false;
    void latestWebhookStorms(browserFetch)
      .then((reports) => {
        if (cancelled) return;
        const found: Partial<Record<LabWebhookDesign, DesignState>> = {};
        for (const report of reports) found[report.design] ??= { report, answers: null };
        setLatest((current) => ({ ...found, ...current }));
      })
      .catch(() => {
        // The first storm shows its own result; an empty start is fine.
      });
    return () => {
      cancelled = true;
    };
  }, [enabled]);

  async function run(design: LabWebhookDesign) {
    setError(null);
    setRunning({ design, wave: "Starting…" });
    try {
      const result: WebhookStormRun = await runWebhookStorm(
        browserFetch,
        design,
        size,
        (wave, waves) => setRunning({ design, wave: `Wave ${wave} of ${waves}…` }),
      );
      setLatest((current) => ({ ...current, [design]: result }));
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setRunning(null);
    }
  }

  const [first, late] = stormWaves(size);
  return (
    <section
      aria-labelledby="webhook-storms-heading"
      className="mt-12"
      data-testid="webhook-storms"
    >
      <h2 id="webhook-storms-heading" className="font-display text-2xl font-semibold text-espresso">
        Webhooks: one event, delivered many times and out of order
      </h2>
      <p className="mt-2 max-w-3xl text-sm leading-relaxed text-mocha">
        A provider delivers each event at least once: it retries, duplicates and reorders. Each
        storm makes one order waiting on 3-D Secure, then sends its success event {first?.succeeded}{" "}
        times at once and, once those are answered, {late?.succeeded} late copies of it mixed with{" "}
        {late?.failed} copies of an older failure of the same payment, all signed as the provider
        signs them. One order must ship once and end paid.
      </p>

      {!enabled && (
        <p
          className="mt-4 flex gap-2 rounded-xl bg-berry-soft px-3.5 py-2.5 text-sm text-espresso"
          data-testid="webhook-storms-disabled"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0 text-berry" />
          <span>
            The webhook storms need <code className="font-mono text-xs">DEMO_FAULTS=on</code>: this
            server answers them 403.
          </span>
        </p>
      )}

      <fieldset className="mt-4" disabled={!enabled || running !== null}>
        <legend className="text-sm font-medium text-espresso">Copies of the success at once</legend>
        <div className="mt-2 flex flex-wrap gap-2">
          {sizes.map((option) => (
            <label
              key={option}
              className={`cursor-pointer rounded-full px-4 py-1.5 text-sm font-semibold tabular-nums ring-1 transition-colors has-[:focus-visible]:outline has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-clay ${
                size === option
                  ? "bg-roast text-cream ring-roast"
                  : "bg-white text-espresso ring-sand hover:bg-oat"
              }`}
            >
              <input
                type="radio"
                name="webhook-storm-size"
                value={option}
                checked={size === option}
                onChange={() => setSize(option)}
                // Named apart from the checkout storms' sizes above, which are bare numbers too.
                aria-label={`${option} copies`}
                className="sr-only"
              />
              {option}
            </label>
          ))}
        </div>
      </fieldset>

      {error && (
        <p
          role="alert"
          className="mt-4 flex gap-2 rounded-xl bg-berry-soft px-3.5 py-2.5 text-sm text-espresso"
          data-testid="webhook-storm-error"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0 text-berry" />
          <span>The storm could not run: {error}</span>
        </p>
      )}

      <ol
        className="mt-4 grid gap-4 lg:grid-cols-2"
        aria-label="Webhook handlers, with their latest storm"
      >
        {LAB_WEBHOOK_DESIGNS.map((design) => (
          <DesignCard
            key={design}
            design={design}
            state={latest[design]}
            progress={running?.design === design ? running.wave : null}
            disabled={!enabled || running !== null}
            onRun={() => void run(design)}
          />
        ))}
      </ol>
    </section>
  );
}

const VERDICT = {
  broke: { word: "Broke", tone: "bg-berry text-cream", Icon: AlertIcon },
  lucky: { word: "Lucky", tone: "bg-honey/40 text-roast", Icon: RepeatIcon },
  held: { word: "Held", tone: "bg-sage-soft text-sage", Icon: CheckIcon },
} as const;

function DesignCard({
  design,
  state,
  progress,
  disabled,
  onRun,
}: {
  design: LabWebhookDesign;
  state: DesignState | undefined;
  progress: string | null;
  disabled: boolean;
  onRun: () => void;
}) {
  const info = LAB_WEBHOOK_DESIGN_INFO[design];
  const report = state?.report;
  const verdict = report?.outcome ? VERDICT[report.outcome] : null;
  return (
    <li
      className={`rounded-2xl border bg-white p-4 sm:p-5 ${report?.outcome === "broke" ? "border-berry/50" : "border-sand"}`}
      data-testid={`webhook-design-${design}`}
      data-outcome={report?.outcome ?? ""}
      data-storm-id={report?.id ?? ""}
      aria-busy={progress !== null}
    >
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <h3 className="font-semibold text-espresso">{info.name}</h3>
          <p
            className={`mt-0.5 text-xs font-semibold uppercase tracking-[0.12em] ${info.kind === "broken" ? "text-berry" : "text-sage"}`}
          >
            {info.kind === "broken" ? "Broken on purpose" : "The shop's own handler"}
          </p>
        </div>
        <button
          type="button"
          onClick={onRun}
          disabled={disabled}
          className="inline-flex items-center gap-2 rounded-xl bg-roast px-4 py-2 text-sm font-semibold text-cream shadow-sm transition-colors hover:bg-espresso disabled:cursor-not-allowed disabled:bg-latte disabled:text-espresso disabled:shadow-none"
        >
          {progress ? <Spinner width={16} height={16} /> : <RepeatIcon width={16} height={16} />}
          {progress ?? "Run the storm"}
        </button>
      </div>
      <p className="mt-2 text-sm leading-relaxed text-mocha">{info.how}</p>

      {report && verdict && (
        <div className="mt-4 rounded-xl bg-cream p-3.5 text-sm">
          <p className="flex flex-wrap items-center gap-2">
            <span
              className={`inline-flex items-center gap-1 rounded-full px-2 py-0.5 text-xs font-semibold ${verdict.tone}`}
              data-testid="webhook-verdict"
            >
              <verdict.Icon width={12} height={12} aria-hidden="true" /> {verdict.word}
            </span>
            <span className="text-espresso">
              <strong
                className={`font-semibold tabular-nums ${report.shipments === 1 ? "text-espresso" : "text-berry"}`}
                data-testid="webhook-shipments"
              >
                {report.shipments}
              </strong>{" "}
              {report.shipments === 1 ? "shipment" : "shipments"}, order{" "}
              <strong
                className={`font-semibold ${report.status === "paid" ? "text-espresso" : "text-berry"}`}
                data-testid="webhook-order-status"
              >
                {report.status}
              </strong>
              , of {report.deliveries} deliveries
            </span>
          </p>
          <p className="mt-2 text-mocha" data-testid="webhook-sentence">
            {report.sentence}
          </p>
          {state?.answers && (
            <p className="mt-2 text-xs text-mocha" data-testid="webhook-answers">
              Answered:{" "}
              {state.answers.map((answer) => `${answer.label} × ${answer.count}`).join(", ")}
            </p>
          )}
        </div>
      )}
    </li>
  );
}
